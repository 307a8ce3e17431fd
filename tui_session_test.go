package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"retrace/agent/llmserver"
	"retrace/agent/llmtest"
	"retrace/agent/session"
	"retrace/agent/tools"
	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
	"retrace/themes"
	"retrace/tui"
)

// The interface wired to the real session controller through tuiDriver,
// in this process, so the race detector sees what only the end-to-end
// test in tmux reached before: keys go into the model's Update, the
// commands it returns run on goroutines of their own as the program runs
// them, their messages (the driver's reports among them) come back into
// Update, and the test reads the screen and the store.

// tuiRig is a store file, the strict fake model, a workspace, and a
// controller configured as the interface configures it.
type tuiRig struct {
	t      *testing.T
	srv    *llmtest.Server
	db, ws string
	store  *boltstore.Store
	ctrl   *session.Controller
}

func newTUIRig(t *testing.T) *tuiRig {
	t.Helper()
	r := &tuiRig{t: t, srv: llmtest.NewServer(t), db: filepath.Join(t.TempDir(), "retrace.db"), ws: t.TempDir()}
	r.store = r.openStore()
	r.ctrl = r.controller(r.store)
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

func (r *tuiRig) openStore() *boltstore.Store {
	r.t.Helper()
	st, err := boltstore.Open(r.db, boltstore.Options{})
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { st.Close() })
	return st
}

// controller is what runTUI builds: an interactive session config.
func (r *tuiRig) controller(st storage.Store) *session.Controller {
	r.t.Helper()
	ws, err := tools.NewWorkspace(r.ws)
	if err != nil {
		r.t.Fatal(err)
	}
	cfg := testConfig(r.t, "gpt-test", r.srv.URL(), "sk-test")
	c := session.New(context.Background(), st, cfg.session(ws, nil, true, &demoModel{}))
	r.t.Cleanup(func() { c.Close() })
	return c
}

// seed writes a session straight to the store: a question and its
// answer per turn. It returns the session's id.
func (r *tuiRig) seed(title string, turns ...[2]string) string {
	r.t.Helper()
	ctx := context.Background()
	info, err := r.store.Create(ctx, storage.NewSession{Title: title, Model: "gpt-test", Workspace: r.ws})
	if err != nil {
		r.t.Fatal(err)
	}
	r.commitTurns(storage.NewCursor(r.store, state.New(info.ID)), turns...)
	if err := r.store.Release(info.ID); err != nil { // writing claimed it
		r.t.Fatal(err)
	}
	return info.ID
}

func (r *tuiRig) commitTurns(cur *storage.Cursor, turns ...[2]string) {
	r.t.Helper()
	for _, tr := range turns {
		for _, ev := range []state.Event{
			{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: tr[0]}}},
			{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: tr[1]}}},
		} {
			if _, err := cur.Commit(context.Background(), ev); err != nil {
				r.t.Fatal(err)
			}
		}
	}
}

func (r *tuiRig) head(id string) state.State {
	r.t.Helper()
	s, err := r.store.Head(context.Background(), id)
	if err != nil {
		r.t.Fatal(err)
	}
	return s
}

// screenPump is the pump a test drives: it fails the test when a wait
// runs out, and keeps the notices.
type screenPump struct {
	*pump
	t *testing.T
	// notices are the NoticeMsgs commands returned, in the order handled
	// (the driver's own reports come wrapped, unseen here).
	notices []string
}

// newScreenPump starts the interface m at width×height, its pump stopped
// when the test ends (before the controller closes, which ends the
// listening).
func newScreenPump(t *testing.T, m *tui.Model, width, height int) *screenPump {
	p := &screenPump{pump: newPump(m), t: t}
	p.seen = func(msg tea.Msg) {
		if n, ok := msg.(tui.NoticeMsg); ok {
			p.notices = append(p.notices, n.Text)
		}
	}
	t.Cleanup(p.close)
	p.handle(tea.WindowSizeMsg{Width: width, Height: height})
	p.do(m.Init())
	return p
}

