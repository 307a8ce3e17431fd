package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInterfaceInTmux drives what a person does every day with the
// message box and the timeline, in a real terminal at 80×24 and at
// 120×40, against the demo model: a long paste goes in through the
// terminal's bracketed paste and is sent whole, Ctrl+C takes back a draft
// before it quits, and the timeline reads a past version's first message.
func TestInterfaceInTmux(t *testing.T) {
	needTmux(t)
	bin := builtBinary(t)
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			dir := t.TempDir()
			env := terminalEnv(dir)
			db := filepath.Join(dir, "retrace.db")
			term := newSizedTmux(t, size[0], size[1], fmt.Sprintf("%s %s --demo --db %s; echo EXIT=$?; sleep 30", env, bin, db))
			term.waitFor(t, "Message retrace")

			// A log of 3,000 lines, pasted as a terminal pastes it.
			var log strings.Builder
			for i := range 3000 {
				fmt.Fprintf(&log, "10:00:%02d INFO request %d served\n", i%60, i)
			}
			logFile := filepath.Join(dir, "paste.txt")
			if err := os.WriteFile(logFile, []byte(log.String()), 0o600); err != nil {
				t.Fatal(err)
			}
			term.must(t, "load-buffer", logFile)
			term.send(t, "what is in ")
			term.must(t, "paste-buffer", "-p") // -p: bracketed, as a terminal pastes
			term.waitFor(t, "3,000 lines]")
			term.send(t, "Enter")
			term.waitFor(t, "Approve write_file?") // the demo's task writes a notes file
			term.waitFor(t, "a approve · d deny")  // the question takes keys once read
			term.send(t, "a")
			term.waitFor(t, "I looked through the workspace")
			term.waitFor(t, "^S sessions") // the task rests
			list, err := testCommand(t, bin, "sessions", "--json", "--db", db).Output()
			var sessions []struct{ ID string }
			if err != nil || json.Unmarshal(list, &sessions) != nil || len(sessions) != 1 {
				t.Fatalf("retrace sessions: %v\n%s", err, list)
			}
			out, err := testCommand(t, bin, "show", sessions[0].ID, "--json", "--db", db).CombinedOutput()
			if err != nil {
				t.Fatalf("retrace show: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "request 2999 served") || !strings.Contains(string(out), "what is in 10:00:00 INFO request 0 served") {
				t.Fatalf("the message stored is not the paste whole, in place:\n%.600s", out)
			}

			// Ctrl+C takes back a draft of two lines, and then quits.
			term.send(t, "first line", "M-Enter", "second line")
			term.waitFor(t, "second line")
			term.send(t, "C-c")
			term.waitFor(t, "draft cleared")
			if s := term.screen(t); strings.Contains(s, "EXIT=") || strings.Contains(s, "second line") {
				t.Fatalf("the first Ctrl+C quit or left the draft:\n%s", s)
			}

			// The timeline reads the first message of a version whole.
			term.send(t, "C-t")
			term.waitFor(t, "Viewing v")
			for range 30 {
				term.send(t, "PPage")
			}
			term.waitFor(t, "what is in 10:00:00 INFO request 0 served")
			term.send(t, "Escape")
			// A key sent right after Esc would read as Alt and that key.
			term.waitFor(t, "^S sessions")
			term.send(t, "C-c")
			term.waitFor(t, "EXIT=0")
		})
	}
}
