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
// and the notes (sorted by key); the instructions name the step being
// worked on, counting from 1; the final answer is asked for with set_plan
// as the only tool.
func TestWhatTheModelIsToldThroughATask(t *testing.T) {
	r := newRig(t, agent.Options{})
	r.srv.Enqueue(
		llmserver.ToolCallReply(call("call_plan", "set_plan", `{"goal":"Tidy the notes","steps":["read a.txt","write the summary"]}`)),
		llmserver.ToolCallReply([]llmserver.Call{
			{ID: "call_n1", Name: "note", Args: `{"key":"zeta","value":"last"}`},
			{ID: "call_n2", Name: "note", Args: `{"key":"alpha","value":"first"}`},
		}),
		llmserver.ToolCallReply(call("call_n3", "note", `{"key":"zeta","value":""}`)),
		llmserver.TextReply("read it"),
		llmserver.TextReply("summary written"),
		llmserver.TextReply("All done."),
	)
	s, err := r.agent().Send(context.Background(), "tidy up\n  my   notes")
	if err != nil || s.Phase != state.Done || s.FinalAnswer != "All done." {
		t.Fatalf("phase %s answer %q: %v", s.Phase, s.FinalAnswer, err)
	}
	reqs := r.srv.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d requests, want 6", len(reqs))
	}
	sys := func(i int) string { return reqs[i].Messages[0].Content }

	// The session's prompt, then at once the working memory: no summary yet.
	mustContain(t, "the planning request", sys(0), "You work in the directory "+r.ws+";",
		"Be brief and concrete in what you write to the developer.\n\nWorking memory:\nGoal: tidy up\n  my   notes\n\nDecide how to handle the developer's latest message.")
	if strings.Contains(sys(0), "Step 1") || strings.Contains(sys(0), "Note ") {
		t.Errorf("the planning request shows a plan or notes:\n%s", sys(0))
	}
	if got := toolMessage(t, reqs[1], "call_plan"); got != "plan recorded: 2 steps; they will come one at a time" {
		t.Errorf("set_plan told the model %q", got)
	}
	mustContain(t, "the first step's request", sys(1),
		"\nGoal: Tidy the notes\nStep 1 [active]: read a.txt\nStep 2 [pending]: write the summary\n\nYou are carrying out step 1 of the plan: read a.txt\n")
	if got := toolMessage(t, reqs[2], "call_n1") + "|" + toolMessage(t, reqs[2], "call_n2"); got != "noted zeta|noted alpha" {
		t.Errorf("note told the model %q", got)
	}
	mustContain(t, "the request after the notes", sys(2), "\nStep 2 [pending]: write the summary\nNote alpha: first\nNote zeta: last\n\n")
	if got := toolMessage(t, reqs[3], "call_n3"); got != "removed note zeta" {
		t.Errorf("removing a note told the model %q", got)
	}
	mustContain(t, "the request after removing a note", sys(3), "\nNote alpha: first\n\n")
	if strings.Contains(sys(3), "zeta") {
		t.Errorf("a removed note is still shown:\n%s", sys(3))
	}
	mustContain(t, "the second step's request", sys(4),
		"\nStep 1 [done]: read a.txt\nStep 2 [active]: write the summary\nNote alpha: first\n\nYou are carrying out step 2 of the plan: write the summary\n")
	mustContain(t, "the final request", sys(5), "\nStep 2 [done]: write the summary\nNote alpha: first\n\nEvery step of the plan is done.")
	if len(reqs[0].Tools) != 8 || len(reqs[4].Tools) != 8 || !slices.Equal(reqs[5].Tools, []string{"set_plan"}) {
		t.Errorf("tools offered: planning %v, executing %v, answering %v", reqs[0].Tools, reqs[4].Tools, reqs[5].Tools)
	}
	if s.Memory.Notes["alpha"] != "first" || len(s.Memory.Notes) != 1 {
		t.Errorf("notes %v", s.Memory.Notes)
	}
}

