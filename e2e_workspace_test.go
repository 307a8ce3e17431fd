package main

import (
	"fmt"
	"os"
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

// twoDirsInTmux is a database in dir holding a session of dir/proj-a,
// run against the demo model, that wrote proj-a's NOTES.md, and a second
// directory, dir/proj-b, which holds a NOTES.md of its own; inB starts
// the interface in proj-b with args.
type twoDirsInTmux struct {
	bin, env, db, id string
	a, b             string
}

const bOwnNotes = "B's own notes\n"

func newTwoDirsInTmux(t *testing.T) *twoDirsInTmux {
	t.Helper()
	needTmux(t)
	dir := t.TempDir()
	d := &twoDirsInTmux{bin: builtBinary(t), env: terminalEnv(dir), db: filepath.Join(dir, "retrace.db"),
		a: filepath.Join(dir, "proj-a"), b: filepath.Join(dir, "proj-b")}
	srv, err := demo.Start("127.0.0.1:0", 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	for _, p := range []string{d.a, d.b} {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(d.b, "NOTES.md"), []byte(bOwnNotes), 0o644); err != nil {
		t.Fatal(err)
	}
	d.id = demoSessionIn(t, d.bin, d.env, d.db, srv.URL(), d.a)
	return d
}

func (d *twoDirsInTmux) inB(t *testing.T, args string) *tmux {
	return newTmux(t, fmt.Sprintf("cd %s && %s %s --db %s %s; echo EXIT=$?; sleep 30", d.b, d.env, d.bin, d.db, args))
}

// steppedBackInA checks that a step back to v0 removed A's NOTES.md and
// left B's as it was.
func (d *twoDirsInTmux) steppedBackInA(t *testing.T, door string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(d.a, "NOTES.md")); !os.IsNotExist(err) {
		t.Fatalf("%s: stepping back left A's NOTES.md: %v", door, err)
	}
	if got := read(t, filepath.Join(d.b, "NOTES.md")); got != bOwnNotes {
		t.Fatalf("%s: B's NOTES.md now holds %q", door, got)
	}
}

// -r from B, which holds a NOTES.md of its own, resumes a session of A
// in A: a step back removes A's NOTES.md and never touches B's, the
// screen names A, and stderr said so.
func TestResumeFromAnotherDirectoryInTmux(t *testing.T) {
	d := newTwoDirsInTmux(t)
	term := d.inB(t, "-r "+d.id[:8])
	stepBackToV0(t, term)
	d.steppedBackInA(t, "-r")
	resumedInA(t, term, d.a)

	// A gone: the session opens read-only, to look, never in B.
	if err := os.RemoveAll(d.a); err != nil {
		t.Fatal(err)
	}
	term = d.inB(t, "-r "+d.id[:8])
	waitForWords(t, term, "works in "+d.a+", which is not a directory here: opened read-only, to look")
	term.send(t, "hello", "Enter")
	term.send(t, "C-c")
	term.waitFor(t, "EXIT=0")
	if _, err := os.Stat(d.a); !os.IsNotExist(err) {
		t.Fatalf("A came back: %v", err)
	}
	if got := read(t, filepath.Join(d.b, "NOTES.md")); got != bOwnNotes {
		t.Fatalf("B's NOTES.md now holds %q", got)
	}
	if out := shell(t, fmt.Sprintf("%s %s show %s --db %s", d.env, d.bin, d.id, d.db)); strings.Contains(out, "hello") {
		t.Fatalf("a message reached the session opened to look:\n%s", out)
	}
}

// -c from B continues no session of A's: it starts one in B and says
// why. -c --all continues A's, in A.
func TestContinueFromAnotherDirectoryInTmux(t *testing.T) {
	d := newTwoDirsInTmux(t)
	term := d.inB(t, "-c")
	term.waitFor(t, "^S sessions")
	if s := term.screen(t); strings.Contains(s, d.id[:8]) || strings.Contains(s, "proj-a") || !strings.Contains(s, "proj-b") {
		t.Fatalf("-c in B shows A's session, or not B as the workspace:\n%s", s)
	}
	waitForWords(t, term, "no session of this directory to continue")
	term.send(t, "C-c")
	term.waitFor(t, "EXIT=0")
	term.close()

	term = d.inB(t, "-c --all")
	stepBackToV0(t, term)
	d.steppedBackInA(t, "-c --all")
	resumedInA(t, term, d.a)
}

// resumedInA checks that the interface on term names a as the workspace
// while it runs and, once quit, said on stderr before it began that the
// session was resumed there.
func resumedInA(t *testing.T, term *tmux, a string) {
	t.Helper()
	// The welcome (v0 is an empty session) or, past it, the
	// conversation's title names the workspace.
	term.waitFor(t, filepath.Base(a))
	term.send(t, "C-c")
	term.waitFor(t, "EXIT=0")
	waitForWords(t, term, "works in "+a+", not in the current directory: resumed there")
	term.close()
}

// shell runs a command line in sh and returns its output; it fails the
// test if the command fails.
func shell(t *testing.T, line string) string {
	t.Helper()
	out, err := testCommand(t, "sh", "-c", line).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	return string(out)
}

// waitForWords waits for text on term's screen, whatever the spaces: a
// message the terminal or the interface wraps over lines is found all
// the same.
func waitForWords(t *testing.T, term *tmux, text string) {
	t.Helper()
	squeeze := func(s string) string { return strings.Join(strings.Fields(s), "") }
	want := squeeze(text)
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := term.screen(t)
		if strings.Contains(squeeze(s), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 20s for %q; the screen:\n%s", text, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