// open builds the interface over the rig's controller, as runTUI does,
// at width×height, and starts it.
func (r *tuiRig) open(ctrl *session.Controller, width, height int) *screenPump {
	r.t.Helper()
	m := tui.New(tuiDriver{ctrl: ctrl}, tui.Options{Palette: themes.Default(), Now: steppingClock()})
	return newScreenPump(r.t, m, width, height)
}

// steppingClock is a clock a second later at each reading. A person's
// keys come with time between them, so each one answers what is on the
// screen: the interface takes keys that come as a question opens, or
// hard on each other, as typing.
func steppingClock() func() time.Time {
	var n atomic.Int64
	return func() time.Time { return time.Unix(n.Add(1), 0) }
}

// patience is how long a wait may take before the test fails: long, so a
// machine loaded with other work does not fail the test; a wait that
// ends succeeds as soon as its condition holds.
const patience = 60 * time.Second

// until handles messages until cond holds for the screen, and fails the
// test, showing the screen, after patience.
func (p *screenPump) until(what string, cond func(screen string) bool) string {
	p.t.Helper()
	s, ok := p.waitFor(patience, cond)
	if !ok {
		p.t.Fatalf("waited %s for %s; the screen:\n%s", patience, what, s)
	}
	return s
}

// untilShown waits for every text to be on the screen.
func (p *screenPump) untilShown(texts ...string) string {
	p.t.Helper()
	return p.until(strings.Join(texts, " and "), func(s string) bool {
		for _, x := range texts {
			if !strings.Contains(s, x) {
				return false
			}
		}
		return true
	})
}

// untilResting waits for the status line's hint that nothing runs and
// nothing is to be said.
func (p *screenPump) untilResting() string {
	p.t.Helper()
	return p.until("the status line's resting hint", func(s string) bool { return strings.Contains(lastLine(s), "^S sessions") })
}

// press sends key presses by name: "enter", "ctrl+r", "down", or a
// single character.
func (p *screenPump) press(names ...string) {
	p.t.Helper()
	special := map[string]tea.Key{
		"enter": {Code: tea.KeyEnter}, "esc": {Code: tea.KeyEscape}, "down": {Code: tea.KeyDown}, "up": {Code: tea.KeyUp},
		"left": {Code: tea.KeyLeft}, "ctrl+r": {Code: 'r', Mod: tea.ModCtrl}, "ctrl+t": {Code: 't', Mod: tea.ModCtrl},
		"ctrl+s": {Code: 's', Mod: tea.ModCtrl},
	}
	for _, n := range names {
		k, ok := special[n]
		if !ok {
			if r := []rune(n); len(r) != 1 {
				p.t.Fatalf("no key %q", n)
			}
			k = tea.Key{Code: []rune(n)[0], Text: n}
		}
		if k.String() != n {
			p.t.Fatalf("key %q reads as %q", n, k.String())
		}
		_, cmd := p.m.Update(tea.KeyPressMsg(k))
		p.do(cmd)
	}
}

// send types text and presses Enter.
func (p *screenPump) send(text string) {
	p.t.Helper()
	for _, r := range text {
		_, cmd := p.m.Update(tea.KeyPressMsg(tea.Key{Code: r, Text: string(r)}))
		p.do(cmd)
	}
	p.press("enter")
}

// lastLine is the status line and, above it, the lines a message too long
// for it takes: every line under the last frame's bottom border, as one.
func lastLine(s string) string {
	lines := strings.Split(s, "\n")
	i := len(lines) - 1
	for i > 0 && !strings.HasPrefix(strings.TrimLeft(lines[i-1], " "), "╰") && len(lines)-i <= maxNoticeLines {
		i--
	}
	for j := range lines[i:] {
		lines[i+j] = strings.TrimRight(lines[i+j], " ")
	}
	return strings.Join(lines[i:], " ")
}

// maxNoticeLines bounds the lines a long message takes (the tui's own
// bound, 4), so lastLine never reads a pane as the status line.
const maxNoticeLines = 4

