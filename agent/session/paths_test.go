package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"retrace/agent"
	"retrace/agent/llmserver"
	"retrace/agent/session"
	"retrace/state"
	"retrace/storage"
)

// The paths here were reached only by the end-to-end test in tmux, in a
// process of its own, where the race detector never looked.

// turn sends text, answers it with reply, and fails unless the task ends
// done.
func (r *rig) turn(c *session.Controller, text, reply string) session.TaskDone {
	r.t.Helper()
	r.srv.Enqueue(llmserver.TextReply(reply))
	if err := c.Submit(text); err != nil {
		r.t.Fatal(err)
	}
	done, _ := finish(r.t, c)
	if done.Err != nil || done.State.Phase != state.Done {
		r.t.Fatalf("%q ended %s: %v", text, done.State.Phase, done.Err)
	}
	return done
}

func isStateAt(v int) func(session.Event) bool {
	return func(ev session.Event) bool {
		sc, ok := ev.(session.StateChanged)
		return ok && sc.State.Version == v
	}
}

func planCall(id, args string) llmserver.Response {
	return llmserver.ToolCallReply([]llmserver.Call{{ID: id, Name: "set_plan", Args: args}})
}

func stepTexts(s state.State) []string {
	var out []string
	for _, st := range s.Memory.Plan {
		out = append(out, st.Text)
	}
	return out
}

// A session another process writes opens read-only: it can be looked at
// (head, history, export) but nothing that writes it is allowed, and no
// request goes to the model.
func TestReadOnlySessionRefusesEveryWrite(t *testing.T) {
	r := newRig(t)
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	r.turn(r.ctrl, "say hello", "Hello.")
	id := r.ctrl.Info().Session.ID

	look := r.controller(openStore(t, r.db), session.Config{ReadOnlyWhenBusy: true})
	if err := look.Open(id); err != nil {
		t.Fatal(err)
	}
	info := look.Info()
	if !info.ReadOnly || info.Session.ID != id || info.Session.Versions != 2 {
		t.Fatalf("opened %+v: want session %s, read-only, with its 2 versions", info, id)
	}
	if head := look.Head(); head.Version != 2 || head.FinalAnswer != "Hello." {
		t.Fatalf("a read-only session shows the writer's head: v%d %q", head.Version, head.FinalAnswer)
	}
	before := len(r.srv.Requests())
	for name, err := range map[string]error{
		"Submit": look.Submit("hello?"), "Resume": look.Resume(), "Restore": restoreErr(look, 1), "Compact": look.Compact(),
	} {
		if !errors.Is(err, session.ErrReadOnly) {
			t.Errorf("%s on a read-only session: %v, want ErrReadOnly", name, err)
		}
	}
	if n := len(r.srv.Requests()); n != before {
		t.Fatalf("a read-only session sent %d requests to the model", n-before)
	}
	// Looking is allowed: the history and an export.
	if _, path, err := look.History(2); err != nil || len(path) != 2 {
		t.Fatalf("history of a read-only session: %d versions, %v", len(path), err)
	}
	if _, err := look.WriteExport("json", filepath.Join(t.TempDir(), "look.json")); err != nil {
		t.Fatalf("export of a read-only session: %v", err)
	}
	// The writer still writes it.
	if done := r.turn(r.ctrl, "again", "Hello again."); done.State.Version != 4 {
		t.Fatalf("the writer after a reader looked: v%d", done.State.Version)
	}

	// A session nobody else holds opens for writing, even from a
	// controller that had a read-only one open.
	r.srv.Enqueue(llmserver.TextReply("Yours."))
	if err := look.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	if look.Info().ReadOnly {
		t.Fatal("a new session of this controller's own is read-only")
	}
	if err := look.Submit("mine"); err != nil {
		t.Fatalf("submit to a session of its own: %v", err)
	}
	if done, _ := finish(t, look); done.Err != nil || done.Info.ReadOnly {
		t.Fatalf("task in its own session: %v, read-only %v", done.Err, done.Info.ReadOnly)
	}
}

