package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"retrace/agent"
	"retrace/agent/llm"
	"retrace/agent/llmserver"
	"retrace/agent/session"
	"retrace/agent/snapshot"
	"retrace/agent/tools"
	"retrace/storage"
)

// controllerIn is a controller on the rig's store and model whose new
// sessions begin in dir: a retrace started in another directory.
func (r *rig) controllerIn(dir string, cfg session.Config) *session.Controller {
	r.t.Helper()
	ws, err := tools.NewWorkspace(dir)
	if err != nil {
		r.t.Fatal(err)
	}
	cfg.BaseURL, cfg.APIKey, cfg.Model, cfg.Workspace = r.srv.URL(), "sk-test", "gpt-test", ws
	cfg.Files = snapshot.Options{CacheDir: r.t.TempDir()}
	c := session.New(context.Background(), r.store, cfg)
	r.t.Cleanup(func() { c.Close() })
	return c
}

// writeFile writes name in dir, failing the test if it cannot.
func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// approveAll answers every question of the running task with yes and
// returns how it ended.
func approveAll(t *testing.T, c *session.Controller) session.TaskDone {
	t.Helper()
	for {
		evs := until(t, c, func(ev session.Event) bool {
			_, ask := ev.(session.ApprovalNeeded)
			return ask || isDone(ev)
		})
		if done, ok := evs[len(evs)-1].(session.TaskDone); ok {
			return done
		}
		c.Decide(agent.Decision{Approved: true})
	}
}

