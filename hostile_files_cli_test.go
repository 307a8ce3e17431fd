package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"retrace/agent/llmserver"
	"retrace/state/transcript/inerttest"
)

// hostileName is a workspace file's name that holds c: a name can hold
// any byte but NUL and the slash, and JSON carries only UTF-8 to the
// tools, so those classes keep their words and lose what cannot be.
func hostileName(c inerttest.Class) (string, bool) {
	if c.Raw || strings.ContainsAny(c.Text, "\x00/") {
		return "", false
	}
	return "name:" + c.Text + ".txt", true
}

// A file whose name and content are hostile, written by the agent, then
// shown by `retrace diff` (headers and bodies, and --stat) and by
// `retrace rollback` (its conflict list, and its summary when a file
// cannot be put back): each shows the text, and obeys none of it.
func TestInertMatrixDiffAndRollback(t *testing.T) {
	for _, c := range inerttest.Classes {
		name, ok := hostileName(c)
		if !ok {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			e := newRunEnv(t)
			e.srv.Enqueue(fileCall("w1", "write_file", map[string]string{"path": name, "content": "body:" + c.Text + "\n"}),
				llmserver.TextReply("Wrote it."))
			if r := e.run(t, "", "--api-key", secret, "--yes", "write it"); r.code != exitOK {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			path := filepath.Join(e.ws, name)
			if _, err := os.Stat(path); err != nil {
				t.Fatal(err)
			}
			id := sessionID(t, e.db)
			tip := strconv.Itoa(headOf(t, e.db, id))

			d := retrace(t, "diff", id, "0", tip, "--db", e.db).ok(t).stdout
			checkText(t, "diff", d, c, []shown{{lineWith(d, "+++ "), "name:", 0}, {d, "body:", 0}})
			stat := retrace(t, "diff", id, tip, "0", "--stat", "--db", e.db).ok(t).stdout
			checkText(t, "diff --stat", stat, c, []shown{{stat, "name:", 0}})

			// Changed by hand: the conflict names it.
			if err := os.WriteFile(path, []byte("mine\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			r := retrace(t, "rollback", id, "1", "--db", e.db)
			if r.code != exitError {
				t.Fatalf("rollback over a changed file: exit %d\n%s", r.code, r.stderr)
			}
			checkText(t, "rollback's conflicts", r.stderr, c, []shown{{lineWith(r.stderr, "(recorded "), "name:", 0}})
			retrace(t, "rollback", id, "1", "--force", "--db", e.db).ok(t)

			// A directory where the file goes back: the summary names it.
			if err := os.MkdirAll(filepath.Join(path, "in the way"), 0o755); err != nil {
				t.Fatal(err)
			}
			r = retrace(t, "rollback", id, tip, "--force", "--db", e.db)
			if r.code != exitError {
				t.Fatalf("rollback onto a directory: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			checkText(t, "rollback's summary", r.stdout, c, []shown{{lineWith(r.stdout, "could not restore"), "name:", 0}})
			checkText(t, "rollback's error", r.stderr, c, nil)
		})
	}
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
