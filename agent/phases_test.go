package agent_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"retrace/agent"
	"retrace/agent/llmserver"
	"retrace/state"
	"retrace/storage"
)

// toolMessage is what the model was told a call returned, in request i.
func toolMessage(t *testing.T, req llmserver.Request, id string) string {
	t.Helper()
	for _, m := range req.Messages {
		if m.Role == "tool" && m.ToolCallID == id {
			return m.Content
		}
	}
	t.Fatalf("no result for %s in %+v", id, req.Messages)
	return ""
}

// mustContain fails unless the text holds each fragment.
func mustContain(t *testing.T, what, text string, fragments ...string) {
	t.Helper()
	for _, f := range fragments {
		if !strings.Contains(text, f) {
			t.Errorf("%s does not say %q:\n%s", what, f, text)
		}
	}
}

// A task of two steps, with notes: what the model is told at each call.
// The system message carries the goal, the plan with each step's status
// and the notes (sorted by key), then the instructions: how to start in
// the first request, how to go on in every later one. Every tool is
// offered every time, and each reply is one request: four here.
func TestWhatTheModelIsToldThroughATask(t *testing.T) {
	r := newRig(t, agent.Options{})
	r.srv.Enqueue(
		llmserver.ToolCallReply(call("call_plan", "set_plan", `{"goal":"Tidy the notes","steps":["read a.txt","write the summary"]}`)),
		llmserver.ToolCallReply([]llmserver.Call{
			{ID: "call_n1", Name: "note", Args: `{"key":"zeta","value":"last"}`},
			{ID: "call_n2", Name: "note", Args: `{"key":"alpha","value":"first"}`},
		}),
		llmserver.ToolCallReply([]llmserver.Call{
			{ID: "call_n3", Name: "note", Args: `{"key":"zeta","value":""}`},
			{ID: "call_on", Name: "set_plan", Args: `{"steps":["read a.txt","write the summary"],"done":1}`},
		}),
		llmserver.TextReply("All done."),
	)
	s, err := r.agent().Send(context.Background(), "tidy up\n  my   notes")
	if err != nil || s.Phase != state.Done || s.FinalAnswer != "All done." {
		t.Fatalf("phase %s answer %q: %v", s.Phase, s.FinalAnswer, err)
	}
	reqs := r.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4: one for each of the model's replies", len(reqs))
	}
	sys := func(i int) string { return reqs[i].Messages[0].Content }

	// The session's prompt, then at once the working memory: no summary yet.
	mustContain(t, "the planning request", sys(0), "You work in the directory "+r.ws+";",
		"Be brief and concrete in what you write to the developer.\n\nWorking memory:\nGoal: tidy up\n  my   notes\n\nDecide how to handle the developer's latest message.")
	if strings.Contains(sys(0), "Step 1") || strings.Contains(sys(0), "Note ") {
		t.Errorf("the planning request shows a plan or notes:\n%s", sys(0))
	}
	if got := toolMessage(t, reqs[1], "call_plan"); got != "plan recorded: 0 of 2 steps done; now: read a.txt" {
		t.Errorf("set_plan told the model %q", got)
	}
	mustContain(t, "the request after the plan", sys(1),
		"\nGoal: Tidy the notes\nStep 1 [active]: read a.txt\nStep 2 [pending]: write the summary\n\nYou are working on the developer's latest message, with the plan above.")
	if got := toolMessage(t, reqs[2], "call_n1") + "|" + toolMessage(t, reqs[2], "call_n2"); got != "noted zeta|noted alpha" {
		t.Errorf("note told the model %q", got)
	}
	mustContain(t, "the request after the notes", sys(2), "\nStep 2 [pending]: write the summary\nNote alpha: first\nNote zeta: last\n\n")
	if got := toolMessage(t, reqs[3], "call_n3"); got != "removed note zeta" {
		t.Errorf("removing a note told the model %q", got)
	}
	if got := toolMessage(t, reqs[3], "call_on"); got != "plan recorded: 1 of 2 steps done; now: write the summary" {
		t.Errorf("moving the plan on told the model %q", got)
	}
	mustContain(t, "the request after the plan moved on", sys(3),
		"\nStep 1 [done]: read a.txt\nStep 2 [active]: write the summary\nNote alpha: first\n\nYou are working on the developer's latest message")
	if strings.Contains(sys(3), "zeta") {
		t.Errorf("a removed note is still shown:\n%s", sys(3))
	}
	for i, req := range reqs {
		if len(req.Tools) != 9 {
			t.Errorf("request %d offers %v, want all nine tools", i, req.Tools)
		}
	}
	// The answer closes the step the model was on.
	if want := []state.Step{{Text: "read a.txt", Status: state.StepDone}, {Text: "write the summary", Status: state.StepDone}}; !slices.Equal(s.Memory.Plan, want) {
		t.Errorf("plan %+v", s.Memory.Plan)
	}
	if s.Memory.Notes["alpha"] != "first" || len(s.Memory.Notes) != 1 {
		t.Errorf("notes %v", s.Memory.Notes)
	}
}

