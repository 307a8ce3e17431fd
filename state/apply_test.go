package state_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"retrace/state"
	"retrace/state/statetest"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func apply(t testing.TB, s state.State, evs ...state.Event) state.State {
	t.Helper()
	for _, ev := range evs {
		next, err := state.Apply(s, ev)
		if err != nil {
			t.Fatalf("apply %s in %s: %v", ev.Kind, s.Phase, err)
		}
		s = next
	}
	return s
}

func userMsg(text string) state.Event {
	return state.Event{Kind: state.UserMessage, At: t0, Messages: []state.Message{{Role: state.RoleUser, Content: text}}}
}

func assistantCalls(ids ...string) state.Event {
	m := state.Message{Role: state.RoleAssistant, Content: "let me look"}
	for _, id := range ids {
		m.ToolCalls = append(m.ToolCalls, state.ToolRequest{ID: id, Name: "read_file", Arguments: `{"path":"` + id + `.go"}`})
	}
	return state.Event{Kind: state.AssistantMessage, At: t0, Messages: []state.Message{m}}
}

func tool(kind state.EventKind, id string, at time.Time) state.Event {
	return state.Event{Kind: kind, At: at, Tool: &state.ToolCall{ID: id}}
}

func assistantFinish(id string) state.Event {
	ev := tool(state.ToolFinished, id, t0)
	ev.Tool.Result = "ok"
	return ev
}

func executing(t *testing.T) state.State {
	return apply(t, state.New("s1"),
		userMsg("fix the build"),
		state.Event{Kind: state.PlanSet, At: t0, Plan: []state.Step{{Text: "read main.go"}, {Text: "fix it"}}},
	)
}

func TestUserMessageStartsATask(t *testing.T) {
	s := apply(t, state.New("s1"), userMsg("fix the build"))
	if s.Iteration != 0 || s.Memory.CurrentGoal != "fix the build" || s.Phase != state.Planning {
		t.Fatalf("got iteration %d goal %q phase %s", s.Iteration, s.Memory.CurrentGoal, s.Phase)
	}
	s = apply(t, s, state.Event{Kind: state.Answered, At: t0, Messages: []state.Message{{Role: state.RoleAssistant, Content: "done"}}})
	if s.FinalAnswer != "done" {
		t.Fatalf("final answer %q", s.FinalAnswer)
	}
	s = apply(t, s, userMsg("again"))
	if s.FinalAnswer != "" || s.Memory.Plan != nil || s.Memory.CurrentGoal != "again" {
		t.Fatalf("a new task must clear the old answer and plan: %+v", s)
	}
}

func TestToolCallLifecycle(t *testing.T) {
	s := apply(t, executing(t), assistantCalls("a", "b"))
	if got := len(s.OpenCalls()); got != 2 {
		t.Fatalf("open calls %d, want 2", got)
	}
	s = apply(t, s, tool(state.ToolStarted, "a", t0.Add(time.Second)))
	fin := tool(state.ToolFinished, "a", t0.Add(3*time.Second))
	fin.Tool.Result = "package main"
	s = apply(t, s, fin)

	last := s.History[len(s.History)-1]
	if last.Role != state.RoleTool || last.ToolCallID != "a" || last.Content != "package main" || last.Name != "read_file" {
		t.Fatalf("tool message derived wrongly: %+v", last)
	}
	c := s.Memory.ToolCalls[0]
	if c.Name != "read_file" || c.Arguments != `{"path":"a.go"}` || c.DurationMS != 2000 || !c.Finished() {
		t.Fatalf("tool log entry: %+v", c)
	}
	if open := s.OpenCalls(); len(open) != 1 || open[0].ID != "b" {
		t.Fatalf("open calls after answering a: %+v", open)
	}

	for name, ev := range map[string]state.Event{
		"second answer to a":          fin,
		"a call nobody made":          tool(state.ToolStarted, "zzz", t0),
		"a message while b is open":   {Kind: state.AssistantMessage, At: t0, Messages: []state.Message{{Role: state.RoleAssistant, Content: "hm"}}},
		"a tool message sent by hand": {Kind: state.AssistantMessage, At: t0, Messages: []state.Message{{Role: state.RoleTool, Content: "x", ToolCallID: "b"}}},
	} {
		if _, err := state.Apply(s, ev); !errors.Is(err, state.ErrInvalidEvent) {
			t.Errorf("%s: got %v, want ErrInvalidEvent", name, err)
		}
	}
}

