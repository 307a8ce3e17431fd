package state_test

import (
	"errors"
	"testing"
	"time"

	"retrace/state"
)

// A tool call must be answerable: an event that ends the task (failed,
// interrupted, or a summary in a phase where no task runs) cannot bring
// calls of its own, or nothing could ever answer them and every later
// message would be refused: the session would be stuck.
func TestCallsCannotOutliveTheTask(t *testing.T) {
	withCalls := state.Message{Role: state.RoleAssistant, Content: "partial", ToolCalls: call("late").ToolCalls}
	done := apply(t, planningState(t), state.Event{Kind: state.Answered, At: t0, Messages: msgs(state.Message{Role: state.RoleAssistant, Content: "ok"})})
	for _, c := range []struct {
		name string
		base state.State
		ev   state.Event
	}{
		{"failed", openAB(t), state.Event{Kind: state.Failed, At: t0, Text: "boom", Messages: msgs(withCalls)}},
		{"interrupted", executing(t), state.Event{Kind: state.Interrupted, At: t0, Messages: msgs(withCalls)}},
		{"summarized when done", done, state.Event{Kind: state.Summarized, At: t0, Text: "s", Through: 0, Messages: msgs(withCalls)}},
		{"summarized when idle", state.New("s1"), state.Event{Kind: state.Summarized, At: t0, Text: "s", Messages: msgs(withCalls)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := state.Apply(c.base, c.ev)
			wantRefusal(t, "Apply", err, c.ev.Kind, "invalid "+c.ev.Kind.String()+" event: message 1: tool calls cannot come with an event after which no tool runs")
		})
	}
	// Where tools do run next, calls may come with the event.
	for _, c := range []struct {
		name string
		base state.State
		ev   state.Event
	}{
		{"plan_set", planningState(t), state.Event{Kind: state.PlanSet, At: t0, Plan: []state.Step{{Text: "x"}}, Messages: msgs(withCalls)}},
		{"replan", reflecting(t), state.Event{Kind: state.Replan, At: t0, Messages: msgs(withCalls)}},
		{"continue", reflecting(t), state.Event{Kind: state.Continue, At: t0, Messages: msgs(withCalls)}},
		{"summarized while executing", executing(t), state.Event{Kind: state.Summarized, At: t0, Text: "s", Messages: msgs(withCalls)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := apply(t, c.base, c.ev)
			if open := s.OpenCalls(); len(open) != 1 || open[0].ID != "late" {
				t.Fatalf("open calls %+v", open)
			}
		})
	}
}

// Some servers number their tool calls per reply, so an id comes back in a
// later turn. The new call is a call of its own: it starts, waits for
// approval and finishes without touching the old call's log entry.
func TestACallIDMayComeBackInALaterTurn(t *testing.T) {
	first := tool(state.ToolFinished, "a", t0.Add(2*time.Second))
	first.Tool.Result = "old"
	s := apply(t, executing(t), assistantCalls("a"), tool(state.ToolStarted, "a", t0.Add(time.Second)), first)
	old := s.Memory.ToolCalls[0]

	s = apply(t, s, assistantCalls("a"), tool(state.ApprovalRequested, "a", t0.Add(3*time.Second)),
		tool(state.ApprovalGiven, "a", t0.Add(4*time.Second)), tool(state.ToolStarted, "a", t0.Add(5*time.Second)))
	again := tool(state.ToolFinished, "a", t0.Add(7*time.Second))
	again.Tool.Result = "new"
	s = apply(t, s, again)

	if len(s.Memory.ToolCalls) != 2 {
		t.Fatalf("tool log %+v, want two entries", s.Memory.ToolCalls)
	}
	if s.Memory.ToolCalls[0] != old {
		t.Fatalf("the old call's entry changed:\n%+v\n%+v", old, s.Memory.ToolCalls[0])
	}
	if c := s.Memory.ToolCalls[1]; c.ID != "a" || c.Result != "new" || c.Approval != state.Approved || c.DurationMS != 2000 || !c.Finished() {
		t.Fatalf("the new call's entry: %+v", c)
	}
	if last := s.History[len(s.History)-1]; last.ToolCallID != "a" || last.Content != "new" {
		t.Fatalf("last message %+v", last)
	}
	if _, err := state.Apply(s, tool(state.ToolStarted, "a", t0)); !errors.Is(err, state.ErrInvalidEvent) {
		t.Fatalf("the answered call was started again: %v", err)
	}
}
