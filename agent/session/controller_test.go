package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"retrace/agent"
	"retrace/agent/llmserver"
	"retrace/agent/llmtest"
	"retrace/agent/session"
	"retrace/agent/tools"
	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// rig is a controller on a real store file, real tools in a temporary
// workspace, and the strict fake model server.
type rig struct {
	t      *testing.T
	srv    *llmtest.Server
	db, ws string
	store  *boltstore.Store
	ctrl   *session.Controller
}

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{t: t, srv: llmtest.NewServer(t), db: filepath.Join(t.TempDir(), "retrace.db"), ws: t.TempDir()}
	r.store = openStore(t, r.db)
	r.ctrl = r.controller(r.store, session.Config{})
	t.Cleanup(func() {
		if v := r.srv.Violations(); len(v) != 0 {
			t.Errorf("requests a strict server would reject: %v", v)
		}
		if err := boltstore.Verify(context.Background(), r.db); err != nil {
			t.Errorf("store: %v", err)
		}
	})
	return r
}

func openStore(t *testing.T, path string) *boltstore.Store {
	t.Helper()
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// controller makes a controller on st with the rig's model and
// workspace; cfg sets the rest.
func (r *rig) controller(st storage.Store, cfg session.Config) *session.Controller {
	r.t.Helper()
	ws, err := tools.NewWorkspace(r.ws)
	if err != nil {
		r.t.Fatal(err)
	}
	cfg.BaseURL, cfg.APIKey, cfg.Model, cfg.Workspace = r.srv.URL(), "sk-test", "gpt-test", ws
	if cfg.Files.CacheDir == "" {
		cfg.Files.CacheDir = r.t.TempDir()
	}
	c := session.New(context.Background(), st, cfg)
	r.t.Cleanup(func() { c.Close() })
	return c
}

// restoreErr restores v, keeping the files' question out of the way.
func restoreErr(c *session.Controller, v int) error {
	_, err := c.Restore(v, session.Rollback{})
	return err
}

// until reads events until stop says so, and returns them all. It fails
// the test rather than wait for ever.
func until(t *testing.T, c *session.Controller, stop func(session.Event) bool) []session.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var got []session.Event
	for {
		ev, err := c.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for events (after %d): %v", len(got), err)
		}
		got = append(got, ev)
		if stop(ev) {
			return got
		}
	}
}

func isDone(ev session.Event) bool { _, ok := ev.(session.TaskDone); return ok }

// finish reads events to the end of the task and returns its TaskDone.
func finish(t *testing.T, c *session.Controller) (session.TaskDone, []session.Event) {
	t.Helper()
	evs := until(t, c, isDone)
	return evs[len(evs)-1].(session.TaskDone), evs
}

func writeCall(id, content string) llmserver.Response {
	return llmserver.ToolCallReply([]llmserver.Call{{ID: id, Name: "write_file", Args: `{"path":"out.txt","content":"` + content + `"}`}})
}

func plan(step string) llmserver.Response {
	return llmserver.ToolCallReply([]llmserver.Call{{ID: "call_plan", Name: "set_plan", Args: `{"steps":["` + step + `"]}`}})
}

func TestSubmitReportsEveryCheckpointAndTheEnd(t *testing.T) {
	r := newRig(t)
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	r.srv.Enqueue(llmserver.TextReply("Hello! How can I help?"))
	if err := r.ctrl.Submit("  hi\nthere  "); err != nil {
		t.Fatal(err)
	}
	done, evs := finish(t, r.ctrl)
	if done.Err != nil || done.State.Phase != state.Done || done.State.FinalAnswer != "Hello! How can I help?" {
		t.Fatalf("ended %s %q: %v", done.State.Phase, done.State.FinalAnswer, done.Err)
	}
	var versions []int
	var text strings.Builder
	for _, ev := range evs {
		switch ev := ev.(type) {
		case session.StateChanged:
			versions = append(versions, ev.State.Version)
		case session.Delta:
			text.WriteString(ev.Text)
		}
	}
	if len(versions) != 2 || versions[0] != 1 || versions[1] != 2 {
		t.Fatalf("StateChanged for versions %v, want every checkpoint: [1 2]", versions)
	}
	if text.String() != "Hello! How can I help?" {
		t.Fatalf("streamed %q", text.String())
	}
	if done.Info.Session.Title != "hi there" || done.Info.Session.Versions != 2 || done.Info.Model != "gpt-test" {
		t.Fatalf("info at the end: %+v", done.Info)
	}
	if head := r.ctrl.Head(); head.Version != 2 || head.Phase != state.Done {
		t.Fatalf("Head v%d %s after the task", head.Version, head.Phase)
	}
	// A second message goes on from the head, with the history.
	r.srv.Enqueue(llmserver.TextReply("You said hi."))
	if err := r.ctrl.Submit("what did I say?"); err != nil {
		t.Fatal(err)
	}
	if done, _ := finish(t, r.ctrl); done.Err != nil || done.State.Version != 4 {
		t.Fatalf("second task: v%d %v", done.State.Version, done.Err)
	}
	if err := r.ctrl.Submit(" \n"); !errors.Is(err, session.ErrEmptyMessage) {
		t.Fatalf("an empty message: %v", err)
	}
}

