package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"retrace/agent/demo"
)

// demoSessionIn is a session of directory a, kept in db by `retrace
// run` against the demo model at url: it read a's README.md and wrote
// a's NOTES.md. It returns the session's id.
func demoSessionIn(t *testing.T, bin, env, db, url, a string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(a, "README.md"), []byte("# a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	shell(t, fmt.Sprintf("%s %s run --db %s --base-url %s --model retrace-demo --workspace %s --yes 'look around this project'", env, bin, db, url, a))
	if _, err := os.Stat(filepath.Join(a, "NOTES.md")); err != nil {
		t.Fatalf("the session wrote no NOTES.md in its workspace: %v", err)
	}
	id := regexp.MustCompile(`(?m)^([0-9a-f]{16}) `).FindStringSubmatch(listed(t, bin, db))
	if id == nil {
		t.Fatalf("no session listed:\n%s", listed(t, bin, db))
	}
	return id[1]
}

// stepBackToV0 restores version 0 in the interface on term and waits
// until the restore says it is done.
func stepBackToV0(t *testing.T, term *tmux) {
	t.Helper()
	term.waitFor(t, "^S sessions")
	term.send(t, "C-t")
	term.waitFor(t, "Viewing v")
	term.send(t, "g")
	term.waitFor(t, "Viewing v0 ")
	term.send(t, "Enter")
	term.waitFor(t, "restored v0 and 1 file")
}

// The interface's doors from a second directory, B, which holds a
// NOTES.md of its own, to a session of A that wrote A's NOTES.md: -r
// and -c --all resume it in A, say so, and a step back removes A's
// NOTES.md and never touches B's; plain -c in B continues no session of
// A's, and says so.
func TestResumeFromAnotherDirectoryInTmux(t *testing.T) {
	needTmux(t)
	dir := t.TempDir()
	bin := builtBinary(t)
	db := filepath.Join(dir, "retrace.db")
	env := terminalEnv(dir)
	srv, err := demo.Start("127.0.0.1:0", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	a, b := filepath.Join(dir, "proj-a"), filepath.Join(dir, "proj-b")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const mine = "B's own notes\n"
	bNotes, aNotes := filepath.Join(b, "NOTES.md"), filepath.Join(a, "NOTES.md")
	if err := os.WriteFile(bNotes, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	untouched := func(door string) {
		t.Helper()
		if got := read(t, bNotes); got != mine {
			t.Fatalf("%s: B's NOTES.md now holds %q", door, got)
		}
	}
	id := demoSessionIn(t, bin, env, db, srv.URL(), a)
	var list []struct{ Head int }
	if err := json.Unmarshal([]byte(shell(t, fmt.Sprintf("%s %s sessions --json --db %s", env, bin, db))), &list); err != nil || len(list) != 1 {
		t.Fatalf("sessions: %v", err)
	}
	tip := list[0].Head
	inB := func(args string) *tmux {
		return newTmux(t, fmt.Sprintf("cd %s && %s %s --db %s %s; echo EXIT=$?; sleep 30", b, env, bin, db, args))
	}

	// -r
	term := inB("-r " + id[:8])
	stepBackToV0(t, term)
	waitForWords(t, term, "works in "+a+", not in the current directory")
	if _, err := os.Stat(aNotes); !os.IsNotExist(err) {
		t.Fatalf("-r: stepping back left A's NOTES.md: %v", err)
	}
	untouched("-r")
	term.send(t, "C-c")
	term.waitFor(t, "EXIT=0")
	term.close()

	// Back to the version the session was at, for the next door to step
	// back from.
	shell(t, fmt.Sprintf("%s %s rollback %s %d --db %s", env, bin, id, tip, db))
	if _, err := os.Stat(aNotes); err != nil {
		t.Fatalf("rolling forward did not bring back A's NOTES.md: %v", err)
	}

	// -c in B: no session of B's to continue.
	term = inB("-c")
	waitForWords(t, term, "no session of this directory to continue")
	term.waitFor(t, "Message retrace")
	if s := term.screen(t); strings.Contains(s, id[:8]) || strings.Contains(s, "proj-a") || !strings.Contains(s, "proj-b") {
		t.Fatalf("-c in B shows A's session, or not B as the workspace:\n%s", s)
	}
	term.send(t, "C-c")
	term.waitFor(t, "EXIT=0")
	term.close()

	// -c --all: the latest of any directory, in its own.
	term = inB("-c --all")
	waitForWords(t, term, "works in "+a+", not in the current directory")
	stepBackToV0(t, term)
	if _, err := os.Stat(aNotes); !os.IsNotExist(err) {
		t.Fatalf("-c --all: stepping back left A's NOTES.md: %v", err)
	}
	untouched("-c --all")
	term.send(t, "C-c")
	term.waitFor(t, "EXIT=0")
}

// shell runs a command line in sh and returns its output; it fails the
// test if the command fails.
func shell(t *testing.T, line string) string {
	t.Helper()
	out, err := exec.Command("sh", "-c", line).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	return string(out)
}

// waitForWords waits for text on term's screen, read as words: a message
// the interface wraps over lines is found all the same.
func waitForWords(t *testing.T, term *tmux, text string) {
	t.Helper()
	want := strings.Join(strings.Fields(text), " ")
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := term.screen(t)
		if strings.Contains(strings.Join(strings.Fields(s), " "), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 20s for %q; the screen:\n%s", text, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
