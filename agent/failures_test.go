package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"retrace/agent"
	"retrace/agent/llmserver"
	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// storedHead opens the session's file afresh and returns its head.
func (r *rig) storedHead() state.State {
	r.t.Helper()
	st, err := boltstore.Open(r.dbPath, boltstore.Options{})
	if err != nil {
		r.t.Fatal(err)
	}
	defer st.Close()
	head, err := st.Head(context.Background(), r.session)
	if err != nil {
		r.t.Fatal(err)
	}
	return head
}

// lastCalls reports whether the last message is the assistant's call id.
func lastCalls(s state.State, id string) bool {
	if len(s.History) == 0 {
		return false
	}
	m := s.History[len(s.History)-1]
	return m.Role == state.RoleAssistant && len(m.ToolCalls) > 0 && m.ToolCalls[0].ID == id
}

// When a checkpoint cannot be kept (here: the store is closed under the
// agent), the task stops where it is: the error says which checkpoint, the
// state is the last one kept, no tool runs whose start was not kept, and
// nothing more is asked of the model.
func TestAFailedCheckpointStopsTheTask(t *testing.T) {
	c := llmserver.Chunker{}
	for _, tc := range []struct {
		name   string
		script []llmserver.Response
		// arm sets up when the store is closed; close closes it.
		arm  func(r *rig, close func(), cancel context.CancelFunc)
		kind string // the checkpoint that could not be kept
	}{
		{"the person's message", nil, func(r *rig, close func(), _ context.CancelFunc) { close() }, "user_message"},
		{"a plan from the planning reply", []llmserver.Response{llmserver.Stream(c.Role(), c.Text("Planning."),
			c.ToolStart(0, "call_plan", "set_plan"), c.ToolArgs(0, `{"steps":["a"]}`), c.Finish("tool_calls"), llmserver.Done())},
			func(r *rig, close func(), _ context.CancelFunc) { r.obs.onDelta = close }, "plan_set"},
		{"a tool's start", []llmserver.Response{plan("write"), gatedCall("write_file", 1)},
			func(r *rig, close func(), _ context.CancelFunc) {
				r.obs.onState = func(s state.State) {
					if lastCalls(s, gatedID("write_file", 1)) {
						close()
					}
				}
			}, "tool_started"},
		{"a revised plan", []llmserver.Response{plan("look"), llmserver.ToolCallReply(call("call_re", "set_plan", `{"steps":["b"]}`))},
			func(r *rig, close func(), _ context.CancelFunc) {
				r.obs.onState = func(s state.State) {
					if lastCalls(s, "call_re") {
						close()
					}
				}
			}, "plan_set"},
		{"a note", []llmserver.Response{plan("look"), llmserver.ToolCallReply(call("call_n", "note", `{"key":"k","value":"v"}`))},
			func(r *rig, close func(), _ context.CancelFunc) {
				r.obs.onState = func(s state.State) {
					if lastCalls(s, "call_n") {
						close()
					}
				}
			}, "note_set"},
		{"the failure of a model call", []llmserver.Response{llmserver.Stream(c.Role(), c.Text("Half"), llmserver.ResetNow())},
			func(r *rig, close func(), _ context.CancelFunc) { r.obs.onDelta = close }, "failed"},
		{"the interruption", []llmserver.Response{llmserver.Stream(c.Role(), c.Text("Half"), llmserver.Block())},
			func(r *rig, close func(), cancel context.CancelFunc) {
				r.obs.onDelta = func() { close(); cancel() }
			}, "interrupted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, agent.Options{Allowed: []string{"write_file"}})
			r.prepareGated()
			r.srv.Enqueue(tc.script...)
			ag := r.agent()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var kept state.State
			closed := false
			tc.arm(r, func() {
				if !closed {
					closed, kept = true, ag.State()
					r.store.Close()
				}
			}, cancel)
			requests := len(tc.script)
			s, err := ag.Send(ctx, "go")
			if err == nil || err.Error() != "keep "+tc.kind+" checkpoint: store is closed" {
				t.Fatalf("err %v, want the %s checkpoint not kept", err, tc.kind)
			}
			var te *agent.TaskError
			if errors.As(err, &te) || errors.Is(err, agent.ErrInterrupted) {
				t.Fatalf("a checkpoint not kept is reported as %T", err)
			}
			if head := r.storedHead(); s.Version != kept.Version || head.Version != kept.Version || head.Phase != kept.Phase {
				t.Fatalf("agent at v%d, store at v%d (%s), closed at v%d (%s)", s.Version, head.Version, head.Phase, kept.Version, kept.Phase)
			}
			if r.ran("write_file", 1) {
				t.Fatal("the write ran though its start was not kept")
			}
			if n := len(r.srv.Requests()); n != requests {
				t.Fatalf("%d requests, want %d", n, requests)
			}
		})
	}
}