func TestCancelKeepsWhatStreamed(t *testing.T) {
	r := newRig(t)
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	c := llmserver.Chunker{}
	r.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("half an ans"), llmserver.Block()))
	if err := r.ctrl.Submit("tell me"); err != nil {
		t.Fatal(err)
	}
	until(t, r.ctrl, func(ev session.Event) bool { _, ok := ev.(session.Delta); return ok })
	if err := r.ctrl.Submit("another"); !errors.Is(err, session.ErrRunning) {
		t.Fatalf("a second task while one runs: %v", err)
	}
	r.ctrl.Cancel()
	done, _ := finish(t, r.ctrl)
	if !done.Interrupted() || done.State.Phase != state.Idle {
		t.Fatalf("after Cancel: %s %v", done.State.Phase, done.Err)
	}
	head, err := r.store.Head(context.Background(), done.State.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	last := head.History[len(head.History)-1]
	if head.Phase != state.Idle || !strings.Contains(last.Content, "half an ans") {
		t.Fatalf("the store's head: %s, last message %q", head.Phase, last.Content)
	}
}

func TestApproveAndDeny(t *testing.T) {
	r := newRig(t)
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	r.srv.Enqueue(plan("write out.txt"), writeCall("call_w1", "one"), writeCall("call_w2", "two"),
		llmserver.TextReply("Wrote it."), llmserver.TextReply("out.txt holds two."))
	// An answer given before anyone asks is void: it must not approve the
	// first question.
	r.ctrl.Decide(agent.Decision{Approved: true})
	if err := r.ctrl.Submit("write out.txt"); err != nil {
		t.Fatal(err)
	}
	var asked []session.ApprovalNeeded
	var done session.TaskDone
	for done.State.Version == 0 {
		for _, ev := range until(t, r.ctrl, func(ev session.Event) bool {
			_, ask := ev.(session.ApprovalNeeded)
			return ask || isDone(ev)
		}) {
			switch ev := ev.(type) {
			case session.ApprovalNeeded:
				asked = append(asked, ev)
				if _, err := os.Stat(filepath.Join(r.ws, "out.txt")); err == nil {
					t.Fatal("out.txt was written before the person answered")
				}
				r.ctrl.Decide(agent.Decision{Approved: len(asked) == 2, Reason: "not that"})
			case session.TaskDone:
				done = ev
			}
		}
	}
	if done.Err != nil || len(asked) != 2 {
		t.Fatalf("asked %d times, ended with %v", len(asked), done.Err)
	}
	if p := asked[0].Preview; asked[0].Call.Name != "write_file" || p.Path != "out.txt" || !strings.Contains(p.Diff, "+one") {
		t.Fatalf("the question shows what the call would do: %+v", asked[0])
	}
	b, err := os.ReadFile(filepath.Join(r.ws, "out.txt"))
	if err != nil || string(b) != "two" {
		t.Fatalf("out.txt = %q, %v: the denied write must not happen, the approved one must", b, err)
	}
	log := done.State.Memory.ToolCalls
	if log[1].Approval != state.Denied || !strings.Contains(log[1].Error, "not that") || log[2].Approval != state.Approved {
		t.Fatalf("tool log: %+v", log)
	}
}

