package agent_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"retrace/agent"
	"retrace/agent/llm"
	"retrace/agent/llmserver"
	"retrace/agent/llmtest"
	"retrace/agent/tools"
	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// rig is an agent on a real store, real tools in a temporary workspace and
// the fake model server.
type rig struct {
	t          testing.TB
	srv        *llmtest.Server
	store      *boltstore.Store
	dbPath, ws string
	session    string
	obs        *recorder
	approve    *approver
	opts       agent.Options
	// doer, when set, is the model client's HTTP client.
	doer interface {
		Do(*http.Request) (*http.Response, error)
	}
	// sleep, when set, is the model client's wait between retries; by
	// default it does not wait.
	sleep func(context.Context, time.Duration) error
	// maxCalls, when set, is the most calls one reply may make.
	maxCalls int
}

func newRig(t testing.TB, opts agent.Options) *rig {
	t.Helper()
	r := &rig{t: t, srv: llmtest.NewServer(t), dbPath: filepath.Join(t.TempDir(), "retrace.db"), ws: t.TempDir(),
		obs: &recorder{}, approve: &approver{}, opts: opts}
	r.opts.Workspace = r.ws
	st, err := boltstore.Open(r.dbPath, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r.store = st
	info, err := st.Create(context.Background(), storage.NewSession{Title: "test"})
	if err != nil {
		t.Fatal(err)
	}
	r.session = info.ID
	t.Cleanup(func() {
		if v := r.srv.Violations(); len(v) != 0 {
			t.Errorf("requests a strict server would reject: %v", v)
		}
		if err := boltstore.Verify(context.Background(), r.dbPath); err != nil {
			t.Errorf("store: %v", err)
		}
	})
	return r
}

// agent returns an agent at the session's head, as a fresh process would
// make one.
func (r *rig) agent() *agent.Agent {
	r.t.Helper()
	head, err := r.store.Head(context.Background(), r.session)
	if err != nil {
		r.t.Fatal(err)
	}
	ws, err := tools.NewWorkspace(r.ws)
	if err != nil {
		r.t.Fatal(err)
	}
	sleep := r.sleep
	if sleep == nil {
		sleep = func(context.Context, time.Duration) error { return nil }
	}
	model := llm.New(llm.Config{BaseURL: r.srv.URL(), APIKey: "sk-test", Model: "gpt-test", HTTPClient: r.doer, Sleep: sleep, MaxCalls: r.maxCalls})
	return agent.New(storage.NewCursor(r.store, head), model, tools.New(ws, tools.Options{}), r.approve, r.obs, r.opts)
}

func (r *rig) file(name string) string {
	b, err := os.ReadFile(filepath.Join(r.ws, name))
	if err != nil {
		return ""
	}
	return string(b)
}

type recorder struct {
	// limit, when set, replaces maxVersions: a benchmark that makes
	// thousands of checkpoints on purpose.
	limit    int
	mu       sync.Mutex
	states   []state.State
	deltas   strings.Builder
	notices  []string
	onDelta  func()
	onState  func(state.State)
	onNotice func()
}

// maxVersions is more checkpoints than any test makes: a session past it
// is an agent in a loop, which had better fail now than at the test
// binary's timeout.
const maxVersions = 1000

func (o *recorder) State(s state.State) {
	if limit := cmp.Or(o.limit, maxVersions); s.Version > limit {
		panic(fmt.Sprintf("the agent is in a loop: %d checkpoints, the last %s", s.Version, s))
	}
	o.mu.Lock()
	o.states = append(o.states, s)
	f := o.onState
	o.mu.Unlock()
	if f != nil {
		f(s)
	}
}
func (o *recorder) Delta(_ state.Phase, _ llm.DeltaKind, text string) {
	o.mu.Lock()
	o.deltas.WriteString(text)
	f := o.onDelta
	o.mu.Unlock()
	if f != nil {
		f()
	}
}
func (o *recorder) Retry(llm.Retry)     {}
func (o *recorder) Working(text string) { o.Notice(text) }
func (o *recorder) Notice(text string) {
	o.mu.Lock()
	o.notices = append(o.notices, text)
	f := o.onNotice
	o.mu.Unlock()
	if f != nil {
		f()
	}
}

type approver struct {
	mu        sync.Mutex
	decisions []agent.Decision // taken in order; none left: deny
	asked     []string
	whys      []string // each question's ApprovalRequest.Why
	// block, when set, is called instead of deciding, as a person who
	// quits at the question: the ctx it cancels is the answer.
	block func()
	// err, when set, is returned instead of a decision.
	err error
}

func (a *approver) Approve(ctx context.Context, req agent.ApprovalRequest) (agent.Decision, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, req.Call.Name)
	a.whys = append(a.whys, req.Why)
	if len(a.asked) > maxVersions {
		panic(fmt.Sprintf("the agent is in a loop: %d questions, the last about %s", len(a.asked), req.Call.ID))
	}
	if a.block != nil {
		a.block()
		<-ctx.Done()
		return agent.Decision{}, ctx.Err()
	}
	if a.err != nil {
		return agent.Decision{}, a.err
	}
	if len(a.decisions) == 0 {
		return agent.Decision{Reason: "no"}, nil
	}
	d := a.decisions[0]
	a.decisions = a.decisions[1:]
	return d, nil
}