// Interrupt says so when it cannot keep its checkpoint.
func TestInterruptWithoutAStore(t *testing.T) {
	r := newRig(t, agent.Options{})
	ctx := context.Background()
	cur := storage.NewCursor(r.store, state.New(r.session))
	if _, err := cur.Commit(ctx, state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "go"}}}); err != nil {
		t.Fatal(err)
	}
	ag := r.agent()
	r.store.Close()
	if err := ag.Interrupt(ctx, "restored"); err == nil || err.Error() != "keep interrupted checkpoint: store is closed" {
		t.Fatalf("interrupt: %v", err)
	}
	if head := r.storedHead(); head.Phase != state.Planning {
		t.Fatalf("stored head %s", head.Phase)
	}
}

// A session that ended in the error phase stays there on Resume, which
// reports the error again and asks nothing of the model.
func TestResumeInTheErrorPhase(t *testing.T) {
	r := newRig(t, agent.Options{})
	r.srv.Enqueue(llmserver.Status(401, llmserver.ErrorBody("Incorrect API key provided.", "invalid_request_error", "", "invalid_api_key")))
	s, err := r.agent().Send(context.Background(), "hi")
	if err == nil || s.Phase != state.Error {
		t.Fatalf("phase %s: %v", s.Phase, err)
	}
	s2, err := r.agent().Resume(context.Background())
	var te *agent.TaskError
	if !errors.As(err, &te) || te.Message != s.ErrorMessage || s2.Version != s.Version || len(r.srv.Requests()) != 1 {
		t.Fatalf("resume: v%d (was v%d), %d requests: %v", s2.Version, s.Version, len(r.srv.Requests()), err)
	}
}

// A summary that cannot be made fails the task and says why, whether it
// was asked for near the window or after an overflow.
func TestSummariserFailures(t *testing.T) {
	broken := llmserver.Status(400, llmserver.ErrorBody("Summaries are not allowed today.", "invalid_request_error", "", nil))
	overflow := llmserver.Status(400, llmserver.ErrorBody("This model's maximum context length is 8192 tokens.",
		"invalid_request_error", "messages", "context_length_exceeded"))
	for _, c := range []struct {
		name   string
		window int
		script []llmserver.Response
	}{
		{"near the window", 600, []llmserver.Response{broken, llmserver.TextReply("never asked for")}},
		{"after an overflow", 0, []llmserver.Response{overflow, broken, llmserver.TextReply("never asked for")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, agent.Options{})
			r.chat(7)
			before := len(r.srv.Requests())
			r.opts.ContextWindow = c.window
			r.srv.Enqueue(c.script...)
			s, err := r.agent().Send(context.Background(), "question 7")
			if err == nil || s.Phase != state.Error || !strings.HasPrefix(s.ErrorMessage, "summarising older turns: ") ||
				!strings.Contains(s.ErrorMessage, "Summaries are not allowed today.") || s.Summary != "" {
				t.Fatalf("phase %s, error %q, summary %q", s.Phase, s.ErrorMessage, s.Summary)
			}
			if n := len(r.srv.Requests()) - before; n != len(c.script)-1 {
				t.Fatalf("%d requests, want %d", n, len(c.script)-1)
			}
		})
	}
}

