package state

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func user(text string) Message  { return Message{Role: RoleUser, Content: text} }
func reply(text string) Message { return Message{Role: RoleAssistant, Content: text} }

func callMsg(ids ...string) Message {
	m := Message{Role: RoleAssistant}
	for _, id := range ids {
		m.ToolCalls = append(m.ToolCalls, ToolRequest{ID: id, Name: "read_file", Arguments: `{"path":"a.go"}`})
	}
	return m
}

func must(t *testing.T, s State, evs ...Event) State {
	t.Helper()
	for _, ev := range evs {
		if ev.At.IsZero() {
			ev.At = t0
		}
		next, err := Apply(s, ev)
		if err != nil {
			t.Fatalf("apply %s in %s: %v", ev.Kind, s.Phase, err)
		}
		s = next
	}
	return s
}

// fixture returns a state in phase p from which an event of kind k is
// valid, and that event. Executing comes in two shapes: with an unanswered
// tool call (for the tool events) and without (for everything that adds a
// message).
func fixture(t *testing.T, p Phase, k EventKind) (State, Event) {
	t.Helper()
	planning := must(t, New("s"), Event{Kind: UserMessage, Messages: []Message{user("fix the build")}})
	executing := must(t, planning, Event{Kind: PlanSet, Plan: []Step{{Text: "read"}, {Text: "fix"}}})
	withCall := must(t, executing, Event{Kind: AssistantMessage, Messages: []Message{callMsg("c1")}})
	var s State
	switch p {
	case Idle:
		s = New("s")
	case Planning:
		s = planning
	case Executing:
		s = executing
		if k == ToolStarted || k == ToolFinished || k == ApprovalRequested {
			s = withCall
		}
	case AwaitingApproval:
		s = must(t, withCall, Event{Kind: ApprovalRequested, Tool: &ToolCall{ID: "c1"}})
	case Reflecting:
		s = must(t, executing, Event{Kind: StepCompleted, Step: 0})
	case Done:
		s = must(t, planning, Event{Kind: Answered, Messages: []Message{reply("it builds")}})
	case Error:
		s = must(t, planning, Event{Kind: Failed, Text: "401 from the endpoint"})
	}
	ev := Event{Kind: k, At: t0.Add(time.Second)}
	switch k {
	case UserMessage:
		ev.Messages = []Message{user("and the tests?")}
	case PlanSet:
		ev.Plan = []Step{{Text: "one step"}}
	case Answered:
		ev.Messages = []Message{reply("done")}
	case AssistantMessage:
		ev.Messages = []Message{reply("looking")}
	case ToolStarted, ToolFinished, ApprovalRequested, ApprovalGiven, ApprovalDenied:
		ev.Tool = &ToolCall{ID: "c1", Result: "package main"}
	case NoteSet:
		ev.NoteKey, ev.NoteValue = "lang", "go"
	case StepStatus:
		ev.Status = StepActive
	case Failed:
		ev.Text = "boom"
	case Summarized:
		ev.Text = "they talked about the build"
	}
	return s, ev
}

func TestEveryPhaseEventPair(t *testing.T) {
	legal := map[edge]Phase{}
	for _, tr := range Transitions {
		if _, dup := legal[edge{tr.From, tr.Event}]; dup {
			t.Errorf("table lists %s --%s--> twice", tr.From, tr.Event)
		}
		legal[edge{tr.From, tr.Event}] = tr.To
	}
	for _, p := range Phases {
		for _, k := range EventKinds {
			t.Run(p.String()+"/"+k.String(), func(t *testing.T) {
				s, ev := fixture(t, p, k)
				next, err := Apply(s, ev)
				want, ok := legal[edge{p, k}]
				if !ok {
					var te *TransitionError
					if !errors.As(err, &te) || !errors.Is(err, ErrIllegalTransition) {
						t.Fatalf("got %v, want a *TransitionError", err)
					}
					if te.From != p || te.Event != k {
						t.Fatalf("error names (%s, %s), want (%s, %s)", te.From, te.Event, p, k)
					}
					if msg := err.Error(); !strings.Contains(msg, p.String()) || !strings.Contains(msg, k.String()) {
						t.Fatalf("message %q does not name both %s and %s", msg, p, k)
					}
					if next.Phase != p || len(next.History) != len(s.History) {
						t.Fatalf("a refused event changed the state")
					}
					return
				}
				if err != nil {
					t.Fatalf("legal transition refused: %v", err)
				}
				if next.Phase != want {
					t.Fatalf("landed in %s, want %s", next.Phase, want)
				}
			})
		}
	}
}

func TestNextMatchesTable(t *testing.T) {
	for _, tr := range Transitions {
		got, err := Next(tr.From, tr.Event)
		if err != nil || got != tr.To {
			t.Errorf("Next(%s, %s) = %s, %v; want %s", tr.From, tr.Event, got, err, tr.To)
		}
	}
	if _, err := Next(Idle, EventKind(0)); !errors.Is(err, ErrIllegalTransition) {
		t.Errorf("the zero event kind must be illegal everywhere, got %v", err)
	}
}

func TestWireNamesRoundTrip(t *testing.T) {
	for _, p := range Phases {
		var got Phase
		if err := got.UnmarshalText([]byte(p.String())); err != nil || got != p {
			t.Errorf("phase %s: got %s, %v", p, got, err)
		}
	}
	for _, k := range EventKinds {
		var got EventKind
		if err := got.UnmarshalText([]byte(k.String())); err != nil || got != k {
			t.Errorf("event %s: got %s, %v", k, got, err)
		}
	}
	var p Phase
	if err := p.UnmarshalText([]byte("sleeping")); err == nil {
		t.Error("an unknown phase name was accepted")
	}
	var k EventKind
	if err := k.UnmarshalText([]byte("user-message")); err == nil {
		t.Error("an unknown event name was accepted")
	}
}
