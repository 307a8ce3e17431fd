package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"retrace/agent/llmserver"
	"retrace/state/transcript/inerttest"
)

// hostileName is the name of a file that holds class c behind tag: a
// name can hold any byte but NUL and the slash, and JSON carries only
// UTF-8 to the tools, so the classes that need those have no file.
func hostileName(tag string, c inerttest.Class) (string, bool) {
	if c.Raw || strings.ContainsAny(c.Text, "\x00/") {
		return "", false
	}
	return tag + c.Text + ".txt", true
}

// Files whose names and contents are hostile, one a class, written by the
// agent in one session, then shown by `retrace diff` (headers and bodies,
// and --stat) and by `retrace rollback` (its conflict list, and its
// summary when files cannot be put back): each shows the text, and obeys
// none of it.
func TestInertMatrixDiffAndRollback(t *testing.T) {
	type file struct {
		c         inerttest.Class
		tag, name string
	}
	var files []file
	var calls []llmserver.Call
	for i, c := range inerttest.Classes {
		tag := fmt.Sprintf("n%02d:", i)
		if name, ok := hostileName(tag, c); ok {
			files = append(files, file{c, tag, name})
			args, _ := json.Marshal(map[string]string{"path": name, "content": fmt.Sprintf("b%02d:%s\n", i, c.Text)})
			calls = append(calls, llmserver.Call{ID: fmt.Sprintf("w%d", i), Name: "write_file", Args: string(args)})
		}
	}
	e := newRunEnv(t)
	e.srv.Enqueue(llmserver.ToolCallReply(calls), llmserver.TextReply("Wrote them."))
	if r := e.run(t, "", "--api-key", secret, "--yes", "write them"); r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	id := sessionID(t, e.db)
	tip := strconv.Itoa(headOf(t, e.db, id))
	each := func(what, out string, line func(f file) (string, string)) {
		t.Helper()
		for _, f := range files {
			where, tag := line(f)
			checkText(t, what, out, f.c, []shown{{where, tag, 0}})
		}
	}

	d := retrace(t, "diff", id, "0", tip, "--db", e.db).ok(t).stdout
	each("diff", d, func(f file) (string, string) { return lineWith(d, "+++ b/"+f.tag), f.tag })
	each("diff", d, func(f file) (string, string) { return d, "+b" + f.tag[1:] })
	stat := retrace(t, "diff", id, tip, "0", "--stat", "--db", e.db).ok(t).stdout
	each("diff --stat", stat, func(f file) (string, string) { return lineWith(stat, f.tag), f.tag })

	// Changed by hand: the conflicts name them.
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(e.ws, f.name), []byte("mine\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := retrace(t, "rollback", id, "1", "--db", e.db)
	if r.code != exitError {
		t.Fatalf("rollback over changed files: exit %d\n%s", r.code, r.stderr)
	}
	each("rollback's conflicts", r.stderr, func(f file) (string, string) { return lineWith(r.stderr, f.tag), f.tag })
	retrace(t, "rollback", id, "1", "--force", "--db", e.db).ok(t)

	// A directory where each file goes back: the summary names them.
	for _, f := range files {
		if err := os.MkdirAll(filepath.Join(e.ws, f.name, "in the way"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r = retrace(t, "rollback", id, tip, "--force", "--db", e.db)
	if r.code != exitError {
		t.Fatalf("rollback onto directories: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	each("rollback's summary", r.stdout, func(f file) (string, string) { return r.stdout, "could not restore " + f.tag })
	checkText(t, "rollback's error", r.stderr, inerttest.Class{}, nil)
}

// headOf is the head version of session id, as show --json says it.
func headOf(t *testing.T, db, id string) int {
	t.Helper()
	var head struct{ Version int }
	if err := json.Unmarshal([]byte(retrace(t, "show", id, "--db", db, "--json").ok(t).stdout), &head); err != nil {
		t.Fatal(err)
	}
	return head.Version
}
