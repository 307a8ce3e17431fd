package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// listed is what `retrace sessions` prints for db.
func listed(t *testing.T, bin, db string) string {
	t.Helper()
	out, err := testCommand(t, bin, "sessions", "--db", db).CombinedOutput()
	if err != nil {
		t.Fatalf("retrace sessions: %v\n%s", err, out)
	}
	return string(out)
}

// Plain `retrace` writes no session until the first message: while it
// waits, another process lists none, and quitting before typing leaves
// none behind and no hint to resume one.
func TestEndToEndQuitBeforeTypingLeavesNoSession(t *testing.T) {
	needTmux(t)
	dir := t.TempDir()
	bin := builtBinary(t)
	db := filepath.Join(dir, "retrace.db")
	term := newTmux(t, fmt.Sprintf("%s %s --demo --db %s; echo EXIT=$?; sleep 30", terminalEnv(dir), bin, db))
	term.waitFor(t, "Message retrace")
	if out := listed(t, bin, db); !strings.Contains(out, "no sessions") {
		t.Fatalf("before its first message the new session is listed:\n%s", out)
	}
	term.send(t, "C-c")
	term.waitFor(t, "EXIT=0")
	if s := term.screen(t); strings.Contains(s, "resumes it") {
		t.Fatalf("quitting before typing offers to resume a session:\n%s", s)
	}
	if out := listed(t, bin, db); !strings.Contains(out, "no sessions") {
		t.Fatalf("quitting before typing left a session:\n%s", out)
	}
}

// Two retrace processes on one session: the second opens it read-only
// and follows the first's answers; when the first quits, the second asks
// to take the session over, and y makes it the writer.
func TestEndToEndReadOnlyFollowsAndTakesOver(t *testing.T) {
	needTmux(t)
	dir := t.TempDir()
	bin := builtBinary(t)
	db := filepath.Join(dir, "retrace.db")
	env := terminalEnv(dir)
	writer := newTmux(t, fmt.Sprintf("%s %s --demo --db %s; echo EXIT=$?; sleep 30", env, bin, db))
	writer.waitFor(t, "Message retrace")
	writer.send(t, "hello", "Enter")
	writer.waitFor(t, "Hello! I am retrace's demo model")
	writer.waitFor(t, "^S sessions")
	id := regexp.MustCompile(`(?m)^([0-9a-f]{16}) `).FindStringSubmatch(listed(t, bin, db))
	if id == nil {
		t.Fatalf("no session listed:\n%s", listed(t, bin, db))
	}

	reader := newTmux(t, fmt.Sprintf("%s %s --db %s -r %s; echo EXIT=$?; sleep 30", env, bin, db, id[1]))
	reader.waitFor(t, "read-only")
	reader.waitFor(t, "v2/2")
	writer.send(t, "hi there", "Enter")
	writer.waitFor(t, "v4/4")
	reader.waitFor(t, "v4/4")
	if s := reader.screen(t); !strings.Contains(s, "hi there") {
		t.Fatalf("the reader shows the writer's version but not its message:\n%s", s)
	}

	writer.send(t, "C-c")
	writer.waitFor(t, "EXIT=0")
	reader.waitFor(t, "Writer quit: take the session over? (y/n)")
	reader.waitGone(t, "keys typed now answer nothing") // the question takes keys once read
	reader.send(t, "y")
	// The read-only screen shows the resting hint too: what says the
	// takeover happened is read-only going away.
	reader.waitGone(t, "read-only")
	reader.send(t, "hey you", "Enter")
	reader.waitFor(t, "v6/6")
	reader.send(t, "C-c")
	reader.waitFor(t, "EXIT=0")
	out, err := testCommand(t, bin, "show", id[1], "--db", db).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "hey you") {
		t.Fatalf("retrace show after the takeover: %v\n%s", err, out)
	}
}