// A plan of one step is recorded as such, and a plan revised while
// executing replaces the old one, from its first step or as far as the
// model says it got.
func TestPlanRevisedWhileExecuting(t *testing.T) {
	r := newRig(t, agent.Options{})
	r.srv.Enqueue(
		plan("look"),
		llmserver.ToolCallReply(call("call_re", "set_plan", `{"steps":["first new","second new"]}`)),
		llmserver.ToolCallReply(call("call_on", "set_plan", `{"steps":["first new","second new"],"done":2}`)),
		llmserver.TextReply("Both done."),
	)
	s, err := r.agent().Send(context.Background(), "look around")
	if err != nil || s.Phase != state.Done {
		t.Fatalf("phase %s: %v", s.Phase, err)
	}
	reqs := r.srv.Requests()
	if got := toolMessage(t, reqs[1], "call_plan"); got != "plan recorded: 0 of 1 steps done; now: look" {
		t.Errorf("a one-step plan told the model %q", got)
	}
	if got := toolMessage(t, reqs[2], "call_re"); got != "plan recorded: 0 of 2 steps done; now: first new" {
		t.Errorf("the revision told the model %q", got)
	}
	mustContain(t, "the request after the revision", reqs[2].Messages[0].Content,
		"\nStep 1 [active]: first new\nStep 2 [pending]: second new\n\nYou are working on")
	if got := toolMessage(t, reqs[3], "call_on"); got != "plan recorded: all 2 steps done; answer the developer" {
		t.Errorf("the finished plan told the model %q", got)
	}
	mustContain(t, "the request after the last step", reqs[3].Messages[0].Content, "\nStep 1 [done]: first new\nStep 2 [done]: second new\n\n")
	if want := []state.Step{{Text: "first new", Status: state.StepDone}, {Text: "second new", Status: state.StepDone}}; !slices.Equal(s.Memory.Plan, want) {
		t.Errorf("plan %+v", s.Memory.Plan)
	}
}