func writeCallReply(id, content string) llmserver.Response {
	return llmserver.ToolCallReply([]llmserver.Call{{ID: id, Name: "write_file", Args: `{"path":"out.txt","content":"` + content + `"}`}})
}

// A task whose calls are answered by keys: d denies (the model is told
// the person said no), s approves the tool for the session, and the next
// call of it runs without a question.
func TestTUIApprovalsAnsweredByKeys(t *testing.T) {
	r := newTUIRig(t)
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	r.srv.Enqueue(writeCallReply("call_w1", "one"), writeCallReply("call_w2", "two"), writeCallReply("call_w3", "three"),
		llmserver.TextReply("out.txt holds three."))
	p := r.open(r.ctrl, 120, 40)
	p.send("write out.txt")
	p.untilShown("Approve write_file?", "+one")
	out := filepath.Join(r.ws, "out.txt")
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("out.txt was written before the question was answered")
	}
	p.press("d")
	p.untilShown("Approve write_file?", "+two")
	p.press("s")
	p.untilShown("out.txt holds three.")
	s := p.untilResting()
	if strings.Contains(s, "Approve write_file?") {
		t.Fatalf("the question outlived the task:\n%s", s)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "three" {
		t.Fatalf("out.txt = %q, %v: the denied write never happens, the approved ones do", b, err)
	}
	head := r.head(r.ctrl.Info().Session.ID)
	log := head.Memory.ToolCalls
	if len(log) != 3 || log[0].Approval != state.Denied || !strings.Contains(log[0].Error, "the user said no") ||
		log[1].Approval != state.Approved || log[2].Approval != "" || !slices.Contains(head.Memory.AllowedTools, "write_file") {
		t.Fatalf("the stored tool log: %+v, allowed %v", log, head.Memory.AllowedTools)
	}
	asked := 0
	for _, m := range head.History {
		if m.Role == state.RoleTool && strings.Contains(m.Content, "the user said no") {
			asked++
		}
	}
	if asked != 1 {
		t.Fatalf("the model was told of %d denials, want 1", asked)
	}
}

// Esc mid-stream keeps what streamed and rests the session; so does Esc
// at a question, which runs nothing.
func TestTUIEscInterrupts(t *testing.T) {
	r := newTUIRig(t)
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	id := r.ctrl.Info().Session.ID
	c := llmserver.Chunker{}
	r.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("half an ans"), llmserver.Block()))
	p := r.open(r.ctrl, 120, 40)
	p.send("tell me")
	p.untilShown("half an ans")
	p.press("esc")
	s := p.untilShown("interrupted: what streamed is kept")
	if !strings.Contains(s, "half an ans") {
		t.Fatalf("what streamed is gone from the screen:\n%s", s)
	}
	head := r.head(id)
	if last := head.History[len(head.History)-1]; head.Phase != state.Idle || !strings.Contains(last.Content, "half an ans") {
		t.Fatalf("the stored head: %s, last message %q", head.Phase, last.Content)
	}

	r.srv.Enqueue(writeCallReply("call_w1", "one"))
	p.send("write out.txt")
	p.untilShown("Approve write_file?")
	p.press("esc")
	p.until("the question to go", func(s string) bool {
		return !strings.Contains(s, "Approve write_file?") && strings.Contains(s, "interrupted: what streamed is kept")
	})
	if _, err := os.Stat(filepath.Join(r.ws, "out.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the call at the question ran after Esc")
	}
	if head := r.head(id); head.Phase != state.Idle || len(head.Memory.ToolCalls) != 1 || head.Memory.ToolCalls[0].Approval == state.Approved {
		t.Fatalf("the stored head after Esc at the question: %s, %+v", head.Phase, head.Memory.ToolCalls)
	}
}