// A session of directory A opened by a controller started in directory
// B, which holds a NOTES.md of its own: a restore, a written file and a
// command all happen in A, and B's NOTES.md is never touched. A new
// session still begins in B.
func TestASessionWorksInItsOwnWorkspace(t *testing.T) {
	r := newRig(t)
	a, b := r.ws, t.TempDir()
	writeFile(t, b, "NOTES.md", "B's own notes\n")
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	r.srv.Enqueue(toolCall("w1", "write_file", map[string]string{"path": "NOTES.md", "content": "A's notes\n"}), llmserver.TextReply("Wrote them."))
	if err := r.ctrl.Submit("write notes"); err != nil {
		t.Fatal(err)
	}
	if done := approveAll(t, r.ctrl); done.Err != nil {
		t.Fatal(done.Err)
	}
	id := r.ctrl.Info().Session.ID
	if err := r.ctrl.Close(); err != nil {
		t.Fatal(err)
	}

	// Each project has a memory of its own: the session is told A's.
	for dir, text := range map[string]string{a: "A's rule", b: "B's rule"} {
		if _, _, err := session.Remember(context.Background(), r.store, dir, text, false, "test", llm.Scrub{}); err != nil {
			t.Fatal(err)
		}
	}
	fromB := r.controllerIn(b, session.Config{})
	if err := fromB.Open(id); err != nil {
		t.Fatal(err)
	}
	if got := fromB.Info().Session.Workspace; got != a {
		t.Fatalf("the session works in %q, want %q", got, a)
	}
	if got := fromB.Project(); got != session.Project(a) {
		t.Fatalf("its memories are kept for %q, want A's project %q", got, session.Project(a))
	}
	if _, err := fromB.Restore(0, session.Rollback{}); err != nil {
		t.Fatalf("stepping back to v0 from B: %v", err)
	}
	if _, err := os.Stat(filepath.Join(a, "NOTES.md")); !os.IsNotExist(err) {
		t.Fatalf("the restore left A's NOTES.md: %v", err)
	}
	r.srv.Enqueue(toolCall("w2", "write_file", map[string]string{"path": "NOTES.md", "content": "A's notes again\n"}),
		toolCall("c1", "run_command", map[string]string{"command": "echo made > made.txt"}), llmserver.TextReply("Done."))
	if err := fromB.Submit("again"); err != nil {
		t.Fatal(err)
	}
	done := approveAll(t, fromB)
	if done.Err != nil {
		t.Fatal(done.Err)
	}
	if br := done.State.Briefing; len(br.Memories) != 1 || br.Memories[0].Text != "A's rule" {
		t.Fatalf("the task from B was told %+v, want A's memory alone", br)
	}
	if got := readFile(t, filepath.Join(a, "NOTES.md"), 0o644); got != "A's notes again\n" {
		t.Fatalf("A's NOTES.md holds %q", got)
	}
	if _, err := os.Stat(filepath.Join(a, "made.txt")); err != nil {
		t.Fatalf("the command did not run in A: %v", err)
	}
	if got := readFile(t, filepath.Join(b, "NOTES.md"), 0o644); got != "B's own notes\n" {
		t.Fatalf("B's NOTES.md now holds %q", got)
	}
	if _, err := os.Stat(filepath.Join(b, "made.txt")); !os.IsNotExist(err) {
		t.Fatalf("the command ran in B: %v", err)
	}

	// A new session begins where the controller was started.
	if err := fromB.Draft(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	if got := fromB.Info().Session.Workspace; got != b {
		t.Fatalf("a new session works in %q, want %q", got, b)
	}
}

// A session whose workspace is gone is refused, and the session open
// before stays open; it can still be opened read-only, to look. It is
// never worked on in the current directory instead.
func TestASessionWhoseWorkspaceIsGoneIsRefused(t *testing.T) {
	r := newRig(t)
	gone := t.TempDir()
	ctx := context.Background()
	info, err := r.store.Create(ctx, storage.NewSession{Title: "gone", Workspace: gone})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.store.Release(info.ID); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	mine := r.ctrl.Info().Session.ID
	err = r.ctrl.Open(info.ID)
	if !errors.Is(err, session.ErrNoWorkspace) {
		t.Fatalf("opening a session whose workspace is gone: %v, want ErrNoWorkspace", err)
	}
	if got := r.ctrl.Info(); got.Session.ID != mine || got.ReadOnly {
		t.Fatalf("after the refusal %s is open (read-only %v), want %s as before", got.Session.ID, got.ReadOnly, mine)
	}
	if err := r.ctrl.OpenReadOnly(info.ID); err != nil {
		t.Fatal(err)
	}
	got := r.ctrl.Info()
	if got.Session.ID != info.ID || !got.ReadOnly || !got.Looking {
		t.Fatalf("opened to look: %+v", got)
	}
	if err := r.ctrl.Submit("hello?"); !errors.Is(err, session.ErrReadOnly) {
		t.Fatalf("a message to a session opened to look: %v, want ErrReadOnly", err)
	}
	if _, busy := r.store.Holder(info.ID); busy {
		t.Fatal("a session opened to look is claimed")
	}
	if _, busy := r.store.Holder(mine); busy {
		t.Fatal("the session left is still claimed")
	}

	for _, recorded := range []string{"", "relative/dir"} {
		info, err := r.store.Create(ctx, storage.NewSession{Workspace: recorded})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.store.Release(info.ID); err != nil {
			t.Fatal(err)
		}
		if err := r.ctrl.Open(info.ID); !errors.Is(err, session.ErrNoWorkspace) {
			t.Fatalf("a session recording workspace %q: %v, want ErrNoWorkspace", recorded, err)
		}
	}
}

// asks reports whether the task the controller runs now asks about a
// call before it runs it; it lets the call run either way and waits for
// the end.
func asks(t *testing.T, c *session.Controller) bool {
	t.Helper()
	asked := false
	for {
		evs := until(t, c, func(ev session.Event) bool {
			_, ask := ev.(session.ApprovalNeeded)
			return ask || isDone(ev)
		})
		done, ok := evs[len(evs)-1].(session.TaskDone)
		if ok {
			if done.Err != nil {
				t.Fatal(done.Err)
			}
			return asked
		}
		asked = true
		c.Decide(agent.Decision{Approved: true})
	}
}

// A tool allowed for one project runs without asking in its sessions
// only: a session of another project opened from it asks, and one the
// person allows there from then on is that project's.
func TestAToolAllowedForAProjectIsAskedAboutInAnother(t *testing.T) {
	r := newRig(t)
	a, b := r.ws, t.TempDir()
	allowed := map[string][]string{session.Project(b): {"write_file"}}
	write := func(c *session.Controller, text string) bool {
		r.srv.Enqueue(toolCall("w", "write_file", map[string]string{"path": "NOTES.md", "content": text}), llmserver.TextReply("Wrote it."))
		if err := c.Submit("write " + text); err != nil {
			t.Fatal(err)
		}
		return asks(t, c)
	}
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	write(r.ctrl, "A")
	ofA := r.ctrl.Info().Session.ID
	if err := r.ctrl.Close(); err != nil {
		t.Fatal(err)
	}

	fromB := r.controllerIn(b, session.Config{AllowedIn: func(project string) []string { return allowed[project] }})
	if err := fromB.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	if write(fromB, "B") {
		t.Fatal("write_file, allowed in B's project, was asked about there")
	}
	if err := fromB.Open(ofA); err != nil {
		t.Fatal(err)
	}
	if !write(fromB, "A again") {
		t.Fatal("write_file, allowed in B's project only, ran unasked in a session of A")
	}
	fromB.Allow("write_file")
	if err := fromB.Open(ofA); err != nil { // made again, with what is allowed now
		t.Fatal(err)
	}
	if write(fromB, "A, allowed") {
		t.Fatal("write_file, allowed in A's project since, was asked about there")
	}
	if got := readFile(t, filepath.Join(a, "NOTES.md"), 0o644); got != "A, allowed" {
		t.Fatalf("A's NOTES.md holds %q", got)
	}
}