// A plan of one step is recorded as such, and a plan revised while
// executing replaces the old one and starts again from its first step.
func TestPlanRevisedWhileExecuting(t *testing.T) {
	r := newRig(t, agent.Options{})
	r.srv.Enqueue(
		plan("look"),
		llmserver.ToolCallReply(call("call_re", "set_plan", `{"steps":["first new","second new"]}`)),
		llmserver.TextReply("did the first"),
		llmserver.TextReply("did the second"),
		llmserver.TextReply("Both done."),
	)
	s, err := r.agent().Send(context.Background(), "look around")
	if err != nil || s.Phase != state.Done {
		t.Fatalf("phase %s: %v", s.Phase, err)
	}
	reqs := r.srv.Requests()
	if got := toolMessage(t, reqs[1], "call_plan"); got != "plan recorded: 1 step; work on it now" {
		t.Errorf("a one-step plan told the model %q", got)
	}
	if got := toolMessage(t, reqs[2], "call_re"); got != "plan recorded: 2 steps; they will come one at a time" {
		t.Errorf("the revision told the model %q", got)
	}
	mustContain(t, "the request after the revision", reqs[2].Messages[0].Content,
		"\nStep 1 [active]: first new\nStep 2 [pending]: second new\n\nYou are carrying out step 1 of the plan: first new\n")
	mustContain(t, "the second step's request", reqs[3].Messages[0].Content, "You are carrying out step 2 of the plan: second new\n")
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
				llmserver.TextReply("read"), llmserver.TextReply("It is package a."))
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
		llmserver.TextReply("did it"),
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

// Asked for the final answer, the model may re-plan instead: the new plan
// is carried out, then the answer is asked for again.
func TestReplanInsteadOfAnswering(t *testing.T) {
	r := newRig(t, agent.Options{})
	r.srv.Enqueue(
		plan("first"),
		llmserver.TextReply("did the first"),
		llmserver.ToolCallReply(call("call_more", "set_plan", `{"steps":["one more"]}`)),
		llmserver.TextReply("did one more"),
		llmserver.TextReply("Everything is done."),
	)
	s, err := r.agent().Send(context.Background(), "work")
	if err != nil || s.Phase != state.Done || s.FinalAnswer != "Everything is done." {
		t.Fatalf("phase %s answer %q: %v", s.Phase, s.FinalAnswer, err)
	}
	reqs := r.srv.Requests()
	if got := toolMessage(t, reqs[3], "call_more"); got != "plan recorded: 1 step; work on it now" {
		t.Errorf("the re-plan told the model %q", got)
	}
	mustContain(t, "the request after the re-plan", reqs[3].Messages[0].Content, "You are carrying out step 1 of the plan: one more\n")
	if want := []state.Step{{Text: "one more", Status: state.StepDone}}; !slices.Equal(s.Memory.Plan, want) {
		t.Fatalf("plan %+v", s.Memory.Plan)
	}
}

// Resumed in reflecting, the agent goes on with the first step not done,
// whichever it is, before it asks for the answer.
func TestReflectingGoesOnWithAnyStepLeft(t *testing.T) {
	for _, c := range []struct {
		name string
		plan []state.Step
		step string // the step worked on next
	}{
		{"first pending", []state.Step{{Text: "a", Status: state.StepPending}, {Text: "b", Status: state.StepActive}}, "step 1 of the plan: a"},
		{"first active", []state.Step{{Text: "a", Status: state.StepActive}, {Text: "b", Status: state.StepActive}}, "step 1 of the plan: a"},
		{"second pending", []state.Step{{Text: "a", Status: state.StepDone}, {Text: "b", Status: state.StepPending}, {Text: "c", Status: state.StepActive}}, "step 2 of the plan: b"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, agent.Options{})
			ctx := context.Background()
			cur := storage.NewCursor(r.store, state.New(r.session))
			for _, ev := range []state.Event{
				{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "work"}}},
				{Kind: state.PlanSet, Plan: c.plan},
				{Kind: state.StepCompleted, Step: len(c.plan) - 1},
			} {
				if _, err := cur.Commit(ctx, ev); err != nil {
					t.Fatal(err)
				}
			}
			if p := cur.State().Phase; p != state.Reflecting {
				t.Fatalf("set up in %s", p)
			}
			r.srv.Enqueue(llmserver.TextReply("did it"), llmserver.TextReply("did it too"), llmserver.TextReply("Done."))
			if _, err := r.agent().Resume(ctx); err != nil {
				t.Fatal(err)
			}
			mustContain(t, "the first request after the resume", r.srv.Requests()[0].Messages[0].Content, "You are carrying out "+c.step+"\n")
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
		llmserver.TextReply("looked"),
		llmserver.TextReply("Looked."),
		llmserver.TextReply("Hello."),
	)
	for _, msg := range []string{"look around", "hello"} {
		if _, err := r.agent().Send(context.Background(), msg); err != nil {
			t.Fatal(err)
		}
	}
	reqs := r.srv.Requests()
	if sys := reqs[4].Messages[0].Content; !strings.Contains(sys, "\n\nWorking memory:\nGoal: hello\nNote k: v\n\nDecide how") || strings.Contains(sys, "Step 1") {
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