// Ctrl+R after a task that failed (the server kept answering 500 until
// the retries ran out) sends the message again; on a restored mid-task
// version it carries the task on, on a new branch.
func TestTUICtrlR(t *testing.T) {
	r := newTUIRig(t)
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	id := r.ctrl.Info().Session.ID
	fail := llmserver.Status(500, llmserver.ErrorBody("The server had an error.", "server_error", "", nil), "retry-after-ms", "1")
	r.srv.Enqueue(fail, fail, fail, fail, llmserver.TextReply("Recovered."))
	p := r.open(r.ctrl, 200, 40) // wide enough for the whole notice
	p.send("hello")
	p.until("the failure in the status line", func(s string) bool {
		st := lastLine(s)
		return strings.Contains(st, "the model server failed (HTTP 500)") && !strings.Contains(st, "retrying")
	})
	if head := r.head(id); head.Phase != state.Error || len(r.srv.Requests()) != 4 {
		t.Fatalf("after the retries: %s, %d requests", head.Phase, len(r.srv.Requests()))
	}
	p.press("ctrl+r")
	p.untilShown("Recovered.")
	s := p.untilResting()
	if strings.Contains(lastLine(s), "failed") {
		t.Fatalf("the old error still shows: %q", lastLine(s))
	}
	head := r.head(id)
	var asked []string
	for _, m := range head.History {
		if m.Role == state.RoleUser {
			asked = append(asked, m.Content)
		}
	}
	if head.Phase != state.Done || head.FinalAnswer != "Recovered." || !slices.Equal(asked, []string{"hello", "hello"}) {
		t.Fatalf("after Ctrl+R: %s %q, the person's messages %q", head.Phase, head.FinalAnswer, asked)
	}

	// v5 the message, v6 the plan, v7 set_plan answered, v8 the results
	// handed back, v9 the answer.
	r.srv.Enqueue(llmserver.ToolCallReply([]llmserver.Call{{ID: "call_plan", Name: "set_plan", Args: `{"steps":["look around"]}`}}),
		llmserver.TextReply("All is well."))
	p.send("check the project")
	p.untilShown("All is well.")
	p.untilResting()
	p.press("ctrl+t")
	p.untilShown("Viewing v9 of 9")
	p.press("left", "left")
	p.untilShown("Viewing v7 of 9")
	sent := len(r.srv.Requests())
	p.press("enter")
	p.untilShown("restored v7, in the middle of a task (executing): Ctrl+R carries it on")
	if head := r.head(id); head.Version != 7 || len(r.srv.Requests()) != sent {
		t.Fatalf("after the restore: head v%d, %d requests (a restore never carries on by itself)", head.Version, len(r.srv.Requests())-sent)
	}
	r.srv.Enqueue(llmserver.TextReply("Still well."))
	p.press("ctrl+r")
	p.untilShown("Still well.")
	s = p.untilResting()
	if head := r.head(id); head.Version != 11 || head.ParentVersion != 10 || head.FinalAnswer != "Still well." || !strings.Contains(lastLine(s), "branch 2 of 2") {
		t.Fatalf("carried on to v%d %q; status %q", head.Version, head.FinalAnswer, lastLine(s))
	}
}

// /export md and /export json write the session and say where.
func TestTUIExport(t *testing.T) {
	r := newTUIRig(t)
	id := r.seed("say hello", [2]string{"say hello", "Hello back."})
	if err := r.ctrl.Open(id); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	p := r.open(r.ctrl, 300, 40) // wide enough for the whole path in the notice
	md := filepath.Join(dir, "retrace-"+id[:8]+".md")
	p.send("/export md")
	p.untilShown("exported to " + md)
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# say hello\n", "- **Session:** `" + id + "`", "- **Version:** v2 of 2 (head)", "Hello back."} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the markdown lacks %q:\n%s", want, b)
		}
	}
	js := filepath.Join(dir, "all.json")
	p.send("/export json all.json")
	p.untilShown("exported to " + js)
	var got struct {
		Format      string `json:"format"`
		Checkpoints []struct {
			Version int    `json:"version"`
			Event   string `json:"event"`
		} `json:"checkpoints"`
	}
	b, err = os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Format != "retrace-export/1" || len(got.Checkpoints) != 2 || got.Checkpoints[0].Event != "user_message" || got.Checkpoints[1].Event != "answered" {
		t.Fatalf("the json export: %+v", got)
	}
	p.send("/export json " + filepath.Join(dir, "missing", "x.json"))
	p.untilShown("error: export:")
}