// A model that goes straight to other tools gets a one-step plan: the
// person's message on one line, at most 200 characters.
func TestToolsWithoutAPlanMakeAOneStepPlan(t *testing.T) {
	exactly200 := strings.Repeat("abcd ", 39) + "abcde"
	for _, c := range []struct{ name, message, step string }{
		{"short", "read\n a.go", "read a.go"},
		{"200 characters", exactly200, exactly200},
		{"201 characters", exactly200 + "f", exactly200[:199] + "…"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, agent.Options{})
			if err := os.WriteFile(filepath.Join(r.ws, "a.go"), []byte("package a\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			r.srv.Enqueue(llmserver.ToolCallReply(call("call_r", "read_file", `{"path":"a.go"}`)),
				llmserver.TextReply("It is package a."))
			s, err := r.agent().Send(context.Background(), c.message)
			if err != nil || s.Phase != state.Done {
				t.Fatalf("phase %s: %v", s.Phase, err)
			}
			if want := []state.Step{{Text: c.step, Status: state.StepDone}}; !slices.Equal(s.Memory.Plan, want) {
				t.Fatalf("plan %+v, want %+v", s.Memory.Plan, want)
			}
			// The call was run, and nothing else answered.
			if log := s.Memory.ToolCalls; len(log) != 1 || log[0].ID != "call_r" || log[0].Result != "package a\n" {
				t.Fatalf("tool log %+v", log)
			}
		})
	}
}

// An invalid plan at the start leaves a one-step plan and says so; an
// invalid revision leaves the plan as it was.
func TestInvalidPlans(t *testing.T) {
	r := newRig(t, agent.Options{})
	r.srv.Enqueue(
		llmserver.ToolCallReply(call("call_bad", "set_plan", `{"steps":[]}`)),
		llmserver.ToolCallReply(call("call_bad2", "set_plan", `{"steps":["  "]}`)),
		llmserver.TextReply("Done."),
	)
	s, err := r.agent().Send(context.Background(), "do the thing")
	if err != nil || s.Phase != state.Done {
		t.Fatalf("phase %s: %v", s.Phase, err)
	}
	reqs := r.srv.Requests()
	mustContain(t, "the invalid plan's result", toolMessage(t, reqs[1], "call_bad"), "invalid plan (", "); working from a one-step plan instead")
	mustContain(t, "the invalid revision's result", toolMessage(t, reqs[2], "call_bad2"), "invalid plan: ")
	if want := []state.Step{{Text: "do the thing", Status: state.StepDone}}; !slices.Equal(s.Memory.Plan, want) {
		t.Fatalf("plan %+v", s.Memory.Plan)
	}
}

// Sessions kept by an earlier retrace, whose loop asked for a step's
// summary and then for the answer, resume under this one: a replan with
// its set_plan call is planned from, and a session left in reflecting
// asks the model to go on, with a request that ends with a user or tool
// message even when the history ends with the model's own words.
func TestSessionsOfTheEarlierLoopResume(t *testing.T) {
	ctx := context.Background()
	begin := []state.Event{
		{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "work"}}},
		{Kind: state.PlanSet, Plan: []state.Step{{Text: "first", Status: state.StepActive}}},
		{Kind: state.StepCompleted, Step: 0, Messages: []state.Message{{Role: state.RoleAssistant, Content: "did the first"}}},
	}
	replan := state.Event{Kind: state.Replan, Messages: []state.Message{{Role: state.RoleAssistant,
		ToolCalls: []state.ToolRequest{{ID: "call_more", Name: "set_plan", Arguments: `{"steps":["one more"]}`}}}}}
	for _, c := range []struct {
		name string
		then []state.Event
		last string // the role the request after the resume ends with
		plan []state.Step
	}{
		{"replan with a call", []state.Event{replan}, "tool", []state.Step{{Text: "one more", Status: state.StepDone}}},
		{"reflecting after a step's summary", nil, "user", []state.Step{{Text: "first", Status: state.StepDone}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, agent.Options{})
			cur := storage.NewCursor(r.store, state.New(r.session))
			for _, ev := range append(slices.Clone(begin), c.then...) {
				if _, err := cur.Commit(ctx, ev); err != nil {
					t.Fatal(err)
				}
			}
			r.srv.Enqueue(llmserver.TextReply("Everything is done."))
			s, err := r.agent().Resume(ctx)
			if err != nil || s.Phase != state.Done || s.FinalAnswer != "Everything is done." || len(r.srv.Requests()) != 1 {
				t.Fatalf("phase %s answer %q after %d requests: %v", s.Phase, s.FinalAnswer, len(r.srv.Requests()), err)
			}
			m := r.srv.Requests()[0].Messages
			if last := m[len(m)-1]; last.Role != c.last || (c.last == "user" && last.Content != "Go on with the task.") {
				t.Fatalf("the request ends with %+v, want a %s message", last, c.last)
			}
			if !slices.Equal(s.Memory.Plan, c.plan) {
				t.Fatalf("plan %+v, want %+v", s.Memory.Plan, c.plan)
			}
		})
	}
}

