package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tmux is one terminal: a private tmux server, on its own socket, running a
// command in a window of a given size.
//
// Each terminal gets its own server because a server exits when its last
// session ends: a new-session sent to a shared server that is just then
// shutting down fails with "server exited unexpectedly" (CI saw it between
// the two halves of TestEndToEndInTmux). A private socket also keeps the
// test away from the user's own tmux server and its configuration.
type tmux struct {
	tb     testing.TB
	socket string
}

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

// newSizedTmux is a terminal width×height cells. The server and what runs
// in it end with the test, and with the test binary when that dies
// before its cleanups run (see watchTmux).
func newSizedTmux(t *testing.T, width, height int, command string) *tmux {
	t.Helper()
	// A Unix socket path is limited to about 100 bytes, so it lives in a
	// short directory of its own rather than under t.TempDir's long name.
	// Its name is what .ci/run looks for when it checks that no test
	// left a server behind.
	dir, err := os.MkdirTemp("", "rt-tmux")
	if err != nil {
		t.Fatal(err)
	}
	tm := &tmux{tb: t, socket: filepath.Join(dir, "s")}
	t.Cleanup(func() {
		tm.close()
		os.RemoveAll(dir)
	})
	if out, err := tm.run("-f", "/dev/null", "new-session", "-d", "-x", fmt.Sprint(width), "-y", fmt.Sprint(height), command); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	watchTmux(t, tm.socket)
	return tm
}

// tmuxWatchdog ends a tmux server ($1, its socket) and everything in its
// panes once the test process ($2) is gone, and removes the socket's
// directory. The server is a daemon: no parent-death signal reaches it,
// and a test binary that is killed or times out runs no cleanup. The
// watchdog also ends when the socket does (the test closed the terminal
// itself).
const tmuxWatchdog = `while kill -0 "$2" 2>/dev/null && [ -S "$1" ]; do sleep 1; done
panes=$(tmux -S "$1" list-panes -a -F '#{pane_pid}' 2>/dev/null)
tmux -S "$1" kill-server 2>/dev/null
for p in $panes; do kill -KILL -- "-$p" 2>/dev/null; done
rm -rf -- "${1%/*}"
exit 0`

// watchTmux starts tmuxWatchdog for the server on socket, in a session of
// its own so that nothing aimed at the test's process group ends it.
func watchTmux(t *testing.T, socket string) {
	t.Helper()
	w := exec.Command("sh", "-c", tmuxWatchdog, "tmux-watchdog", socket, strconv.Itoa(os.Getpid()))
	w.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := w.Start(); err != nil {
		t.Fatalf("tmux watchdog: %v", err)
	}
	// Reaped whenever it ends, so that it leaves no zombie behind.
	go func() { _ = w.Wait() }()
}

func (tm *tmux) run(args ...string) ([]byte, error) {
	return testCommand(tm.tb, "tmux", append([]string{"-S", tm.socket}, args...)...).CombinedOutput()
}

// must runs a tmux command that has to work.
func (tm *tmux) must(t *testing.T, args ...string) {
	t.Helper()
	if out, err := tm.run(args...); err != nil {
		t.Fatalf("tmux %q: %v\n%s", args, err, out)
	}
}

// panes are the process ids of the commands in the terminal's panes.
// Each leads a session and a process group of its own, which holds
// what it runs in the foreground.
func (tm *tmux) panes() []int {
	out, _ := tm.run("list-panes", "-a", "-F", "#{pane_pid}")
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids
}

// close ends the server, and then for certain what ran in its panes: a
// program that outlives its hang-up must not outlive the test.
func (tm *tmux) close() {
	panes := tm.panes()
	_, _ = tm.run("kill-server")
	for _, pid := range panes {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

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