// /compact folds the turns before the last six into a summary, a version
// of its own; with nothing to fold it says so.
func TestTUICompact(t *testing.T) {
	r := newTUIRig(t)
	var turns [][2]string
	for i := 1; i <= 7; i++ {
		turns = append(turns, [2]string{"question " + string(rune('0'+i)), "answer " + string(rune('0'+i))})
	}
	id := r.seed("counting", turns...)
	if err := r.ctrl.Open(id); err != nil {
		t.Fatal(err)
	}
	r.srv.Enqueue(llmserver.TextReply("SUMMARY: question 1 was answered."))
	p := r.open(r.ctrl, 120, 40)
	p.send("/compact")
	p.until("the compaction's notice and version", func(s string) bool {
		return slices.Contains(p.notices, "older turns summarised") && strings.Contains(lastLine(s), "v15/15")
	})
	head := r.head(id)
	// No system prompt: turn k is at 2k-2, so the summary covers the
	// first question and its answer.
	if head.Version != 15 || head.SummaryThrough != 2 || head.Summary != "SUMMARY: question 1 was answered." {
		t.Fatalf("the stored head: v%d, summary through %d: %q", head.Version, head.SummaryThrough, head.Summary)
	}
	p.send("/compact")
	p.untilShown("error: nothing to summarise yet")
	if head := r.head(id); head.Version != 15 {
		t.Fatalf("a compaction with nothing to fold made v%d", head.Version)
	}
}

// In the timeline, b lists the branches; ↓ and Enter show the other
// branch's path, and Enter restores its version.
func TestTUITimelineBranchChoice(t *testing.T) {
	r := newTUIRig(t)
	ctx := context.Background()
	id := r.seed("branches", [2]string{"first question", "First answer."}, [2]string{"second question", "Second answer."})
	if err := r.store.SetHead(ctx, id, 2); err != nil {
		t.Fatal(err)
	}
	r.commitTurns(storage.NewCursor(r.store, r.head(id)), [2]string{"other question", "Other answer."})
	if err := r.store.SetHead(ctx, id, 4); err != nil {
		t.Fatal(err)
	}
	if err := r.ctrl.Open(id); err != nil {
		t.Fatal(err)
	}
	p := r.open(r.ctrl, 120, 40)
	p.press("ctrl+t")
	p.untilShown("Viewing v4 of 6 (the head) · branch 1")
	p.press("b")
	p.untilShown("branch 1   v1..v4   from the root   4 versions   (head)", "branch 2   v5..v6   from v2   2 versions")
	p.press("down", "enter")
	s := p.untilShown("Viewing v6 of 6 · branch 2")
	if !strings.Contains(s, "Other answer.") || !strings.Contains(s, "First answer.") || strings.Contains(s, "Second answer.") {
		t.Fatalf("the second branch's path is not what shows:\n%s", s)
	}
	p.press("enter")
	s = p.untilShown("restored v6")
	if head := r.head(id); head.Version != 6 || !strings.Contains(lastLine(s), "branch 2 of 2") {
		t.Fatalf("restored: head v%d, status %q", head.Version, lastLine(s))
	}
}