// Compact folds every turn but the last six into a summary, one
// checkpoint, by a model call that sees only the folded turns; later
// requests carry the summary instead of them.
func TestCompactFoldsTheOlderTurns(t *testing.T) {
	r := newRig(t)
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 6; i++ {
		r.turn(r.ctrl, "turn "+string(rune('0'+i)), "answer "+string(rune('0'+i)))
	}
	before := len(r.srv.Requests())
	if err := r.ctrl.Compact(); !errors.Is(err, agent.ErrNothingToSummarise) {
		t.Fatalf("compact with six turns: %v, want ErrNothingToSummarise (the last six are kept)", err)
	}
	if n := len(r.srv.Requests()); n != before {
		t.Fatal("compact with nothing to fold asked the model")
	}
	r.turn(r.ctrl, "turn 7", "answer 7")
	r.srv.Enqueue(llmserver.TextReply("SUMMARY: the user counted to one."))
	if err := r.ctrl.Compact(); err != nil {
		t.Fatal(err)
	}
	evs := until(t, r.ctrl, isStateAt(15))
	noticed := false
	for _, ev := range evs {
		if n, ok := ev.(session.Notice); ok && strings.Contains(n.Text, "summarising 2 older messages") {
			// Turn 1 and answer 1; the system prompt is never folded. It
			// is passing: the summary's checkpoint ends it.
			noticed = n.Passing
		}
	}
	if !noticed {
		t.Errorf("no notice says what is summarised: %v", evs)
	}
	reqs := r.srv.Requests()
	asked := reqs[len(reqs)-1].Messages
	folded := asked[len(asked)-1].Content
	if !strings.Contains(folded, "turn 1") || !strings.Contains(folded, "answer 1") || strings.Contains(folded, "turn 2") {
		t.Fatalf("the summariser must see turn 1 and nothing after it:\n%s", folded)
	}
	head, err := r.store.Head(context.Background(), r.ctrl.Info().Session.ID)
	if err != nil {
		t.Fatal(err)
	}
	// History: system, then turn k at 2k-1 and its answer at 2k; the
	// summary covers everything before turn 2.
	if head.Version != 15 || head.Phase != state.Done || head.SummaryThrough != 3 || head.Summary != "SUMMARY: the user counted to one." {
		t.Fatalf("stored head v%d %s, summary through %d: %q", head.Version, head.Phase, head.SummaryThrough, head.Summary)
	}
	if r.ctrl.Head().Version != 15 {
		t.Fatalf("the controller's head is v%d after the compaction", r.ctrl.Head().Version)
	}
	r.turn(r.ctrl, "turn 8", "answer 8")
	reqs = r.srv.Requests()
	next := reqs[len(reqs)-1].Messages
	if !strings.Contains(next[0].Content, "SUMMARY: the user counted to one.") {
		t.Fatalf("the next request's system text lacks the summary:\n%s", next[0].Content)
	}
	for _, m := range next[1:] {
		if m.Content == "turn 1" || m.Content == "answer 1" {
			t.Fatalf("the next request still sends the folded turns: %+v", next)
		}
	}
	if next[1].Content != "turn 2" {
		t.Fatalf("the next request starts its turns at %q, want turn 2", next[1].Content)
	}
}

// A compaction has the session to itself, and Cancel stops it without a
// checkpoint.
func TestCompactionIsOneOperationAndCancels(t *testing.T) {
	r := newRig(t)
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 7; i++ {
		r.turn(r.ctrl, "turn "+string(rune('0'+i)), "answer "+string(rune('0'+i)))
	}
	r.srv.Enqueue(llmserver.Stream(llmserver.Chunker{}.Role(), llmserver.Block()))
	sent := len(r.srv.Requests())
	errc := make(chan error, 1)
	go func() { errc <- r.ctrl.Compact() }()
	// The summariser streams nothing to show, so its request is the sign
	// that the compaction is under way.
	waitFor(t, "the summariser's request", func() bool { return len(r.srv.Requests()) > sent })
	if err := r.ctrl.Submit("meanwhile"); !errors.Is(err, session.ErrRunning) {
		t.Fatalf("submit during a compaction: %v, want ErrRunning", err)
	}
	if err := restoreErr(r.ctrl, 2); !errors.Is(err, session.ErrRunning) {
		t.Fatalf("restore during a compaction: %v, want ErrRunning", err)
	}
	r.ctrl.Cancel()
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("a cancelled compaction reported success")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Cancel did not stop the compaction")
	}
	if h := r.ctrl.Head(); h.Version != 14 || h.Summary != "" {
		t.Fatalf("after a cancelled compaction the head is v%d, summary %q", h.Version, h.Summary)
	}
	if done := r.turn(r.ctrl, "after", "still here"); done.State.Version != 16 {
		t.Fatalf("the next task after the compaction: v%d", done.State.Version)
	}
}

