package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"retrace/agent/llmserver"
)

// hugeReply is a stream of 24 MiB of text in pieces of a MiB, as a
// hostile or looping server sends it.
func hugeReply() llmserver.Response {
	c := llmserver.Chunker{}
	events := []llmserver.Event{c.Role()}
	piece := c.Text(strings.Repeat("x", 1<<20))
	for range 24 {
		events = append(events, piece)
	}
	return llmserver.Stream(append(events, c.Finish("stop"), llmserver.Done())...)
}

// `retrace run` against a server whose reply passes the bound of one
// reply: exit 1 with an error naming the bound, the server and the
// setting; a database of ordinary size, whose show is short; and a
// follow-up whose request is short too. It used to take 2.2 GB, keep the
// 24 MiB in the database and send it back with the next request.
func TestRunStopsAReplyPastTheBound(t *testing.T) {
	e := newRunEnv(t)
	e.srv.Enqueue(hugeReply())
	r := e.run(t, "", "write a long story")
	if r.code != exitError {
		t.Fatalf("exit %d, stdout %d bytes; stderr: %s", r.code, len(r.stdout), r.stderr)
	}
	for _, want := range []string{"2 MiB", e.srv.URL(), "max_reply_mib"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr does not name %q: %s", want, r.stderr)
		}
	}
	if fi, err := os.Stat(e.db); err != nil || fi.Size() > 1<<20 {
		t.Errorf("the database is %d KiB (%v)", fi.Size()>>10, err)
	}
	id := sessionID(t, e.db)
	if show := retrace(t, "show", id, "--db", e.db).ok(t); len(show.stdout) > 128<<10 {
		t.Errorf("show prints %d KiB", len(show.stdout)>>10)
	}
	e.srv.Enqueue(llmserver.TextReply("A short one, then."))
	if r := e.run(t, "", "--session", id, "a short story, please"); r.code != exitOK {
		t.Fatalf("the follow-up: exit %d: %s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	if n := len(reqs[len(reqs)-1].Raw); n > 256<<10 {
		t.Errorf("the follow-up's request is %d KiB", n>>10)
	}
}

// max_reply_mib in the config file raises the bound: the same reply is
// taken whole.
func TestRunTakesAReplyWithinMaxReplyMiB(t *testing.T) {
	e := newRunEnv(t)
	if err := os.MkdirAll(filepath.Join(e.configDir, "retrace"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.configDir, "retrace", "config.toml"), []byte("max_reply_mib = 32\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.srv.Enqueue(hugeReply())
	if r := e.run(t, "", "write a long story"); r.code != exitOK || len(r.stdout) < 24<<20 {
		t.Fatalf("exit %d, %d bytes out: %s", r.code, len(r.stdout), r.stderr)
	}
}
