package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"retrace/agent/llmserver"
	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// A session works in the workspace it recorded, whichever directory a
// command is typed in. Each door is tried from a second directory that
// holds a file of the same name as the session's: that file is never
// touched.

// twoDirs is a session of directory a that wrote a's NOTES.md, and a
// directory b with a NOTES.md of its own, which the test is now in.
type twoDirs struct {
	*runEnv
	a, b, id string
}

const bNotes = "B's own notes\n"

func newTwoDirs(t *testing.T) *twoDirs {
	t.Helper()
	e := newRunEnv(t)
	d := &twoDirs{runEnv: e, a: e.ws, b: t.TempDir()}
	if err := os.WriteFile(filepath.Join(d.b, "NOTES.md"), []byte(bNotes), 0o644); err != nil {
		t.Fatal(err)
	}
	e.srv.Enqueue(fileCall("w1", "write_file", map[string]string{"path": "NOTES.md", "content": "A's notes\n"}), llmserver.TextReply("Wrote NOTES.md."))
	if r := e.run(t, "", "--api-key", secret, "--yes", "take notes"); r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	d.id = sessionID(t, e.db)
	t.Chdir(d.b)
	return d
}

// untouched fails the test unless b's NOTES.md is as it was and b holds
// nothing else.
func (d *twoDirs) untouched(t *testing.T) {
	t.Helper()
	if got := read(t, filepath.Join(d.b, "NOTES.md")); got != bNotes {
		t.Fatalf("B's NOTES.md now holds %q", got)
	}
	entries, err := os.ReadDir(d.b)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("B holds %d entries, want its NOTES.md alone", len(entries))
	}
}

// fromB runs retrace in b with the fake model, and no --workspace.
func (d *twoDirs) fromB(t *testing.T, args ...string) result {
	t.Helper()
	return retrace(t, append([]string{args[0], "--db", d.db, "--base-url", d.srv.URL(), "--model", "gpt-test", "--api-key", secret}, args[1:]...)...)
}

// `retrace run --session` from B runs the task in A, and says so.
func TestRunSessionFromAnotherDirectory(t *testing.T) {
	d := newTwoDirs(t)
	d.srv.Enqueue(fileCall("w2", "write_file", map[string]string{"path": "NOTES.md", "content": "A's notes, again\n"}),
		fileCall("c1", "run_command", map[string]string{"command": "echo made > made.txt"}), llmserver.TextReply("Done."))
	r := d.fromB(t, "run", "--session", d.id, "--yes", "again")
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if got := read(t, filepath.Join(d.a, "NOTES.md")); got != "A's notes, again\n" {
		t.Fatalf("A's NOTES.md holds %q", got)
	}
	if got := read(t, filepath.Join(d.a, "made.txt")); got != "made\n" {
		t.Fatalf("the command did not run in A: made.txt holds %q", got)
	}
	d.untouched(t)
	if !strings.Contains(r.stderr, "works in "+d.a) {
		t.Fatalf("stderr does not say where the session works:\n%s", r.stderr)
	}

	// --workspace naming another directory contradicts the session's.
	if r := d.fromB(t, "run", "--session", d.id, "--workspace", d.b, "again"); r.code != exitUsage || !strings.Contains(r.stderr, d.a) {
		t.Fatalf("--workspace B on a session of A: exit %d\n%s", r.code, r.stderr)
	}
	d.untouched(t)
}

// A session whose workspace is gone, or records none, is refused by
// `run --session` and by `rollback`: never worked on in the current
// directory instead.
func TestASessionWithoutItsWorkspaceIsRefused(t *testing.T) {
	d := newTwoDirs(t)
	ctx := context.Background()
	st, err := boltstore.Open(d.db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The same session, recording no workspace.
	empty, err := st.Create(ctx, storage.NewSession{Title: "nowhere", Workspace: ""})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := st.Export(ctx, d.id)
	if err != nil {
		t.Fatal(err)
	}
	cur := storage.NewCursor(st, state.New(empty.ID))
	for _, rec := range ex.Checkpoints {
		if _, err := cur.Commit(ctx, rec.Data); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	if err := os.RemoveAll(d.a); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{d.id, empty.ID} {
		r := d.fromB(t, "run", "--session", id, "--yes", "again")
		if r.code != exitError || !strings.Contains(r.stderr, "workspace") {
			t.Fatalf("run --session %s: exit %d\n%s", id, r.code, r.stderr)
		}
		r = retrace(t, "rollback", id, "0", "--db", d.db, "--force")
		if r.code != exitError || !strings.Contains(r.stderr, "workspace") {
			t.Fatalf("rollback %s: exit %d\n%s", id, r.code, r.stderr)
		}
		d.untouched(t)
	}
	if n := len(d.srv.Requests()); n != 2 {
		t.Fatalf("the model was asked %d times, want the 2 of the first task", n)
	}
}

// `retrace rollback` from B restores A's files; `retrace sessions` says
// where each session works.
func TestRollbackFromAnotherDirectory(t *testing.T) {
	d := newTwoDirs(t)
	list := retrace(t, "sessions", "--db", d.db).ok(t).stdout
	if !strings.Contains(list, "WORKSPACE") || !strings.Contains(lineWith(list, d.id), d.a) {
		t.Fatalf("sessions does not say where %s works:\n%s", d.id, list)
	}
	retrace(t, "rollback", d.id, "0", "--db", d.db).ok(t)
	if _, err := os.Stat(filepath.Join(d.a, "NOTES.md")); !os.IsNotExist(err) {
		t.Fatalf("the rollback left A's NOTES.md: %v", err)
	}
	d.untouched(t)
}