// WriteExport writes the head's conversation as markdown, or every
// version as JSON, and says where.
func TestWriteExportMarkdownAndJSON(t *testing.T) {
	r := newRig(t)
	if _, err := r.ctrl.WriteExport("md", ""); !errors.Is(err, session.ErrNoSession) {
		t.Fatalf("export with no session open: %v", err)
	}
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	r.turn(r.ctrl, "say hello", "Hello back.")
	r.turn(r.ctrl, "say bye", "Goodbye.")
	id := r.ctrl.Info().Session.ID
	// The markdown is the conversation at the head, so a restore shows.
	if err := restoreErr(r.ctrl, 2); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	where, err := r.ctrl.WriteExport("md", "")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "retrace-"+id[:8]+".md"); where != want {
		t.Fatalf("markdown went to %s, want %s (named after the session, in the current directory)", where, want)
	}
	md := readFile(t, where, 0o600)
	for _, want := range []string{"# say hello\n", "- **Session:** `" + id + "`", "- **Version:** v2 of 4 (head)", "say hello", "Hello back."} {
		if !strings.Contains(md, want) {
			t.Errorf("the markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "Goodbye.") {
		t.Errorf("the markdown shows a version after the head:\n%s", md)
	}

	path := filepath.Join(t.TempDir(), "all.json")
	if where, err = r.ctrl.WriteExport("json", path); err != nil || where != path {
		t.Fatalf("json export to %s: %s, %v", path, where, err)
	}
	var got struct {
		Format  string `json:"format"`
		Session struct {
			ID       string `json:"id"`
			Head     int    `json:"head"`
			Versions int    `json:"versions"`
		} `json:"session"`
		Checkpoints []struct {
			Version int    `json:"version"`
			Parent  int    `json:"parent"`
			Event   string `json:"event"`
			Data    struct {
				Kind string `json:"kind"`
			} `json:"data"`
		} `json:"checkpoints"`
	}
	if err := json.Unmarshal([]byte(readFile(t, path, 0o600)), &got); err != nil {
		t.Fatal(err)
	}
	if got.Format != "retrace-export/1" || got.Session.ID != id || got.Session.Head != 2 || got.Session.Versions != 4 {
		t.Fatalf("json export header: %+v", got)
	}
	wantEvents := []string{"user_message", "answered", "user_message", "answered"}
	if len(got.Checkpoints) != 4 {
		t.Fatalf("json export has %d checkpoints, want every one of the 4", len(got.Checkpoints))
	}
	for i, c := range got.Checkpoints {
		if c.Version != i+1 || c.Parent != i || c.Event != wantEvents[i] {
			t.Errorf("checkpoint %d: %+v, want v%d after v%d by %s", i, c, i+1, i, wantEvents[i])
		}
	}

	if _, err := r.ctrl.WriteExport("pdf", filepath.Join(dir, "x.pdf")); err == nil {
		t.Fatal("an unknown format was exported")
	}
	if _, err := os.Stat(filepath.Join(dir, "x.pdf")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("an unknown format left a file: %v", err)
	}
	if _, err := r.ctrl.WriteExport("md", filepath.Join(dir, "missing", "x.md")); err == nil {
		t.Fatal("an export into a missing directory reported success")
	}
	// An export is written beside its file under a temporary name and
	// renamed: nothing else stays.
	for dir, want := range map[string]string{dir: "retrace-" + id[:8] + ".md", filepath.Dir(path): "all.json"} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 || entries[0].Name() != want {
			t.Errorf("%s holds %v; want only %s", dir, entries, want)
		}
	}
}

// waitFor polls cond until it holds, and fails the test after 20 s
// rather than wait for ever.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 20s for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func readFile(t *testing.T, path string, mode os.FileMode) string {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != mode {
		t.Errorf("%s has mode %v, want %v: an export may hold secrets", path, fi.Mode().Perm(), mode)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A restored version in the middle of a task stays there until the person