func call(id, name, args string) []llmserver.Call {
	return []llmserver.Call{{ID: id, Name: name, Args: args}}
}

func plan(steps ...string) llmserver.Response {
	quoted := make([]string, len(steps))
	for i, s := range steps {
		quoted[i] = `"` + s + `"`
	}
	return llmserver.ToolCallReply(call("call_plan", "set_plan", `{"steps":[`+strings.Join(quoted, ",")+`]}`))
}

func TestPlanToolAnswer(t *testing.T) {
	r := newRig(t, agent.Options{})
	if err := os.WriteFile(filepath.Join(r.ws, "a.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.srv.Enqueue(
		plan("read a.go"),
		llmserver.ToolCallReply(call("call_read", "read_file", `{"path":"a.go"}`)),
		llmserver.TextReply("a.go is a main package."),
	)
	s, err := r.agent().Send(context.Background(), "what is in a.go?")
	if err != nil {
		t.Fatal(err)
	}
	if s.Phase != state.Done || s.FinalAnswer != "a.go is a main package." {
		t.Fatalf("phase %s answer %q", s.Phase, s.FinalAnswer)
	}
	if len(s.Memory.Plan) != 1 || s.Memory.Plan[0].Status != state.StepDone {
		t.Fatalf("plan %+v", s.Memory.Plan)
	}
	log := s.Memory.ToolCalls
	if len(log) != 2 || log[1].Name != "read_file" || log[1].Result != "package main\n" || log[1].StartedAt.IsZero() || !log[1].Finished() {
		t.Fatalf("tool log %+v", log)
	}
	// A plan, one tool round and the answer: three replies, three
	// requests, none added by the loop.
	reqs := r.srv.Requests()
	if s.Iteration != 3 || len(reqs) != 3 {
		t.Fatalf("iteration %d, %d requests; want 3 model replies and 3 requests", s.Iteration, len(reqs))
	}
	// What the model saw last: the whole exchange, every call answered,
	// the read's result last.
	last := reqs[len(reqs)-1]
	if len(last.Messages) != 6 || last.Messages[5].Role != "tool" || last.Messages[5].Content != "package main\n" {
		t.Fatalf("last request: %+v", last.Messages)
	}
	// Every checkpoint is in the store, and the head is what the agent holds.
	head, err := r.store.Head(context.Background(), r.session)
	if err != nil || head.Version != s.Version || head.FinalAnswer != s.FinalAnswer {
		t.Fatalf("store head v%d, agent v%d: %v", head.Version, s.Version, err)
	}
	// Nine checkpoints, each shown to the observer in order: the message,
	// the plan, set_plan's result, the results handed back, the read_file
	// call, its start, its result, the results handed back, the answer.
	want := []state.EventKind{state.UserMessage, state.PlanSet, state.ToolFinished, state.ToolsDone,
		state.Continue, state.ToolStarted, state.ToolFinished, state.ToolsDone, state.Answered}
	tree, err := r.store.Tree(context.Background(), r.session)
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != len(want) || len(r.obs.states) != len(want) || len(tree.Nodes) != len(want) {
		t.Fatalf("v%d, %d states observed, %d versions stored; want %d", s.Version, len(r.obs.states), len(tree.Nodes), len(want))
	}
	for i, n := range tree.Nodes {
		if n.Version != i+1 || n.Event != want[i] || r.obs.states[i].Version != i+1 {
			t.Fatalf("version %d: %s, observed v%d; want v%d %s", n.Version, n.Event, r.obs.states[i].Version, i+1, want[i])
		}
	}
}

func TestDirectAnswer(t *testing.T) {
	r := newRig(t, agent.Options{})
	r.srv.Enqueue(llmserver.TextReply("Hello! How can I help?"))
	s, err := r.agent().Send(context.Background(), "hi")
	if err != nil || s.Phase != state.Done || s.FinalAnswer != "Hello! How can I help?" || s.Version != 2 {
		t.Fatalf("v%d %s %q %v", s.Version, s.Phase, s.FinalAnswer, err)
	}
	if r.obs.deltas.String() != "Hello! How can I help?" {
		t.Fatalf("streamed %q", r.obs.deltas.String())
	}
	req := r.srv.Requests()[0]
	if req.Messages[0].Role != "system" || !strings.Contains(req.Messages[0].Content, r.ws) || !req.IncludeUsage || !req.Stream {
		t.Fatalf("first request: %+v", req)
	}
}

func TestApprovalDeniedAndGiven(t *testing.T) {
	r := newRig(t, agent.Options{})
	r.srv.Enqueue(
		plan("write the file"),
		llmserver.ToolCallReply(call("call_w1", "write_file", `{"path":"out.txt","content":"one"}`)),
		llmserver.ToolCallReply(call("call_w2", "write_file", `{"path":"out.txt","content":"two"}`)),
		llmserver.TextReply("Done: out.txt holds two."),
	)
	r.approve.decisions = []agent.Decision{{Approved: false, Reason: "not that"}, {Approved: true}}
	s, err := r.agent().Send(context.Background(), "write out.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.file("out.txt"); got != "two" {
		t.Fatalf("out.txt = %q; the denied write must not happen, the approved one must", got)
	}
	log := s.Memory.ToolCalls
	if log[1].Approval != state.Denied || !strings.Contains(log[1].Error, "not that") || log[2].Approval != state.Approved {
		t.Fatalf("tool log %+v", log)
	}
	// The model was told of the denial.
	var told bool
	for _, m := range r.srv.Requests()[2].Messages {
		told = told || (m.Role == "tool" && m.ToolCallID == "call_w1" && strings.Contains(m.Content, "denied"))
	}
	if !told || len(r.approve.asked) != 2 {
		t.Fatalf("denial told %v, asked %v", told, r.approve.asked)
	}
}

func TestAllowedToolsAreNotAsked(t *testing.T) {
	r := newRig(t, agent.Options{Allowed: []string{"run_command"}})
	r.srv.Enqueue(
		plan("run it"),
		llmserver.ToolCallReply(call("call_c", "run_command", `{"command":"echo hi"}`)),
		llmserver.TextReply("It printed hi."),
	)
	s, err := r.agent().Send(context.Background(), "run echo hi")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.approve.asked) != 0 || !strings.Contains(s.Memory.ToolCalls[1].Result, "hi") {
		t.Fatalf("asked %v, result %q", r.approve.asked, s.Memory.ToolCalls[1].Result)
	}
}

