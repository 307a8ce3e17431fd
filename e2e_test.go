package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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
	term.waitFor(t, "a approve · d deny") // the question takes keys once read
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

	out, err := testCommand(t, bin, "log", id[1], "--db", db).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "2 branches") || !strings.Contains(string(out), "from v13") {
		t.Fatalf("retrace log: %v\n%s", err, out)
	}
}