func TestInterruptAndFailureCloseOpenCalls(t *testing.T) {
	for _, kind := range []state.EventKind{state.Interrupted, state.Failed} {
		s := apply(t, executing(t), assistantCalls("a", "b"), tool(state.ToolStarted, "a", t0))
		s = apply(t, s, state.Event{Kind: kind, At: t0.Add(time.Second), Text: "stopped",
			Messages: []state.Message{{Role: state.RoleAssistant, Content: "partial"}}})
		if open := s.OpenCalls(); len(open) != 0 {
			t.Fatalf("%s left calls open: %+v", kind, open)
		}
		n := len(s.History)
		if s.History[n-3].ToolCallID != "a" || s.History[n-2].ToolCallID != "b" || s.History[n-1].Content != "partial" {
			t.Fatalf("%s: want tool answers for a and b, then the partial text; got %+v", kind, s.History[n-3:])
		}
		if !s.Memory.ToolCalls[0].Finished() || s.Memory.ToolCalls[0].Error == "" {
			t.Fatalf("%s: running call not marked finished with an error: %+v", kind, s.Memory.ToolCalls[0])
		}
		// The next task must be accepted: the history is whole again.
		apply(t, s, userMsg("try again"))
	}
}

func TestApprovalDenialAnswersTheCall(t *testing.T) {
	s := apply(t, executing(t), assistantCalls("w"), tool(state.ApprovalRequested, "w", t0))
	if s.Phase != state.AwaitingApproval || s.Memory.ToolCalls[0].Approval != state.AwaitingDecision {
		t.Fatalf("phase %s approval %q", s.Phase, s.Memory.ToolCalls[0].Approval)
	}
	if _, err := state.Apply(s, tool(state.ToolStarted, "w", t0)); err == nil {
		t.Fatal("a call waiting for approval was started")
	}
	deny := tool(state.ApprovalDenied, "w", t0)
	deny.Text = "not in main"
	s = apply(t, s, deny)
	last := s.History[len(s.History)-1]
	if last.Role != state.RoleTool || !strings.Contains(last.Content, "denied") || !strings.Contains(last.Content, "not in main") {
		t.Fatalf("denial not told to the model: %+v", last)
	}
	if c := s.Memory.ToolCalls[0]; c.Approval != state.Denied || !c.Finished() || !c.StartedAt.IsZero() {
		t.Fatalf("denied call in the log: %+v", c)
	}
}

// Approving a tool for the session is part of the state: it outlives the
// task, survives a JSON round trip (so a resumed session keeps it), and a
// state from before the approval does not have it.
func TestApprovalForTheSession(t *testing.T) {
	asked := apply(t, executing(t), assistantCalls("w"), tool(state.ApprovalRequested, "w", t0))
	always := tool(state.ApprovalGiven, "w", t0)
	always.Always = true
	s := apply(t, asked, always, assistantFinish("w"))
	if want := []string{"read_file"}; !reflect.DeepEqual(s.Memory.AllowedTools, want) {
		t.Fatalf("allowed tools %v, want %v", s.Memory.AllowedTools, want)
	}
	if asked.Memory.AllowedTools != nil {
		t.Fatalf("the parent state gained %v", asked.Memory.AllowedTools)
	}
	once := apply(t, asked, tool(state.ApprovalGiven, "w", t0))
	if once.Memory.AllowedTools != nil {
		t.Fatalf("approving once allowed %v for the session", once.Memory.AllowedTools)
	}

	s = apply(t, s, state.Event{Kind: state.Failed, At: t0, Text: "stop"}, userMsg("next task"))
	var back state.State
	if err := json.Unmarshal([]byte(mustJSON(t, s)), &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Memory.AllowedTools, []string{"read_file"}) {
		t.Fatalf("after a new task and a round trip: %v", back.Memory.AllowedTools)
	}

	deny := tool(state.ApprovalDenied, "w", t0)
	deny.Always = true
	if _, err := state.Apply(asked, deny); !errors.Is(err, state.ErrInvalidEvent) {
		t.Fatalf("a denial for the session: got %v, want ErrInvalidEvent", err)
	}
}

