package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestEndToEndInTmux drives the built binary as a person would, in a real
// terminal (tmux), against the scripted demo model: a task with a plan, a
// tool and an approved write; the timeline, a restore and a fork; quit;
// resume by id; the version tree from the command line.
//
// It needs tmux. .ci/run installs it; without it the test says so and is
// skipped, unless RETRACE_E2E=1 demands it.
func TestEndToEndInTmux(t *testing.T) {
	needTmux(t)
	dir := t.TempDir()
	bin := builtBinary(t)
	db := filepath.Join(dir, "retrace.db")
	env := terminalEnv(dir)
	notes := filepath.Join(dir, "data", "retrace", "demo-workspace", "NOTES.md") // --demo's sample project

	term := newTmux(t, fmt.Sprintf("%s %s --demo --db %s; echo EXIT=$?; sleep 30", env, bin, db))
	term.waitFor(t, "Message retrace")
	term.send(t, "look around this project", "Enter")
	term.waitFor(t, "List the files in the workspace")
	term.waitFor(t, "Approve write_file?")
	term.waitFor(t, "NOTES.md")
	term.send(t, "a")
	term.waitFor(t, "I looked through the workspace")
	term.waitFor(t, "^S sessions") // the status line's hint once the task rests
	screen := term.screen(t)
	for _, want := range []string{"✓ Write NOTES.md", "list all files", "read README.md", "write NOTES.md", "done"} {
		if !strings.Contains(screen, want) {
			t.Fatalf("after the task the screen lacks %q:\n%s", want, screen)
		}
	}

	if _, err := os.Stat(notes); err != nil {
		t.Fatalf("the approved write left no NOTES.md in the workspace: %v", err)
	}

	term.send(t, "C-t")
	term.waitFor(t, "Viewing v")
	for range 8 { // from the head, v21, to v13: the reply that asks to write NOTES.md
		term.send(t, "Left")
	}
	term.waitFor(t, "Viewing v13 ")
	term.send(t, "Enter")
	term.waitFor(t, "restored v13 and 1 file")
	if _, err := os.Stat(notes); !os.IsNotExist(err) {
		t.Fatalf("restoring v13, before the write, left NOTES.md on disk: %v", err)
	}
	term.send(t, "hello", "Enter")
	term.waitFor(t, "Hello! I am retrace's demo model")
	term.waitFor(t, "^S sessions")
	term.send(t, "C-c")
	term.waitFor(t, "EXIT=0")
	id := regexp.MustCompile(`resume it with: \S*retrace -r ([0-9a-f]{8})`).FindStringSubmatch(term.screen(t))
	if id == nil {
		t.Fatalf("the farewell names no session:\n%s", term.screen(t))
	}
	term.close()

	// The session recorded its endpoint: it resumes with the demo model
	// without --demo.
	again := newTmux(t, fmt.Sprintf("%s %s --db %s -r %s; echo EXIT=$?; sleep 30", env, bin, db, id[1]))
	again.waitFor(t, "Hello! I am retrace's demo model")
	again.waitFor(t, "hello")
	again.send(t, "C-c")
	again.waitFor(t, "EXIT=0")

	out, err := exec.Command(bin, "log", id[1], "--db", db).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "2 branches") || !strings.Contains(string(out), "from v13") {
		t.Fatalf("retrace log: %v\n%s", err, out)
	}
}

// tmux is one terminal: a private tmux server, on its own socket, running a
// command in a 120×40 window.
//
// Each terminal gets its own server because a server exits when its last
// session ends: a new-session sent to a shared server that is just then
// shutting down fails with "server exited unexpectedly" (CI saw it between
// the two halves of the test above). A private socket also keeps the test
// away from the user's own tmux server and its configuration.
type tmux struct{ socket string }

// needTmux skips a terminal test where tmux is missing, unless
// RETRACE_E2E=1 demands it.
func needTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("RETRACE_E2E") == "1" {
			t.Fatal("RETRACE_E2E=1 but tmux is not installed (apt-get install tmux)")
		}
		t.Skip("tmux is not installed; .ci/run installs it and runs this test")
	}
}

// terminalEnv is a clean environment for retrace in tmux: its data,
// config and cache in dir.
func terminalEnv(dir string) string {
	return fmt.Sprintf("env -u NO_COLOR TERM=xterm-256color XDG_DATA_HOME=%s XDG_CONFIG_HOME=%s XDG_CACHE_HOME=%s",
		filepath.Join(dir, "data"), filepath.Join(dir, "config"), filepath.Join(dir, "cache"))
}

func newTmux(t *testing.T, command string) *tmux { return newSizedTmux(t, 120, 40, command) }

// newSizedTmux is a terminal width×height cells.
func newSizedTmux(t *testing.T, width, height int, command string) *tmux {
	t.Helper()
	// A Unix socket path is limited to about 100 bytes, so it lives in a
	// short directory of its own rather than under t.TempDir's long name.
	dir, err := os.MkdirTemp("", "rt-tmux")
	if err != nil {
		t.Fatal(err)
	}
	tm := &tmux{socket: filepath.Join(dir, "s")}
	t.Cleanup(func() {
		tm.close()
		os.RemoveAll(dir)
	})
	if out, err := tm.run("-f", "/dev/null", "new-session", "-d", "-x", fmt.Sprint(width), "-y", fmt.Sprint(height), command); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	return tm
}

func (tm *tmux) run(args ...string) ([]byte, error) {
	return exec.Command("tmux", append([]string{"-S", tm.socket}, args...)...).CombinedOutput()
}

func (tm *tmux) close() { _, _ = tm.run("kill-server") }

func (tm *tmux) send(t *testing.T, keys ...string) {
	t.Helper()
	if out, err := tm.run(append([]string{"send-keys"}, keys...)...); err != nil {
		t.Fatalf("send-keys %q: %v\n%s", keys, err, out)
	}
}

func (tm *tmux) screen(t *testing.T) string {
	t.Helper()
	out, err := tm.run("capture-pane", "-p")
	if err != nil {
		t.Fatalf("capture-pane: %v\n%s", err, out)
	}
	return string(out)
}

// waitGone polls the screen until text is no longer on it, with
// waitFor's limit.
func (tm *tmux) waitGone(t *testing.T, text string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := tm.screen(t)
		if !strings.Contains(s, text) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 20s for %q to go; the screen:\n%s", text, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitFor polls the screen until text appears; it gives up after 20 s,
// showing the screen, rather than sleeping a guessed time.
func (tm *tmux) waitFor(t *testing.T, text string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := tm.screen(t)
		if strings.Contains(s, text) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 20s for %q; the screen:\n%s", text, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