// A model call that fails ends the task in the error phase with the
// reason. What streamed before the failure is kept, marked as cut off;
// with RestartOK the call is made again from the start instead.
func TestFailedModelCalls(t *testing.T) {
	ctx := context.Background()
	c := llmserver.Chunker{}
	broken := llmserver.Stream(c.Role(), c.Text("Half an ans"), llmserver.ResetNow())

	t.Run("before any output", func(t *testing.T) {
		r := newRig(t, agent.Options{})
		r.srv.Enqueue(llmserver.Status(401, llmserver.ErrorBody("Incorrect API key provided.", "invalid_request_error", "", "invalid_api_key")))
		s, err := r.agent().Send(ctx, "hi")
		var te *agent.TaskError
		if !errors.As(err, &te) || s.Phase != state.Error || te.Message != s.ErrorMessage || !strings.Contains(s.ErrorMessage, "Incorrect API key provided.") {
			t.Fatalf("phase %s error %q: %v", s.Phase, s.ErrorMessage, err)
		}
		if last := s.History[len(s.History)-1]; last.Role != state.RoleUser {
			t.Fatalf("a failure with nothing streamed added %+v", last)
		}
	})
	t.Run("after output", func(t *testing.T) {
		r := newRig(t, agent.Options{})
		r.srv.Enqueue(broken, llmserver.TextReply("never asked for"))
		s, err := r.agent().Send(ctx, "hi")
		if err == nil || s.Phase != state.Error || len(r.srv.Requests()) != 1 {
			t.Fatalf("phase %s after %d requests: %v", s.Phase, len(r.srv.Requests()), err)
		}
		if last := s.History[len(s.History)-1]; last.Role != state.RoleAssistant || last.Content != "Half an ans\n\n[cut off: "+s.ErrorMessage+"]" {
			t.Fatalf("last message %+v, error %q", last, s.ErrorMessage)
		}
	})
	t.Run("after output, RestartOK", func(t *testing.T) {
		r := newRig(t, agent.Options{RestartOK: true})
		r.srv.Enqueue(broken, llmserver.TextReply("A whole answer."))
		s, err := r.agent().Send(ctx, "hi")
		if err != nil || s.Phase != state.Done || s.FinalAnswer != "A whole answer." || len(r.srv.Requests()) != 2 {
			t.Fatalf("phase %s answer %q after %d requests: %v", s.Phase, s.FinalAnswer, len(r.srv.Requests()), err)
		}
	})
}