func TestNotesAndSteps(t *testing.T) {
	s := apply(t, executing(t),
		state.Event{Kind: state.NoteSet, At: t0, NoteKey: "lang", NoteValue: "go"},
		state.Event{Kind: state.StepStatus, At: t0, Step: 1, Status: state.StepActive},
	)
	if s.Memory.Notes["lang"] != "go" || s.Memory.Plan[1].Status != state.StepActive || s.Memory.Plan[0].Status != state.StepPending {
		t.Fatalf("memory: %+v", s.Memory)
	}
	s = apply(t, s, state.Event{Kind: state.NoteSet, At: t0, NoteKey: "lang"})
	if s.Memory.Notes != nil {
		t.Fatalf("deleting the last note must leave no notes, got %v", s.Memory.Notes)
	}
	if _, err := state.Apply(s, state.Event{Kind: state.StepStatus, At: t0, Step: 2, Status: state.StepDone}); !errors.Is(err, state.ErrInvalidEvent) {
		t.Fatalf("a step out of range: %v", err)
	}
	s = apply(t, s, state.Event{Kind: state.StepCompleted, At: t0, Step: 0})
	if s.Phase != state.Reflecting || s.Memory.Plan[0].Status != state.StepDone {
		t.Fatalf("step_completed: phase %s plan %+v", s.Phase, s.Memory.Plan)
	}
	s = apply(t, s, state.Event{Kind: state.Continue, At: t0})
	if s.Iteration != 0 {
		t.Fatalf("no model reply yet, but iteration %d", s.Iteration)
	}
	s = apply(t, s, assistantCalls("x"), assistantFinish("x"))
	s = apply(t, s, state.Event{Kind: state.StepCompleted, At: t0, Step: 1, Messages: []state.Message{{Role: state.RoleAssistant, Content: "fixed"}}})
	s = apply(t, s, state.Event{Kind: state.Answered, At: t0, Messages: []state.Message{{Role: state.RoleAssistant, Content: "all done"}}})
	if s.Iteration != 3 {
		t.Fatalf("three model replies, but iteration %d", s.Iteration)
	}
	s = apply(t, s, userMsg("next task"))
	if s.Iteration != 0 {
		t.Fatalf("a new task must reset the iteration, got %d", s.Iteration)
	}
}

// Forks of one parent must never see each other's changes, whichever part of
// the state they touch.
func TestForksStayIndependent(t *testing.T) {
	parent := apply(t, executing(t),
		state.Event{Kind: state.NoteSet, At: t0, NoteKey: "k", NoteValue: "parent"},
		assistantCalls("a"), tool(state.ToolStarted, "a", t0))
	before := mustJSON(t, parent)

	finishA := tool(state.ToolFinished, "a", t0.Add(time.Second))
	finishA.Tool.Result = "left"
	left := apply(t, parent, finishA,
		state.Event{Kind: state.NoteSet, At: t0, NoteKey: "k", NoteValue: "left"},
		state.Event{Kind: state.StepStatus, At: t0, Step: 0, Status: state.StepFailed},
		assistantCalls("l"))

	failA := tool(state.ToolFinished, "a", t0.Add(time.Second))
	failA.Tool.Error = "right"
	right := apply(t, parent, failA,
		state.Event{Kind: state.NoteSet, At: t0, NoteKey: "k", NoteValue: "right"},
		state.Event{Kind: state.StepStatus, At: t0, Step: 0, Status: state.StepSkipped},
		assistantCalls("r"))

	if got := mustJSON(t, parent); got != before {
		t.Fatalf("extending the forks changed their parent:\nbefore %s\nafter  %s", before, got)
	}
	if left.Memory.Notes["k"] != "left" || right.Memory.Notes["k"] != "right" {
		t.Fatalf("notes leaked between forks: %v / %v", left.Memory.Notes, right.Memory.Notes)
	}
	if left.Memory.Plan[0].Status != state.StepFailed || right.Memory.Plan[0].Status != state.StepSkipped {
		t.Fatal("plan statuses leaked between forks")
	}
	if left.Memory.ToolCalls[0].Result != "left" || right.Memory.ToolCalls[0].Error != "right" || right.Memory.ToolCalls[0].Result != "" {
		t.Fatal("tool log leaked between forks")
	}
	if l, r := left.History[len(left.History)-1], right.History[len(right.History)-1]; l.ToolCalls[0].ID != "l" || r.ToolCalls[0].ID != "r" {
		t.Fatal("history leaked between forks")
	}
}