// The sessions dialog: d asks, and y deletes; the open session and one
// another process writes stay. n starts a session (written by its first
// message: TestTUINewSessionIsWrittenByItsFirstMessage) and lets the old
// one go.
func TestTUISessionsDialog(t *testing.T) {
	r := newTUIRig(t)
	old := r.seed("old work", [2]string{"old question", "Old answer."})
	held := r.seed("held elsewhere", [2]string{"their question", "Their answer."})
	elsewhere := r.controller(r.openStore())
	if err := elsewhere.Open(held); err != nil {
		t.Fatal(err)
	}
	current := r.seed("current work", [2]string{"current question", "Current answer."})
	if err := r.ctrl.Open(current); err != nil {
		t.Fatal(err)
	}
	p := r.open(r.ctrl, 200, 40) // wide enough for the whole error in the status line
	p.press("ctrl+s")
	p.untilShown("old work", "held elsewhere", "in use elsewhere (opens read-only)")

	// Newest first: current, held, old.
	p.press("down", "down", "d")
	p.untilShown(`Delete session ` + old[:8] + ` "old work" and all its 2 versions? (y/n)`)
	p.press("y")
	p.until("the list without old work", func(s string) bool { return strings.Contains(s, "held elsewhere") && !strings.Contains(s, "old work") })
	if _, err := r.store.Session(context.Background(), old); !errors.Is(err, storage.ErrSessionNotFound) {
		t.Fatalf("the deleted session: %v", err)
	}
	p.press("down", "d") // the list came back with the first row chosen
	p.untilShown(`Delete session ` + held[:8] + ` "held elsewhere"`)
	p.press("y")
	p.untilShown("error: ", "in use by another retrace process")
	p.press("up", "d")
	p.untilShown("this session is open; open another one before deleting it")
	for _, id := range []string{held, current} {
		if _, err := r.store.Session(context.Background(), id); err != nil {
			t.Fatalf("session %s went: %v", id, err)
		}
	}

	p.press("esc", "ctrl+s")
	p.untilShown("type to filter")
	p.press("n")
	s := p.until("a new session", func(s string) bool {
		// The dialog's frame: the welcome names the workspace, whose
		// temporary path holds the test's name.
		return !strings.Contains(s, "╭ Sessions") && !strings.Contains(lastLine(s), current[:8])
	})
	if !strings.HasPrefix(lastLine(s), "new ") || r.ctrl.Info().Session.ID != "" {
		t.Fatalf("after n the status line is %q; the controller has %q open", lastLine(s), r.ctrl.Info().Session.ID)
	}
	if _, busy := r.openStore().Holder(current); busy {
		t.Fatal("the session left is still claimed")
	}
}