// Resumed in executing with no call open (every step already settled),
// the agent hands the results back and the model answers: one request.
func TestExecutingWithEveryStepSettled(t *testing.T) {
	r := newRig(t, agent.Options{})
	ctx := context.Background()
	cur := storage.NewCursor(r.store, state.New(r.session))
	for _, ev := range []state.Event{
		{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "work"}}},
		{Kind: state.PlanSet, Plan: []state.Step{{Text: "a", Status: state.StepDone}, {Text: "b", Status: state.StepSkipped}, {Text: "c", Status: state.StepDone}}},
	} {
		if _, err := cur.Commit(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	r.srv.Enqueue(llmserver.TextReply("All settled."))
	s, err := r.agent().Resume(ctx)
	if err != nil || s.Phase != state.Done || s.FinalAnswer != "All settled." || len(r.srv.Requests()) != 1 {
		t.Fatalf("phase %s answer %q after %d requests: %v", s.Phase, s.FinalAnswer, len(r.srv.Requests()), err)
	}
	mustContain(t, "the request", r.srv.Requests()[0].Messages[0].Content, "When the work is done, reply with the final answer")
}

// What the approver says other than a decision: an error fails the task
// (the call neither runs nor counts as denied); a cancellation, even with
// the task's own context alive, interrupts it.
func TestApproverErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		err   error
		phase state.Phase
	}{
		{"an error", errors.New("no terminal to ask"), state.Error},
		{"a cancellation", context.Canceled, state.Idle},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, agent.Options{})
			r.prepareGated()
			r.approve.err = c.err
			r.srv.Enqueue(plan("write"), gatedCall("write_file", 1))
			s, err := r.agent().Send(context.Background(), "write")
			if s.Phase != c.phase || len(r.srv.Requests()) != 2 || r.ran("write_file", 1) {
				t.Fatalf("phase %s after %d requests, ran %v: %v", s.Phase, len(r.srv.Requests()), r.ran("write_file", 1), err)
			}
			call := callByID(t, s, gatedID("write_file", 1))
			if call.Approval != state.AwaitingDecision || !call.Finished() {
				t.Fatalf("the call %+v", call)
			}
			// Nothing had streamed: the history ends with the call's answer.
			if last := s.History[len(s.History)-1]; last.Role != state.RoleTool {
				t.Fatalf("last message %+v", last)
			}
			var te *agent.TaskError
			switch c.phase {
			case state.Error:
				if !errors.As(err, &te) || te.Message != "no terminal to ask" || !strings.Contains(call.Error, "no terminal to ask") {
					t.Fatalf("err %v, call error %q", err, call.Error)
				}
			default:
				if !errors.Is(err, agent.ErrInterrupted) || !strings.Contains(call.Error, "interrupted") {
					t.Fatalf("err %v, call error %q", err, call.Error)
				}
			}
		})
	}
}

// A retry the model client was told to stop waiting for (its Sleep
// failed, the task's context still alive) interrupts the task.
func TestStoppedRetryInterrupts(t *testing.T) {
	r := newRig(t, agent.Options{})
	r.sleep = func(context.Context, time.Duration) error { return errors.New("stop waiting") }
	r.srv.Enqueue(llmserver.RateLimit("1"), llmserver.TextReply("never asked for"))
	s, err := r.agent().Send(context.Background(), "hi")
	if !errors.Is(err, agent.ErrInterrupted) || s.Phase != state.Idle || len(r.srv.Requests()) != 1 {
		t.Fatalf("phase %s after %d requests: %v", s.Phase, len(r.srv.Requests()), err)
	}
}