// A Builder must give exactly what a chain of Apply calls gives, and every
// state it hands out must stay as it was while it goes on.
func TestBuilderMatchesApply(t *testing.T) {
	seeds := uint64(30)
	if s := os.Getenv("RETRACE_BUILDER_SEEDS"); s != "" { // .ci/mutation's shorter run
		if _, err := fmt.Sscan(s, &seeds); err != nil {
			t.Fatalf("RETRACE_BUILDER_SEEDS=%q: %v", s, err)
		}
	}
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(seed, 7))
		events, want := statetest.Script(rng, state.New("s1"), 200)
		b := state.NewBuilder(state.New("s1"))
		var handed []state.State
		var handedJSON []string
		chain := state.New("s1")
		for i, ev := range events {
			if err := b.Apply(ev); err != nil {
				t.Fatalf("seed %d event %d (%s): %v", seed, i, ev.Kind, err)
			}
			chain = apply(t, chain, ev)
			if i%3 == 0 {
				s := b.State()
				if !reflect.DeepEqual(s, chain) {
					t.Fatalf("seed %d event %d: builder differs from Apply", seed, i)
				}
				handed, handedJSON = append(handed, s), append(handedJSON, mustJSON(t, s))
			}
		}
		if got := b.State(); !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d: builder differs from Apply:\nbuilder %s\napply   %s", seed, mustJSON(t, got), mustJSON(t, want))
		}
		for i, s := range handed {
			if mustJSON(t, s) != handedJSON[i] {
				t.Fatalf("seed %d: state handed out at step %d changed afterwards", seed, i*3)
			}
		}
	}
}

func TestRefusedEventLeavesBuilderUnchanged(t *testing.T) {
	r := state.NewBuilder(state.New("s1"))
	for _, ev := range []state.Event{userMsg("hi"), {Kind: state.PlanSet, At: t0, Plan: []state.Step{{Text: "x"}}}, assistantCalls("a")} {
		if err := r.Apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	before := mustJSON(t, r.State())
	bad := tool(state.ToolFinished, "nope", t0)
	if err := r.Apply(bad); err == nil {
		t.Fatal("accepted an answer to an unknown call")
	}
	if got := mustJSON(t, r.State()); got != before {
		t.Fatalf("refused event changed the builder:\n%s\n%s", before, got)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSummaryCoversWholeTurns(t *testing.T) {
	s := apply(t, state.New("s"), userMsg("one"),
		state.Event{Kind: state.Answered, At: t0, Messages: []state.Message{{Role: state.RoleAssistant, Content: "1"}}},
		userMsg("two"),
		state.Event{Kind: state.PlanSet, At: t0, Plan: []state.Step{{Text: "x"}}},
		assistantCalls("c"))
	// History: user, assistant, user, assistant(call c). Message 3 is a
	// user message: a summary may end there, nowhere inside the turn.
	for _, through := range []int{1, 3, 4, 5, -1} {
		ev := state.Event{Kind: state.Summarized, At: t0, Text: "sum", Through: through}
		if _, err := state.Apply(s, ev); !errors.Is(err, state.ErrInvalidEvent) {
			t.Errorf("a summary through %d: %v", through, err)
		}
	}
	ok := apply(t, s, state.Event{Kind: state.Summarized, At: t0, Text: "they said one", Through: 2})
	if ok.Summary != "they said one" || ok.SummaryThrough != 2 {
		t.Fatalf("summary %q through %d", ok.Summary, ok.SummaryThrough)
	}
	if _, err := state.Apply(ok, state.Event{Kind: state.Summarized, At: t0, Text: "less", Through: 0}); err == nil {
		t.Fatal("a summary that covers less than the last one was accepted")
	}
}

func TestPlanCanBeRevisedWhileExecuting(t *testing.T) {
	s := apply(t, executing(t), state.Event{Kind: state.PlanSet, At: t0, Plan: []state.Step{{Text: "new"}}})
	if s.Phase != state.Executing || len(s.Memory.Plan) != 1 || s.Memory.Plan[0].Text != "new" {
		t.Fatalf("phase %s plan %+v", s.Phase, s.Memory.Plan)
	}
}