// says: Resume carries it on, on a new branch, from what that version
// knew; a new message records it as interrupted first.
func TestResumeOfARestoredMidTaskVersion(t *testing.T) {
	r := newRig(t)
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	// v1 the message, v2 the plan, v3 set_plan answered, v4 the results
	// handed back, v5 the answer.
	r.srv.Enqueue(planCall("call_plan", `{"steps":["look around"]}`), llmserver.TextReply("Looked: nothing odd. All is well."))
	if err := r.ctrl.Submit("check the project"); err != nil {
		t.Fatal(err)
	}
	if done, _ := finish(t, r.ctrl); done.Err != nil || done.State.Version != 5 {
		t.Fatalf("the first task ended at v%d: %v", done.State.Version, done.Err)
	}
	if err := restoreErr(r.ctrl, 3); err != nil {
		t.Fatal(err)
	}
	if h := r.ctrl.Head(); h.Version != 3 || h.Phase != state.Executing {
		t.Fatalf("restored v%d %s, want v3 executing", h.Version, h.Phase)
	}
	if info := r.ctrl.Info(); info.Session.Head != 3 || info.Session.Phase != state.Executing {
		t.Fatalf("the store's head after the restore: v%d %s", info.Session.Head, info.Session.Phase)
	}
	sent := len(r.srv.Requests())
	r.srv.Enqueue(llmserver.TextReply("Still well."))
	if err := r.ctrl.Resume(); err != nil {
		t.Fatal(err)
	}
	done, _ := finish(t, r.ctrl)
	if done.Err != nil || done.State.Phase != state.Done || done.State.FinalAnswer != "Still well." {
		t.Fatalf("resumed: %s %q %v", done.State.Phase, done.State.FinalAnswer, done.Err)
	}
	if done.State.Version != 7 || done.Info.Branches != 2 || done.Info.Branch != 2 {
		t.Fatalf("resumed to v%d on branch %d of %d, want v7 on a second branch", done.State.Version, done.Info.Branch, done.Info.Branches)
	}
	_, path, err := r.ctrl.History(7)
	if err != nil {
		t.Fatal(err)
	}
	var versions []int
	for _, rec := range path {
		versions = append(versions, rec.Version)
	}
	if !slices.Equal(versions, []int{1, 2, 3, 6, 7}) {
		t.Fatalf("the resumed branch's path: %v, want 1 2 3 6 7", versions)
	}
	// The first request carried on from v3: the abandoned branch's reply
	// is not in it.
	first := r.srv.Requests()[sent]
	for _, m := range first.Messages {
		if strings.Contains(m.Content, "nothing odd") || strings.Contains(m.Content, "All is well") {
			t.Fatalf("the resumed task was sent the other branch's %q", m.Content)
		}
	}
	if !strings.Contains(first.Messages[0].Content, "Step 1 [active]: look around") {
		t.Fatalf("the resumed request does not carry on step 1:\n%s", first.Messages[0].Content)
	}

	// Resuming a session at rest ends at once, asking nothing.
	sent = len(r.srv.Requests())
	if err := r.ctrl.Resume(); err != nil {
		t.Fatal(err)
	}
	if done, _ := finish(t, r.ctrl); done.Err != nil || done.State.Version != 7 || len(r.srv.Requests()) != sent {
		t.Fatalf("resume at rest: v%d %v, %d requests", done.State.Version, done.Err, len(r.srv.Requests())-sent)
	}

	// A new message on a restored mid-task version interrupts it first.
	if err := restoreErr(r.ctrl, 3); err != nil {
		t.Fatal(err)
	}
	r.srv.Enqueue(llmserver.TextReply("Something else, then."))
	if err := r.ctrl.Submit("never mind"); err != nil {
		t.Fatal(err)
	}
	done, evs := finish(t, r.ctrl)
	if done.Err != nil || done.State.FinalAnswer != "Something else, then." {
		t.Fatalf("the new message: %v", done.Err)
	}
	first9 := evs[0].(session.StateChanged).State
	if first9.Version != 8 || first9.ParentVersion != 3 || first9.Phase != state.Idle {
		t.Fatalf("the first checkpoint after the new message: v%d from v%d %s, want v8 from v3 idle", first9.Version, first9.ParentVersion, first9.Phase)
	}
	_, path, err = r.ctrl.History(8)
	if err != nil {
		t.Fatal(err)
	}
	if ev := path[len(path)-1].Data; ev.Kind != state.Interrupted || !strings.Contains(ev.Text, "a new message replaced") {
		t.Fatalf("v8 is %s %q, want the unfinished task recorded as interrupted", ev.Kind, ev.Text)
	}
}