// "Approve for the session" is a checkpoint: a later call of the same tool
// is not asked, in this task or the next, in this process or a resumed one;
// rolled back to before the approval, the question comes again.
func TestApprovalForTheSessionIsVersioned(t *testing.T) {
	r := newRig(t, agent.Options{})
	ctx := context.Background()
	r.srv.Enqueue(
		plan("write twice"),
		llmserver.ToolCallReply(call("call_w1", "write_file", `{"path":"out.txt","content":"one"}`)),
		llmserver.ToolCallReply(call("call_w2", "write_file", `{"path":"out.txt","content":"two"}`)),
		llmserver.TextReply("out.txt holds two."),
	)
	r.approve.decisions = []agent.Decision{{Approved: true, Always: true}}
	if _, err := r.agent().Send(ctx, "write out.txt twice"); err != nil {
		t.Fatal(err)
	}
	if got := r.file("out.txt"); got != "two" || len(r.approve.asked) != 1 {
		t.Fatalf("out.txt = %q after %d questions; want two after one", got, len(r.approve.asked))
	}

	// A fresh agent on the stored head, as after a restart.
	r.srv.Enqueue(
		plan("write three"),
		llmserver.ToolCallReply(call("call_w3", "write_file", `{"path":"out.txt","content":"three"}`)),
		llmserver.TextReply("out.txt holds three."),
	)
	if _, err := r.agent().Send(ctx, "now three"); err != nil {
		t.Fatal(err)
	}
	if got := r.file("out.txt"); got != "three" || len(r.approve.asked) != 1 {
		t.Fatalf("after a resume: out.txt = %q, asked %v", got, r.approve.asked)
	}

	// Back to the version that asked, before the answer.
	tree, err := r.store.Tree(ctx, r.session)
	if err != nil {
		t.Fatal(err)
	}
	asked := -1
	for _, n := range tree.Nodes {
		if n.Event == state.ApprovalRequested && asked < 0 {
			asked = n.Version
		}
	}
	if err := r.store.SetHead(ctx, r.session, asked-1); err != nil {
		t.Fatal(err)
	}
	r.srv.Enqueue(llmserver.TextReply("I could not write."))
	s, err := r.agent().Resume(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.approve.asked) != 2 || s.Memory.AllowedTools != nil || r.file("out.txt") != "three" {
		t.Fatalf("after the rollback: asked %v, allowed %v, out.txt %q", r.approve.asked, s.Memory.AllowedTools, r.file("out.txt"))
	}
}