func TestRestoreWaitsForTheTask(t *testing.T) {
	r := newRig(t)
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	r.srv.Enqueue(llmserver.TextReply("First answer."))
	if err := r.ctrl.Submit("first"); err != nil {
		t.Fatal(err)
	}
	finish(t, r.ctrl)
	c := llmserver.Chunker{}
	r.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("second"), llmserver.Block()))
	if err := r.ctrl.Submit("second"); err != nil {
		t.Fatal(err)
	}
	until(t, r.ctrl, func(ev session.Event) bool { _, ok := ev.(session.Delta); return ok })

	if err := restoreErr(r.ctrl, 1); !errors.Is(err, session.ErrRunning) {
		t.Fatalf("restore under a running task: %v", err)
	}
	if err := r.ctrl.Open(r.ctrl.Info().Session.ID); !errors.Is(err, session.ErrRunning) {
		t.Fatalf("open under a running task: %v", err)
	}
	r.ctrl.Cancel()
	done, _ := finish(t, r.ctrl)
	if err := restoreErr(r.ctrl, 2); err != nil {
		t.Fatalf("restore once the task ended (v%d): %v", done.State.Version, err)
	}
	if head := r.ctrl.Head(); head.Version != 2 || head.FinalAnswer != "First answer." {
		t.Fatalf("head after restore: v%d %q", head.Version, head.FinalAnswer)
	}
	// The next message starts a branch at v2; the one left stays.
	r.srv.Enqueue(llmserver.TextReply("A new branch."))
	if err := r.ctrl.Submit("again"); err != nil {
		t.Fatal(err)
	}
	done, _ = finish(t, r.ctrl)
	if done.Err != nil || done.State.ParentVersion == 0 || done.Info.Branches != 2 || done.Info.Branch != 2 {
		t.Fatalf("after the fork: %+v, %v", done.Info, done.Err)
	}
	tree, path, err := r.ctrl.History(done.State.Version)
	if err != nil {
		t.Fatal(err)
	}
	var versions []int
	for _, rec := range path {
		versions = append(versions, rec.Version)
	}
	want := append([]int{1, 2}, done.State.Version-1, done.State.Version)
	if len(tree.Branches) != 2 || len(versions) != 4 || versions[0] != want[0] || versions[1] != want[1] || versions[2] != want[2] || versions[3] != want[3] {
		t.Fatalf("path to the new tip: %v, want %v", versions, want)
	}
	if _, _, err := r.ctrl.History(99); !errors.Is(err, storage.ErrVersionNotFound) {
		t.Fatalf("history of a missing version: %v", err)
	}
}

func TestTwoControllersOnOneFile(t *testing.T) {
	r := newRig(t)
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	first := r.ctrl.Info().Session.ID

	// A second process (a store of its own on the same file) may look at
	// the session but not write it.
	other := openStore(t, r.db)
	look := r.controller(other, session.Config{ReadOnlyWhenBusy: true})
	if err := look.Open(first); err != nil {
		t.Fatal(err)
	}
	if !look.Info().ReadOnly {
		t.Fatal("a session another store writes must open read-only")
	}
	if err := look.Submit("hello"); !errors.Is(err, session.ErrReadOnly) {
		t.Fatalf("submit on a read-only session: %v", err)
	}
	if err := restoreErr(look, 0); !errors.Is(err, session.ErrReadOnly) {
		t.Fatalf("restore on a read-only session: %v", err)
	}
	strict := r.controller(openStore(t, r.db), session.Config{})
	if err := strict.Open(first); !errors.Is(err, storage.ErrBusy) {
		t.Fatalf("without ReadOnlyWhenBusy, a busy session is refused: %v", err)
	}

	// Each writes a session of its own, at the same time.
	if err := strict.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	r.srv.SetHandler(func(llmserver.Request) llmserver.Response { return llmserver.TextReply("Both of you, hello.") })
	for _, c := range []*session.Controller{r.ctrl, strict} {
		if err := c.Submit("hi"); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []*session.Controller{r.ctrl, strict} {
		if done, _ := finish(t, c); done.Err != nil || done.State.Phase != state.Done {
			t.Fatalf("%s: %s %v", done.State.SessionID, done.State.Phase, done.Err)
		}
	}
	list, err := look.Sessions()
	if err != nil || len(list) != 2 {
		t.Fatalf("sessions: %v %v", list, err)
	}
	for _, s := range list {
		if s.Versions != 2 || !s.Busy {
			t.Fatalf("listed %+v: each has its two versions and is held by a store other than look's", s)
		}
	}
	// Once the writer lets go, the session opens for writing.
	if err := r.ctrl.Close(); err != nil {
		t.Fatal(err)
	}
	if err := look.Open(first); err != nil || look.Info().ReadOnly {
		t.Fatalf("after the writer closed: read-only %v, %v", look.Info().ReadOnly, err)
	}
	if err := look.Delete(first); !errors.Is(err, session.ErrOpenSession) {
		t.Fatalf("deleting the open session: %v", err)
	}
}

func TestCloseInterruptsAndKeepsTheCheckpoint(t *testing.T) {
	r := newRig(t)
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	id := r.ctrl.Info().Session.ID
	c := llmserver.Chunker{}
	r.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("working"), llmserver.Block()))
	if err := r.ctrl.Submit("go"); err != nil {
		t.Fatal(err)
	}
	until(t, r.ctrl, func(ev session.Event) bool { _, ok := ev.(session.Delta); return ok })
	if err := r.ctrl.Close(); err != nil {
		t.Fatal(err)
	}
	head, err := r.store.Head(context.Background(), id)
	if err != nil || head.Phase != state.Idle {
		t.Fatalf("after Close the head is %s (%v); the interruption must be kept", head.Phase, err)
	}
	// The events end with the task's TaskDone, then ErrClosed.
	done, _ := finish(t, r.ctrl)
	if !done.Interrupted() {
		t.Fatalf("TaskDone after Close: %v", done.Err)
	}
	if _, err := r.ctrl.Next(context.Background()); !errors.Is(err, session.ErrClosed) {
		t.Fatalf("Next after the last event: %v", err)
	}
	if err := r.ctrl.Submit("more"); !errors.Is(err, session.ErrClosed) {
		t.Fatalf("submit after Close: %v", err)
	}
	// The claim went with it.
	if _, held := openStore(t, r.db).Holder(id); held {
		t.Fatal("the claim outlived Close")
	}
}