// A session another process writes, opened by a second store on the same
// file: the screen says read-only, and nothing typed, retried or restored
// reaches the model or the store.
func TestTUIReadOnlySession(t *testing.T) {
	r := newTUIRig(t)
	ctx := context.Background()
	id := r.seed("theirs", [2]string{"their question", "Their answer."})
	// The writer is mid-task: a message, a plan.
	cur := storage.NewCursor(r.store, r.head(id))
	for _, ev := range []state.Event{
		{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "go on"}}},
		{Kind: state.PlanSet, Plan: []state.Step{{Text: "keep going"}}},
	} {
		if _, err := cur.Commit(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.ctrl.Open(id); err != nil {
		t.Fatal(err)
	}
	look := r.controller(r.openStore())
	if err := look.Open(id); err != nil {
		t.Fatal(err)
	}
	p := r.open(look, 120, 40)
	s := p.untilShown("read-only: another retrace process is writing this session")
	if !strings.Contains(lastLine(s), "read-only") || !strings.Contains(lastLine(s), "v4/4") {
		t.Fatalf("the status line: %q", lastLine(s))
	}
	p.send("hello")
	p.press("ctrl+r", "ctrl+t")
	p.untilShown("Viewing v4 of 4")
	p.press("left", "enter")
	s = p.untilShown("read-only: another retrace process writes this session")
	if strings.Contains(s, "error:") {
		t.Fatalf("something was tried on the read-only session:\n%s", s)
	}
	if head := r.head(id); head.Version != 4 || head.Phase != state.Executing || len(r.srv.Requests()) != 0 {
		t.Fatalf("the writer's session changed: v%d %s, %d requests", head.Version, head.Phase, len(r.srv.Requests()))
	}
}

// A session whose endpoint is remote opens with no key at all: its
// conversation, its model and its versions are there to read. Only
// sending needs the key, and then the status line names the variable the
// session records, and nothing is written.
func TestTUIReadingNeedsNoKey(t *testing.T) {
	r := newTUIRig(t)
	ctx := context.Background()
	info, err := r.store.Create(ctx, storage.NewSession{Title: "remote", Workspace: r.ws})
	if err != nil {
		t.Fatal(err)
	}
	ep := state.Endpoint{Model: "gpt-remote", BaseURL: "https://api.example.com/v1", KeyEnv: "EXAMPLE_KEY"}
	cur := storage.NewCursor(r.store, state.New(info.ID))
	for _, ev := range []state.Event{
		{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "what is here?"}}, Endpoint: &ep},
		{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: "A remote answer."}}},
	} {
		if _, err := cur.Commit(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.store.Release(info.ID); err != nil {
		t.Fatal(err)
	}

	empty := filepath.Join(t.TempDir(), "empty.toml")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(modelFlags{configPath: empty}, func(string) string { return "" })
	if err != nil {
		t.Fatalf("loading with no key: %v", err)
	}
	ws, err := tools.NewWorkspace(r.ws)
	if err != nil {
		t.Fatal(err)
	}
	ctrl := session.New(ctx, r.store, cfg.session(ws, nil, true, &demoModel{}))
	t.Cleanup(func() { ctrl.Close() })
	if err := ctrl.Open(info.ID); err != nil {
		t.Fatalf("opening to read needs no key: %v", err)
	}
	p := r.open(ctrl, 200, 40)
	p.untilShown("A remote answer.", "gpt-remote", "v2/2")
	p.send("and now?")
	s := p.until("the status line to say what to set", func(s string) bool { return strings.Contains(lastLine(s), "set EXAMPLE_KEY") })
	if head := r.head(info.ID); head.Version != 2 || len(r.srv.Requests()) != 0 {
		t.Fatalf("sending with no key wrote v%d and made %d requests:\n%s", head.Version, len(r.srv.Requests()), s)
	}
	// No task started, so the interface is at rest, not busy.
	if strings.Contains(lastLine(s), "esc cancel") {
		t.Fatalf("the interface waits for a task that never started: %q", lastLine(s))
	}
}

// Opening a session a stopped retrace left acting writes and runs
// nothing: a restore left open is asked about, and a task approved
// mid-way waits for Ctrl+R, which asks about the approved call again.
func TestTUIOpensWithoutActing(t *testing.T) {
	t.Run("restore", func(t *testing.T) {
		r := newTUIRig(t)
		if _, err := r.store.Import(context.Background(), hostileExport(t, "restore", r.ws)); err != nil {
			t.Fatal(err)
		}
		if err := r.ctrl.Open("hostile-restore"); err != nil {
			t.Fatal(err)
		}
		p := r.open(r.ctrl, 120, 40)
		p.untilShown("A restore of the workspace to v2 was left unfinished")
		nothingWritten(t, r.ws)
		p.press("k")
		p.untilShown("restored v2 (files left as they were)")
		nothingWritten(t, r.ws)
		if h := r.ctrl.Head(); h.Restoring != nil || h.Version != 2 {
			t.Fatalf("after keeping the files: v%d, restoring %v", h.Version, h.Restoring)
		}
	})
	t.Run("approval", func(t *testing.T) {
		r := newTUIRig(t)
		if _, err := r.store.Import(context.Background(), hostileExport(t, "approval", r.ws)); err != nil {
			t.Fatal(err)
		}
		if err := r.ctrl.Open("hostile-approval"); err != nil {
			t.Fatal(err)
		}
		p := r.open(r.ctrl, 120, 40)
		p.untilShown("Ctrl+R carries it on")
		nothingWritten(t, r.ws)
		r.srv.Enqueue(llmserver.TextReply("Not run."))
		p.press("ctrl+r")
		p.untilShown("Approve run_command?")
		nothingWritten(t, r.ws)
		p.press("d")
		p.untilShown("Not run.")
		p.untilResting()
		nothingWritten(t, r.ws)
	})
}