func TestModelMistakesBecomeToolResults(t *testing.T) {
	r := newRig(t, agent.Options{})
	r.srv.Enqueue(
		plan("look around"),
		llmserver.ToolCallReply([]llmserver.Call{
			{ID: "call_1", Name: "write_filewrite_file", Args: `{}`},
			{ID: "call_2", Name: "read_file", Args: `{'path': 'x'}`},
			{ID: "call_3", Name: "read_file", Args: `{"path":"missing.go"}`},
			{ID: "call_4", Name: "note", Args: `{"key":"lang","value":"go"}`},
			{ID: "call_5", Name: "note", Args: `{"key":" ","value":"x"}`},
		}),
		llmserver.TextReply("I could not read anything."),
	)
	s, err := r.agent().Send(context.Background(), "look")
	if err != nil {
		t.Fatal(err)
	}
	errs := map[string]string{}
	for _, c := range s.Memory.ToolCalls {
		errs[c.ID] = c.Error
	}
	if !strings.Contains(errs["call_1"], "unknown tool") || !strings.Contains(errs["call_2"], "not valid JSON") || errs["call_3"] == "" || errs["call_4"] != "" || !strings.HasPrefix(errs["call_5"], "invalid note: ") {
		t.Fatalf("errors %v", errs)
	}
	if s.Memory.Notes["lang"] != "go" || len(s.Memory.Notes) != 1 {
		t.Fatalf("notes %v", s.Memory.Notes)
	}
}

func TestIterationLimit(t *testing.T) {
	r := newRig(t, agent.Options{MaxIterations: 3})
	r.srv.Enqueue(
		plan("loop"),
		llmserver.ToolCallReply(call("call_1", "list_files", `{}`)),
		llmserver.ToolCallReply(call("call_2", "list_files", `{}`)),
	)
	s, err := r.agent().Send(context.Background(), "loop forever")
	var te *agent.TaskError
	if !errors.As(err, &te) || s.Phase != state.Error || !strings.Contains(s.ErrorMessage, "iteration limit") {
		t.Fatalf("phase %s error %q (%v)", s.Phase, s.ErrorMessage, err)
	}
	if len(r.srv.Requests()) != 3 {
		t.Fatalf("%d model calls, want 3", len(r.srv.Requests()))
	}
}