// Cancel while a question waits: the call is not run, the task rests
// interrupted, and an answer given after that approves nothing.
func TestCancelWhileAwaitingApproval(t *testing.T) {
	r := newRig(t)
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(r.ws, "out.txt")
	r.srv.Enqueue(writeCall("call_w1", "one"))
	if err := r.ctrl.Submit("write out.txt"); err != nil {
		t.Fatal(err)
	}
	until(t, r.ctrl, func(ev session.Event) bool { _, ok := ev.(session.ApprovalNeeded); return ok })
	r.ctrl.Cancel()
	done, _ := finish(t, r.ctrl)
	if !done.Interrupted() || done.State.Phase != state.Idle {
		t.Fatalf("cancel at the question: %s %v", done.State.Phase, done.Err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the call waiting for approval ran after Cancel: %v", err)
	}
	head, err := r.store.Head(context.Background(), done.State.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	log := head.Memory.ToolCalls
	if len(log) != 1 || log[0].ID != "call_w1" || !log[0].Finished() || log[0].Approval == state.Approved || !strings.Contains(log[0].Error, "interrupted") {
		t.Fatalf("the stored tool log after the cancel: %+v", log)
	}

	// A late answer is void: the next task's call is asked about again.
	r.ctrl.Decide(agent.Decision{Approved: true})
	r.srv.Enqueue(writeCall("call_w2", "two"), llmserver.TextReply("Not written."), llmserver.TextReply("Nothing was written."))
	if err := r.ctrl.Submit("try again"); err != nil {
		t.Fatal(err)
	}
	evs := until(t, r.ctrl, func(ev session.Event) bool {
		_, ask := ev.(session.ApprovalNeeded)
		return ask || isDone(ev)
	})
	if ask, ok := evs[len(evs)-1].(session.ApprovalNeeded); !ok || ask.Call.ID != "call_w2" {
		t.Fatalf("the next call was not asked about: %T", evs[len(evs)-1])
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("an answer given before the question approved it")
	}
	r.ctrl.Decide(agent.Decision{Approved: false, Reason: "no"})
	done, _ = finish(t, r.ctrl)
	if done.Err != nil || done.State.Phase != state.Done {
		t.Fatalf("after the denial: %s %v", done.State.Phase, done.Err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("out.txt was written: the late answer approved the call the person denied")
	}
	if log := done.State.Memory.ToolCalls; log[len(log)-1].ID != "call_w2" || log[len(log)-1].Approval != state.Denied {
		t.Fatalf("the second call in the log: %+v, want it denied", log[len(log)-1])
	}
}

// The model may replace the plan mid-task: the new steps take over at
// once, the revision is a checkpoint of its own, and the call is answered.
func TestPlanRevisedMidTask(t *testing.T) {
	r := newRig(t)
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	r.srv.Enqueue(
		planCall("call_p1", `{"steps":["read a","read b"]}`),
		planCall("call_p2", `{"goal":"fix c instead","steps":["read c","fix c","test c"]}`),
		planCall("call_p3", `{"goal":"fix c instead","steps":["read c","fix c","test c"],"done":2}`),
		llmserver.TextReply("c is fixed."),
	)
	if err := r.ctrl.Submit("look at a and b"); err != nil {
		t.Fatal(err)
	}
	done, evs := finish(t, r.ctrl)
	if done.Err != nil || done.State.FinalAnswer != "c is fixed." {
		t.Fatalf("ended %s: %v", done.State.Phase, done.Err)
	}
	var plans [][]string
	for _, ev := range evs {
		if sc, ok := ev.(session.StateChanged); ok {
			if p := stepTexts(sc.State); len(plans) == 0 || !slices.Equal(plans[len(plans)-1], p) {
				plans = append(plans, p)
			}
		}
	}
	want := [][]string{nil, {"read a", "read b"}, {"read c", "fix c", "test c"}} // the third plan only moves the second on
	if len(plans) != len(want) || !slices.Equal(plans[1], want[1]) || !slices.Equal(plans[2], want[2]) {
		t.Fatalf("the plans the events showed: %q, want %q", plans, want)
	}
	s := done.State
	if s.Memory.CurrentGoal != "fix c instead" {
		t.Errorf("goal %q: the revision's goal replaces the old", s.Memory.CurrentGoal)
	}
	for i, st := range s.Memory.Plan {
		if st.Status != state.StepDone {
			t.Errorf("step %d (%s) is %s at the end", i+1, st.Text, st.Status)
		}
	}
	var revision state.ToolCall
	for _, c := range s.Memory.ToolCalls {
		if c.ID == "call_p2" {
			revision = c
		}
	}
	if !revision.Finished() || revision.Error != "" || !strings.Contains(revision.Result, "0 of 3 steps done; now: read c") {
		t.Fatalf("the revising call in the log: %+v", revision)
	}
	// The step after the revision is the new plan's first, and the model
	// is told so.
	reqs := r.srv.Requests()
	if sys := reqs[2].Messages[0].Content; !strings.Contains(sys, "Step 1 [active]: read c\nStep 2 [pending]: fix c") {
		t.Fatalf("the request after the revision:\n%s", sys)
	}
	_, path, err := r.ctrl.History(s.Version)
	if err != nil {
		t.Fatal(err)
	}
	revised := 0
	for _, rec := range path {
		if rec.Data.Kind == state.PlanSet && rec.Phase == state.Executing && len(rec.Data.Plan) == 3 {
			revised++
		}
	}
	if revised != 2 {
		t.Fatalf("%d stored plan_set checkpoints carry the three steps, want 2: the revision and the move on", revised)
	}
}

// Sessions lists every session, newest first, saying which another
// process holds; Delete removes one, but never the open one or one
// another process writes.
func TestSessionsAndDelete(t *testing.T) {
	r := newRig(t)
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	r.turn(r.ctrl, "old work", "done")
	old := r.ctrl.Info().Session.ID
	elsewhere := r.controller(openStore(t, r.db), session.Config{})
	if err := elsewhere.Create(storage.NewSession{Title: "held elsewhere"}); err != nil {
		t.Fatal(err)
	}
	held := elsewhere.Info().Session.ID
	if err := r.ctrl.Create(storage.NewSession{Title: "current"}); err != nil {
		t.Fatal(err)
	}
	open := r.ctrl.Info().Session.ID

	list, err := r.ctrl.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		id   string
		busy bool
	}
	var got []row
	for _, s := range list {
		got = append(got, row{s.ID, s.Busy})
	}
	want := []row{{open, false}, {held, true}, {old, false}}
	if !slices.Equal(got, want) {
		t.Fatalf("sessions (id, busy): %v, want newest first %v", got, want)
	}
	if list[2].Versions != 2 || list[2].Title != "old work" {
		t.Fatalf("listed %+v", list[2])
	}

	if err := r.ctrl.Delete(open); !errors.Is(err, session.ErrOpenSession) {
		t.Fatalf("deleting the open session: %v", err)
	}
	if err := r.ctrl.Delete(held); !errors.Is(err, storage.ErrBusy) {
		t.Fatalf("deleting a session another store writes: %v", err)
	}
	if err := r.ctrl.Delete(old); err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.Session(context.Background(), old); !errors.Is(err, storage.ErrSessionNotFound) {
		t.Fatalf("the deleted session is still there: %v", err)
	}
	for _, id := range []string{open, held} {
		if _, err := r.store.Session(context.Background(), id); err != nil {
			t.Fatalf("session %s went with a refused delete: %v", id, err)
		}
	}
	if list, _ := r.ctrl.Sessions(); len(list) != 2 {
		t.Fatalf("after the delete: %d sessions listed", len(list))
	}
	if err := r.ctrl.Delete(old); !errors.Is(err, storage.ErrSessionNotFound) {
		t.Fatalf("deleting it again: %v", err)
	}
	// The open session is unharmed: it still takes a task.
	r.turn(r.ctrl, "still open", "yes")
}