// Send refuses while a task is under way, and so does Compact; Interrupt
// ends the task, and does nothing at rest; Resume at rest does nothing.
func TestBusySessions(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, agent.Options{})
	ag := r.agent()
	if s, err := ag.Resume(ctx); err != nil || s.Version != 0 || len(r.srv.Requests()) != 0 {
		t.Fatalf("resume of a new session: v%d, %d requests: %v", s.Version, len(r.srv.Requests()), err)
	}
	if err := ag.Interrupt(ctx, "restored"); err != nil || ag.State().Version != 0 {
		t.Fatalf("interrupt at rest: v%d: %v", ag.State().Version, err)
	}

	// A task waiting for approval, as a person would leave it by quitting.
	r.srv.Enqueue(plan("write"), llmserver.ToolCallReply(call("call_w", "write_file", `{"path":"x.txt","content":"x"}`)))
	ctxApprove, cancel := context.WithCancel(ctx)
	r.approve.block = cancel
	if _, err := ag.Send(ctxApprove, "write x"); !errors.Is(err, agent.ErrInterrupted) {
		t.Fatalf("send: %v", err)
	}
	waiting := versionOf(t, r, state.ApprovalRequested)
	if err := r.store.SetHead(ctx, r.session, waiting); err != nil {
		t.Fatal(err)
	}
	ag = r.agent()
	if s := ag.State(); s.Phase != state.AwaitingApproval {
		t.Fatalf("set up in %s", s.Phase)
	}
	if _, err := ag.Send(ctx, "something else"); !errors.Is(err, agent.ErrBusy) {
		t.Fatalf("send while awaiting approval: %v", err)
	}
	if err := ag.Compact(ctx); !errors.Is(err, agent.ErrBusy) {
		t.Fatalf("compact while awaiting approval: %v", err)
	}
	if err := ag.Interrupt(ctx, "a person restored this version and wrote something new"); err != nil {
		t.Fatal(err)
	}
	s := ag.State()
	if s.Phase != state.Idle || s.ParentVersion != waiting || len(s.OpenCalls()) != 0 {
		t.Fatalf("after the interrupt: v%d on v%d (want on v%d) %s, open %v", s.Version, s.ParentVersion, waiting, s.Phase, s.OpenCalls())
	}
	if c := s.Memory.ToolCalls[len(s.Memory.ToolCalls)-1]; !strings.Contains(c.Error, "a person restored this version") {
		t.Fatalf("the waiting call was answered with %q", c.Error)
	}
	if r.file("x.txt") != "" {
		t.Fatal("the write ran")
	}

	// Planning is as busy as anything else.
	cur := storage.NewCursor(r.store, s)
	if _, err := cur.Commit(ctx, state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "next"}}}); err != nil {
		t.Fatal(err)
	}
	if err := r.agent().Compact(ctx); !errors.Is(err, agent.ErrBusy) {
		t.Fatalf("compact while planning: %v", err)
	}
}

// Notes outlive their task; the plan does not: the next task's planning
// request shows the new goal and the notes, and no step.
func TestNotesOutliveTheirTask(t *testing.T) {
	r := newRig(t, agent.Options{})
	r.srv.Enqueue(
		plan("look"),
		llmserver.ToolCallReply(call("call_n", "note", `{"key":"k","value":"v"}`)),
		llmserver.TextReply("Looked."),
		llmserver.TextReply("Hello."),
	)
	for _, msg := range []string{"look around", "hello"} {
		if _, err := r.agent().Send(context.Background(), msg); err != nil {
			t.Fatal(err)
		}
	}
	reqs := r.srv.Requests()
	if sys := reqs[3].Messages[0].Content; !strings.Contains(sys, "\n\nWorking memory:\nGoal: hello\nNote k: v\n\nDecide how") || strings.Contains(sys, "Step 1") {
		t.Errorf("the next task's planning request:\n%s", sys)
	}
}

// An empty message is refused before anything is kept or sent: strict
// servers refuse a user message without content, and once in the
// history it would go with every later request.
func TestEmptyMessageIsRefused(t *testing.T) {
	r := newRig(t, agent.Options{})
	for _, msg := range []string{"", " \n\t "} {
		s, err := r.agent().Send(context.Background(), msg)
		if !errors.Is(err, agent.ErrEmptyMessage) || s.Version != 0 || len(r.srv.Requests()) != 0 {
			t.Fatalf("Send(%q): v%d, %d requests: %v", msg, s.Version, len(r.srv.Requests()), err)
		}
	}
	r.srv.Enqueue(llmserver.TextReply("Hi."))
	if s, err := r.agent().Send(context.Background(), " hi "); err != nil || s.FinalAnswer != "Hi." {
		t.Fatalf("a message with content: %q: %v", s.FinalAnswer, err)
	}
}
