package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"retrace/agent/llmserver"
)

func fileCall(id, name string, args map[string]string) llmserver.Response {
	b, _ := json.Marshal(args)
	return llmserver.ToolCallReply([]llmserver.Call{{ID: id, Name: name, Args: string(b)}})
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// `retrace rollback` brings the files back; a file edited by hand since
// stops it (exit 1, the file named, nothing changed) unless --force;
// --keep-files moves only the head. `retrace diff` and `show` say what
// changed.
func TestRollbackRestoresFiles(t *testing.T) {
	e := newRunEnv(t)
	notes := filepath.Join(e.ws, "NOTES.md")
	e.srv.Enqueue(fileCall("w1", "write_file", map[string]string{"path": "NOTES.md", "content": "first\nsecond\n"}),
		fileCall("w2", "edit_file", map[string]string{"path": "NOTES.md", "old_text": "second", "new_text": "2nd"}),
		llmserver.TextReply("Wrote NOTES.md."))
	if r := e.run(t, "", "--api-key", secret, "--yes", "take notes"); r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	id := sessionID(t, e.db)
	if got := read(t, notes); got != "first\n2nd\n" {
		t.Fatalf("NOTES.md = %q", got)
	}
	var head struct{ Version int }
	if err := json.Unmarshal([]byte(retrace(t, "show", id, "--db", e.db, "--json").ok(t).stdout), &head); err != nil {
		t.Fatal(err)
	}
	tip := strconv.Itoa(head.Version)

	show := retrace(t, "show", id, "--db", e.db).ok(t)
	if !strings.Contains(show.stdout, "created NOTES.md (+2)") {
		t.Fatalf("show lists no file change:\n%s", show.stdout)
	}
	d := retrace(t, "diff", id, "0", tip, "--db", e.db).ok(t)
	if d.stdout != "--- /dev/null\n+++ b/NOTES.md\n@@ -0,0 +1,2 @@\n+first\n+2nd\n" {
		t.Fatalf("diff v0 v%s:\n%s", tip, d.stdout)
	}
	if d := retrace(t, "diff", id, tip, "0", "--db", e.db, "--stat").ok(t); strings.TrimSpace(d.stdout) != "deleted NOTES.md (−2)" {
		t.Fatalf("diff --stat v%s v0: %q", tip, d.stdout)
	}

	// Edited by hand: the rollback is refused and changes nothing.
	if err := os.WriteFile(notes, []byte("mine now\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := retrace(t, "rollback", id, "1", "--db", e.db)
	if r.code != 1 || !strings.Contains(r.stderr, "NOTES.md") || !strings.Contains(r.stderr, "--force") || read(t, notes) != "mine now\n" {
		t.Fatalf("rollback over a file edited by hand: exit %d\n%s", r.code, r.stderr)
	}
	if r := retrace(t, "show", id, "--db", e.db, "--json").ok(t); !strings.Contains(r.stdout, `"version": `+tip+`,`) {
		t.Fatalf("a refused rollback moved the head:\n%.300s", r.stdout)
	}
	// --force puts it back as it was at v1: before the write, no file.
	r = retrace(t, "rollback", id, "1", "--db", e.db, "--force").ok(t)
	if _, err := os.Stat(notes); !os.IsNotExist(err) || !strings.Contains(r.stdout, "restored 1 file to v1") {
		t.Fatalf("after --force: %v\n%s", err, r.stdout)
	}
	// Forward again to the tip of the first branch: the file comes back.
	retrace(t, "rollback", id, tip, "--db", e.db).ok(t)
	if got := read(t, notes); got != "first\n2nd\n" {
		t.Fatalf("back at v%s NOTES.md = %q", tip, got)
	}
	// --keep-files moves only the head.
	retrace(t, "rollback", id, "1", "--db", e.db, "--keep-files").ok(t)
	if got := read(t, notes); got != "first\n2nd\n" {
		t.Fatalf("--keep-files changed NOTES.md: %q", got)
	}
	if r := retrace(t, "rollback", id, "1", "--db", e.db, "--keep-files", "--force"); r.code != 2 {
		t.Fatalf("--force with --keep-files: exit %d\n%s", r.code, r.stderr)
	}
}

// The attack on the watch, from the command line: a command opens h.txt
// for writing and never writes it, and the user meanwhile saves h.txt the
// way editors do, a temporary file renamed over it. The save is the
// user's, not the command's: `retrace rollback` (no --force) leaves it as
// the user wrote it, and `retrace show` does not list it among the
// command's changes.
func TestRollbackKeepsAFileReplacedWhileACommandRan(t *testing.T) {
	e := newRunEnv(t)
	h := filepath.Join(e.ws, "h.txt")
	if err := os.WriteFile(h, []byte("the user's first text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hold := `{"command":"exec 4<>h.txt; touch started; while [ ! -e go ]; do sleep 0.05; done; echo finished > cmd.txt"}`
	e.srv.Enqueue(llmserver.ToolCallReply([]llmserver.Call{{ID: "call_hold", Name: "run_command", Args: hold}}),
		llmserver.TextReply("Done."))
	ran := make(chan result, 1)
	go func() { ran <- e.run(t, "", "--api-key", secret, "--yes", "hold h.txt open") }()
	until(t, "the command to start", func() bool { _, err := os.Stat(filepath.Join(e.ws, "started")); return err == nil })
	tmp := filepath.Join(e.ws, ".h.txt.swp")
	if err := os.WriteFile(tmp, []byte("saved by the user while the command ran\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, h); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.ws, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := <-ran; r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	id := sessionID(t, e.db)
	if show := retrace(t, "show", id, "--db", e.db).ok(t); strings.Contains(show.stdout, "changed h.txt") || !strings.Contains(show.stdout, "created cmd.txt") {
		t.Errorf("show lists the user's save as the command's, or misses the command's own file:\n%s", show.stdout)
	}
	r := retrace(t, "rollback", id, "1", "--db", e.db)
	if got := read(t, h); got != "saved by the user while the command ran\n" {
		t.Fatalf("after rollback (exit %d) h.txt holds %q\n%s%s", r.code, got, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "cmd.txt")); r.code != exitOK || !os.IsNotExist(err) {
		t.Fatalf("rollback: exit %d, cmd.txt: %v\n%s", r.code, err, r.stderr)
	}
}