// A crash while a tool ran: the resumed agent records the call as
// interrupted, does not run it again, and goes on.
func TestResumeAfterCrashMidTool(t *testing.T) {
	r := newRig(t, agent.Options{Allowed: []string{"write_file"}})
	ctx := context.Background()
	cur := storage.NewCursor(r.store, state.New(r.session))
	for _, ev := range []state.Event{
		{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "write x"}}},
		{Kind: state.PlanSet, Plan: []state.Step{{Text: "write x", Status: state.StepActive}}},
		{Kind: state.AssistantMessage, Messages: []state.Message{{Role: state.RoleAssistant, ToolCalls: []state.ToolRequest{
			{ID: "call_w", Name: "write_file", Arguments: `{"path":"x.txt","content":"x"}`}}}}},
		{Kind: state.ToolStarted, Tool: &state.ToolCall{ID: "call_w"}},
	} {
		if _, err := cur.Commit(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	r.srv.Enqueue(llmserver.TextReply("The write was interrupted; x.txt may not exist."))
	s, err := r.agent().Resume(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.file("x.txt") != "" {
		t.Fatal("the interrupted write ran again")
	}
	c := s.Memory.ToolCalls[0]
	if !c.Finished() || !strings.Contains(c.Error, "interrupted") || s.Phase != state.Done {
		t.Fatalf("phase %s, call %+v", s.Phase, c)
	}
	if m := r.srv.Requests()[0].Messages; m[len(m)-1].Role != "tool" || !strings.Contains(m[len(m)-1].Content, "not run again") {
		t.Fatalf("the model was not told: %+v", m[len(m)-1])
	}
}

// Cancel mid-stream keeps what streamed, checkpoints interrupted and
// leaves a history the next request can carry.
func TestCancelMidStream(t *testing.T) {
	r := newRig(t, agent.Options{})
	c := llmserver.Chunker{}
	r.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("Half an ans"), llmserver.Block()))
	ctx, cancel := context.WithCancel(context.Background())
	r.obs.onDelta = cancel
	ag := r.agent()
	s, err := ag.Send(ctx, "tell me a long story")
	if !errors.Is(err, agent.ErrInterrupted) || s.Phase != state.Idle {
		t.Fatalf("phase %s err %v", s.Phase, err)
	}
	last := s.History[len(s.History)-1]
	if last.Role != state.RoleAssistant || !strings.HasPrefix(last.Content, "Half an ans") {
		t.Fatalf("partial text lost: %+v", last)
	}
	r.obs.onDelta = nil
	r.srv.Enqueue(llmserver.TextReply("Short story."))
	if s, err := ag.Send(context.Background(), "a short one then"); err != nil || s.Phase != state.Done {
		t.Fatalf("after cancel: %s %v", s.Phase, err)
	}
}

// Cancel while a command runs stops it and answers the call.
func TestCancelMidTool(t *testing.T) {
	r := newRig(t, agent.Options{Allowed: []string{"run_command"}})
	r.srv.Enqueue(plan("wait"), llmserver.ToolCallReply(call("call_s", "run_command", `{"command":"sleep 30"}`)))
	ctx, cancel := context.WithCancel(context.Background())
	r.obs.onState = func(s state.State) {
		if n := len(s.Memory.ToolCalls); n > 1 && !s.Memory.ToolCalls[n-1].StartedAt.IsZero() {
			cancel()
		}
	}
	s, err := r.agent().Send(ctx, "wait a while")
	if !errors.Is(err, agent.ErrInterrupted) || len(s.OpenCalls()) != 0 {
		t.Fatalf("err %v open %v", err, s.OpenCalls())
	}
	if c := s.Memory.ToolCalls[1]; !c.Finished() || !strings.Contains(c.Error, "interrupted") {
		t.Fatalf("call %+v", c)
	}
}

// A model that asks for a gated tool a hundred times gets a hundred
// questions: a denial is never remembered as a standing answer.
func TestEveryGatedCallIsAsked(t *testing.T) {
	r := newRig(t, agent.Options{MaxIterations: 200})
	const n = 100
	r.srv.Enqueue(plan("write it"))
	for i := range n {
		r.srv.Enqueue(llmserver.ToolCallReply(call(fmt.Sprintf("call_%d", i), "write_file", `{"path":"out.txt","content":"x"}`)))
	}
	r.srv.Enqueue(llmserver.TextReply("Nothing was written."))
	s, err := r.agent().Send(context.Background(), "write out.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.approve.asked) != n || r.file("out.txt") != "" {
		t.Fatalf("asked %d times for %d calls; out.txt %q", len(r.approve.asked), n, r.file("out.txt"))
	}
	denied := 0
	for _, c := range s.Memory.ToolCalls {
		if c.Approval == state.Denied {
			denied++
		}
	}
	if denied != n {
		t.Fatalf("%d denials recorded, want %d", denied, n)
	}
}