// An approval for every session of the project reaches a session the
// same controller starts later, as /new does, without asking again.
func TestAllowReachesLaterSessions(t *testing.T) {
	r := newRig(t)
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	r.ctrl.Allow("write_file")
	if err := r.ctrl.Draft(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	r.srv.Enqueue(plan("write out.txt"), writeCall("call_w1", "one"), llmserver.TextReply("Wrote it."))
	if err := r.ctrl.Submit("write out.txt"); err != nil {
		t.Fatal(err)
	}
	evs := until(t, r.ctrl, func(ev session.Event) bool {
		_, ask := ev.(session.ApprovalNeeded)
		return ask || isDone(ev)
	})
	done, ok := evs[len(evs)-1].(session.TaskDone)
	if !ok {
		r.ctrl.Cancel()
		finish(t, r.ctrl)
		t.Fatal("asked about write_file, which was allowed for every later session")
	}
	if done.Err != nil {
		t.Fatal(done.Err)
	}
	if b, err := os.ReadFile(filepath.Join(r.ws, "out.txt")); err != nil || string(b) != "one" {
		t.Fatalf("out.txt = %q, %v", b, err)
	}
}

// brokenMemories is a store whose memory log cannot be read.
type brokenMemories struct{ storage.Store }

func (brokenMemories) MemoryEvents(context.Context) ([]state.MemoryEvent, error) {
	return nil, &storage.CorruptError{Path: "retrace.db", Reason: "memory log v3: checksum mismatch"}
}

func (brokenMemories) MemoriesNow(context.Context) (state.Memories, error) {
	return state.Memories{}, &storage.CorruptError{Path: "retrace.db", Reason: "memory log v3: checksum mismatch"}
}

// A memory log that cannot be read does not stop the work: the task is
// told no memories, and the person is told why.
func TestAnUnreadableMemoryLogIsSaidAndWorkGoesOn(t *testing.T) {
	r := newRig(t)
	c := r.controller(brokenMemories{r.store}, session.Config{})
	if err := c.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	r.srv.Enqueue(llmserver.TextReply("Hello."))
	if err := c.Submit("hello"); err != nil {
		t.Fatal(err)
	}
	done, evs := finish(t, c)
	if done.Err != nil || done.State.Phase != state.Done {
		t.Fatalf("the task ended %s: %v", done.State.Phase, done.Err)
	}
	said := false
	for _, ev := range evs {
		if n, ok := ev.(session.Notice); ok && strings.Contains(n.Text, "the memories were not read") && strings.Contains(n.Text, "memory log v3") {
			said = true
		}
	}
	if !said {
		t.Fatalf("nobody was told the memories were not read: %v", evs)
	}
}

// An instruction file left out is said when the session begins: a link
// out of the project is not read, and not silently either.
func TestALeftOutInstructionFileIsSaid(t *testing.T) {
	r := newRig(t)
	secret := filepath.Join(t.TempDir(), "netrc")
	if err := os.WriteFile(secret, []byte("password hunter2"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(r.ws, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	r.srv.Enqueue(llmserver.TextReply("Hello."))
	if err := r.ctrl.Submit("hello"); err != nil {
		t.Fatal(err)
	}
	done, evs := finish(t, r.ctrl)
	if done.Err != nil {
		t.Fatal(done.Err)
	}
	said := false
	for _, ev := range evs {
		if n, ok := ev.(session.Notice); ok && strings.HasPrefix(n.Text, "instructions: "+filepath.Join(r.ws, "AGENTS.md")+" not read: it links to ") {
			said = true
		}
	}
	if !said || strings.Contains(r.srv.Requests()[0].Messages[0].Content, "hunter2") {
		t.Fatalf("said %v; events %v", said, evs)
	}
}
