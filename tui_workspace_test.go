package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"retrace/agent/llmserver"
	"retrace/agent/session"
	"retrace/agent/tools"
	"retrace/storage"
)

// sessionIn is a session of directory dir whose model wrote dir's
// NOTES.md, made by a controller of its own as a retrace started there
// would. It returns the session's id.
func (r *tuiRig) sessionIn(dir, title string) string {
	r.t.Helper()
	ws, err := tools.NewWorkspace(dir)
	if err != nil {
		r.t.Fatal(err)
	}
	cfg := testConfig(r.t, "gpt-test", r.srv.URL(), "sk-test")
	c := session.New(context.Background(), r.store, cfg.session(ws, []string{"write_file"}, true, &demoModel{}))
	defer c.Close()
	if err := c.Create(storage.NewSession{Title: title}); err != nil {
		r.t.Fatal(err)
	}
	r.srv.Enqueue(llmserver.ToolCallReply([]llmserver.Call{{ID: "w1", Name: "write_file", Args: `{"path":"NOTES.md","content":"` + title + `\n"}`}}),
		llmserver.TextReply("Wrote NOTES.md."))
	if err := c.Submit("take notes"); err != nil {
		r.t.Fatal(err)
	}
	for ev := range c.Events(context.Background()) {
		if done, ok := ev.(session.TaskDone); ok {
			if done.Err != nil {
				r.t.Fatal(done.Err)
			}
			break
		}
	}
	return c.Info().Session.ID
}

// The sessions dialog's Enter on a session of another directory, from an
// interface started in B, which holds a NOTES.md of its own: it asks
// first; y opens the session in its own workspace, where a step back
// removes its NOTES.md, and B's is never touched; r opens it read-only.
// A session whose workspace is gone can only be looked at.
func TestTUISessionOfAnotherDirectory(t *testing.T) {
	r := newTUIRig(t)
	b := r.ws
	const mine = "B's own notes\n"
	if err := os.WriteFile(filepath.Join(b, "NOTES.md"), []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	a, gone := t.TempDir(), t.TempDir()
	goneID := r.sessionIn(gone, "gone work")
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	r.sessionIn(a, "work of A")
	if err := r.ctrl.Draft(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	p := r.open(r.ctrl, 200, 40)

	// Newest first: A's, then the gone one.
	p.press("ctrl+s")
	p.untilShown("work of A", "gone work")
	p.press("enter")
	p.untilWords("Session", "works in "+a+", not in "+b+": its tools and restores act there", "r read-only")
	p.press("y")
	p.untilWords("Conversation · "+a, "Wrote NOTES.md.")
	p.press("ctrl+t")
	p.untilShown("Viewing v6 of 6")
	p.press("g")
	p.untilShown("Viewing v0 ")
	p.press("enter")
	p.untilShown("restored v0 and 1 file")
	if _, err := os.Stat(filepath.Join(a, "NOTES.md")); !os.IsNotExist(err) {
		t.Fatalf("stepping back left A's NOTES.md: %v", err)
	}
	if got := read(t, filepath.Join(b, "NOTES.md")); got != mine {
		t.Fatalf("B's NOTES.md now holds %q", got)
	}
	if got := r.ctrl.Info(); got.Session.Workspace != a || got.ReadOnly {
		t.Fatalf("the session open works in %q (read-only %v), want %q", got.Session.Workspace, got.ReadOnly, a)
	}

	// A session whose workspace is gone: y opens it read-only.
	p.press("ctrl+s")
	p.untilShown("gone work")
	p.press("down", "enter")
	p.untilWords("works in " + gone + ", which is not a directory here. Open it read-only, to look?")
	p.press("y")
	p.untilWords("read-only: opened to look")
	if got := r.ctrl.Info(); got.Session.ID != goneID || !got.Looking {
		t.Fatalf("after y %s is open (looking %v), want %s, to look", got.Session.ID, got.Looking, goneID)
	}

	// r on a session of another workspace: read-only, to look.
	p.press("ctrl+s")
	p.untilShown("work of A")
	p.press("enter")
	p.untilWords("works in " + a)
	p.press("r")
	p.until("A's session, read-only", func(string) bool { return r.ctrl.Info().Session.Workspace == a })
	if got := r.ctrl.Info(); !got.Looking {
		t.Fatalf("after r the session is open for writing: %+v", got)
	}
	if got := read(t, filepath.Join(b, "NOTES.md")); got != mine {
		t.Fatalf("B's NOTES.md now holds %q", got)
	}
}

// untilWords waits for every text on the screen, read as words: a
// question the interface wraps over lines is found all the same.
func (p *screenPump) untilWords(texts ...string) string {
	p.t.Helper()
	return p.until(strings.Join(texts, " and "), func(s string) bool {
		words := strings.Join(strings.Fields(s), " ")
		for _, x := range texts {
			if !strings.Contains(words, strings.Join(strings.Fields(x), " ")) {
				return false
			}
		}
		return true
	})
}
