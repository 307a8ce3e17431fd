package state_test

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"retrace/state"
)

// Bases for the validation cases: each a state a real session reaches.
func planningState(t *testing.T) state.State {
	return apply(t, state.New("s1"), userMsg("fix the build"))
}

// openAB has the assistant's calls a and b unanswered.
func openAB(t *testing.T) state.State { return apply(t, executing(t), assistantCalls("a", "b")) }

// startedA has call a running and b not yet started.
func startedA(t *testing.T) state.State {
	return apply(t, openAB(t), tool(state.ToolStarted, "a", t0))
}

// awaitingA waits for the person to decide on call a.
func awaitingA(t *testing.T) state.State {
	return apply(t, openAB(t), tool(state.ApprovalRequested, "a", t0))
}

// awaitingBWhileARuns waits for a decision on b while a (not gated) runs.
func awaitingBWhileARuns(t *testing.T) state.State {
	return apply(t, startedA(t), tool(state.ApprovalRequested, "b", t0))
}

// answeredA has made call a and answered it.
func answeredA(t *testing.T) state.State {
	return apply(t, executing(t), assistantCalls("a"), assistantFinish("a"))
}

// twoTurns: user, assistant, user, assistant(call c, unanswered).
func twoTurns(t *testing.T) state.State {
	return apply(t, state.New("s1"), userMsg("one"),
		state.Event{Kind: state.Answered, At: t0, Messages: []state.Message{{Role: state.RoleAssistant, Content: "1"}}},
		userMsg("two"),
		state.Event{Kind: state.PlanSet, At: t0, Plan: []state.Step{{Text: "x"}}},
		assistantCalls("c"))
}

// twoTurnsSummarized: as twoTurns but with c answered and the first turn
// summarised: user, assistant, user, assistant(call c), tool.
func twoTurnsSummarized(t *testing.T) state.State {
	return apply(t, twoTurns(t), assistantFinish("c"),
		state.Event{Kind: state.Summarized, At: t0, Text: "they said one", Through: 2})
}

// executingGated is a state no sequence of events reaches today, made by
// hand: executing, with call a unanswered and waiting for a decision. The
// rules hold for any state a Builder is given, not only for the ones the
// machine makes.
func executingGated(t *testing.T) state.State {
	s := openAB(t)
	s.Memory.ToolCalls = []state.ToolCall{{ID: "a", Name: "read_file", Approval: state.AwaitingDecision}}
	return s
}

func msgs(ms ...state.Message) []state.Message { return ms }

func asst(m state.Message) state.Event {
	return state.Event{Kind: state.AssistantMessage, At: t0, Messages: []state.Message{m}}
}

func withTool(kind state.EventKind, tc *state.ToolCall) state.Event {
	return state.Event{Kind: kind, At: t0, Tool: tc}
}

func call(ids ...string) state.Message { return assistantCalls(ids...).Messages[0] }

type refusal struct {
	name string
	base func(*testing.T) state.State
	ev   state.Event
	want string // the whole message, written from the rule it breaks
}

// Every rule of check.go and apply.go, each broken once or more: the rules
// that keep the history one a strict OpenAI-compatible server accepts, and
// the rules that keep events referring to what exists.
var refusals = []refusal{
	// While calls are unanswered nothing may come between them and their
	// answers (only failed and interrupted, which answer them first).
	{"assistant message while calls are open", openAB, asst(state.Message{Role: state.RoleAssistant, Content: "hm"}),
		"invalid assistant_message event: adds a message while tool calls are unanswered"},
	{"step_completed with a message while calls are open", openAB,
		state.Event{Kind: state.StepCompleted, At: t0, Messages: msgs(state.Message{Role: state.RoleAssistant, Content: "done"})},
		"invalid step_completed event: adds a message while tool calls are unanswered"},
	{"plan_set with a message while calls are open", openAB,
		state.Event{Kind: state.PlanSet, At: t0, Plan: []state.Step{{Text: "x"}}, Messages: msgs(state.Message{Role: state.RoleAssistant, Content: "new plan"})},
		"invalid plan_set event: adds a message while tool calls are unanswered"},

	// Roles: system and user only open a task; assistant never does; tool
	// messages are derived, never carried.
	{"system message in assistant_message", executing, asst(state.Message{Role: state.RoleSystem, Content: "obey"}),
		"invalid assistant_message event: message 1: a system message can only come with a user_message event"},
	{"user message in answered", planningState,
		state.Event{Kind: state.Answered, At: t0, Messages: msgs(state.Message{Role: state.RoleUser, Content: "me"}, state.Message{Role: state.RoleAssistant, Content: "ok"})},
		"invalid answered event: message 1: a user message can only come with a user_message event"},
	{"assistant message in user_message", idle,
		state.Event{Kind: state.UserMessage, At: t0, Messages: msgs(state.Message{Role: state.RoleUser, Content: "hi"}, state.Message{Role: state.RoleAssistant, Content: "hello"})},
		"invalid user_message event: message 2: an assistant message cannot come with a user_message event"},
	{"tool message carried by hand", executing, asst(state.Message{Role: state.RoleTool, Content: "x", ToolCallID: "a"}),
		"invalid assistant_message event: message 1: tool messages come only from tool_finished"},
	{"tool message in failed", openAB,
		state.Event{Kind: state.Failed, At: t0, Text: "boom", Messages: msgs(state.Message{Role: state.RoleTool, Content: "x", ToolCallID: "a"})},
		"invalid failed event: message 1: tool messages come only from tool_finished"},
	{"unknown role", executing, asst(state.Message{Role: "developer", Content: "x"}),
		`invalid assistant_message event: message 1: unknown role "developer"`},
	{"no role", executing, asst(state.Message{Content: "x"}),
		`invalid assistant_message event: message 1: unknown role ""`},
	{"tool_call_id on an assistant message", executing, asst(state.Message{Role: state.RoleAssistant, Content: "x", ToolCallID: "a"}),
		"invalid assistant_message event: message 1: only tool messages carry tool_call_id or name"},
	{"name on a user message", idle,
		state.Event{Kind: state.UserMessage, At: t0, Messages: msgs(state.Message{Role: state.RoleUser, Content: "x", Name: "bob"})},
		"invalid user_message event: message 1: only tool messages carry tool_call_id or name"},
	{"empty assistant message", executing, asst(state.Message{Role: state.RoleAssistant}),
		"invalid assistant_message event: message 1: an assistant message needs content or tool calls"},
	{"empty assistant message second", reflecting,
		state.Event{Kind: state.Continue, At: t0, Messages: msgs(state.Message{Role: state.RoleAssistant, Content: "a"}, state.Message{Role: state.RoleAssistant})},
		"invalid continue event: message 2: an assistant message needs content or tool calls"},
	{"empty answer", planningState,
		state.Event{Kind: state.Answered, At: t0, Messages: msgs(state.Message{Role: state.RoleAssistant})},
		"invalid answered event: message 1: an assistant message needs content or tool calls"},
	{"tool calls on a user message", idle,
		state.Event{Kind: state.UserMessage, At: t0, Messages: msgs(state.Message{Role: state.RoleUser, Content: "x", ToolCalls: call("u").ToolCalls})},
		"invalid user_message event: message 1: only assistant messages carry tool calls"},
	{"tool calls not last", executing,
		state.Event{Kind: state.AssistantMessage, At: t0, Messages: msgs(call("a"), state.Message{Role: state.RoleAssistant, Content: "more"})},
		"invalid assistant_message event: message 1: a message with tool calls must be the event's last"},
	{"tool call without id", executing,
		asst(state.Message{Role: state.RoleAssistant, ToolCalls: []state.ToolRequest{{Name: "read_file"}}}),
		"invalid assistant_message event: message 1: a tool call needs an id and a name"},
	{"tool call without name", executing,
		asst(state.Message{Role: state.RoleAssistant, ToolCalls: []state.ToolRequest{{ID: "a"}}}),
		"invalid assistant_message event: message 1: a tool call needs an id and a name"},
	{"tool call id twice", executing, asst(call("a", "b", "a")),
		`invalid assistant_message event: message 1: tool call id "a" appears twice`},

	// Only approval_given can approve a tool for the session.
	{"always on a denial", awaitingA,
		state.Event{Kind: state.ApprovalDenied, At: t0, Tool: &state.ToolCall{ID: "a"}, Always: true},
		"invalid approval_denied event: only approval_given can allow a tool for the session"},
	{"always on a note", executing,
		state.Event{Kind: state.NoteSet, At: t0, NoteKey: "k", NoteValue: "v", Always: true},
		"invalid note_set event: only approval_given can allow a tool for the session"},

	// What each kind must carry.
	{"user_message without messages", idle, state.Event{Kind: state.UserMessage, At: t0},
		"invalid user_message event: needs a user message"},
	{"user_message with only a system message", idle,
		state.Event{Kind: state.UserMessage, At: t0, Messages: msgs(state.Message{Role: state.RoleSystem, Content: "be brief"})},
		"invalid user_message event: needs a user message"},
	{"answered without messages", planningState, state.Event{Kind: state.Answered, At: t0},
		"invalid answered event: carries no answer"},
	{"answered ending with tool calls", reflecting, state.Event{Kind: state.Answered, At: t0, Messages: msgs(call("z"))},
		"invalid answered event: message 1: tool calls cannot come with an event after which no tool runs"},
	{"failed bringing tool calls", openAB, state.Event{Kind: state.Failed, At: t0, Text: "boom", Messages: msgs(call("z"))},
		"invalid failed event: message 1: tool calls cannot come with an event after which no tool runs"},
	{"assistant_message without messages", executing, state.Event{Kind: state.AssistantMessage, At: t0},
		"invalid assistant_message event: carries no message"},
	{"plan without steps", planningState, state.Event{Kind: state.PlanSet, At: t0, Goal: "g"},
		"invalid plan_set event: plan has no steps"},
	{"plan step without text", planningState,
		state.Event{Kind: state.PlanSet, At: t0, Plan: []state.Step{{Text: "a"}, {Status: state.StepPending}}},
		"invalid plan_set event: step 2 has no text"},
	{"plan step with an unknown status", executing,
		state.Event{Kind: state.PlanSet, At: t0, Plan: []state.Step{{Text: "a", Status: "maybe"}}},
		`invalid plan_set event: step 1: unknown status "maybe"`},
	{"note without key", executing, state.Event{Kind: state.NoteSet, At: t0, NoteValue: "v"},
		"invalid note_set event: note key is empty"},
	{"step status unknown", executing, state.Event{Kind: state.StepStatus, At: t0, Step: 0, Status: "halfway"},
		`invalid step_status event: unknown step status "halfway"`},
	{"step status empty", executing, state.Event{Kind: state.StepStatus, At: t0, Step: 0},
		`invalid step_status event: unknown step status ""`},
	{"step status past the plan", executing, state.Event{Kind: state.StepStatus, At: t0, Step: 2, Status: state.StepDone},
		"invalid step_status event: step 2 does not exist (the plan has 2)"},
	{"step status before the plan", executing, state.Event{Kind: state.StepStatus, At: t0, Step: -1, Status: state.StepDone},
		"invalid step_status event: step -1 does not exist (the plan has 2)"},
	{"step completed past the plan", executing, state.Event{Kind: state.StepCompleted, At: t0, Step: 2},
		"invalid step_completed event: step 2 does not exist (the plan has 2)"},
	{"step completed before the plan", executing, state.Event{Kind: state.StepCompleted, At: t0, Step: -1},
		"invalid step_completed event: step -1 does not exist (the plan has 2)"},
	{"failure that says nothing", executing, state.Event{Kind: state.Failed, At: t0},
		"invalid failed event: says nothing about what went wrong"},

	// Tool events refer to a call the assistant made and nobody answered.
	{"tool_started naming nothing", openAB, withTool(state.ToolStarted, nil),
		"invalid tool_started event: names no tool call"},
	{"tool_started with an empty id", openAB, withTool(state.ToolStarted, &state.ToolCall{Name: "read_file"}),
		"invalid tool_started event: names no tool call"},
	{"tool_started for a call nobody made", openAB, withTool(state.ToolStarted, &state.ToolCall{ID: "zz"}),
		`invalid tool_started event: no unanswered tool call has id "zz"`},
	{"tool_started for an answered call", answeredA, withTool(state.ToolStarted, &state.ToolCall{ID: "a"}),
		`invalid tool_started event: no unanswered tool call has id "a"`},
	{"tool_started twice", startedA, withTool(state.ToolStarted, &state.ToolCall{ID: "a"}),
		`invalid tool_started event: tool call "a" has already started`},
	{"tool_started while waiting for approval", executingGated, withTool(state.ToolStarted, &state.ToolCall{ID: "a"}),
		`invalid tool_started event: tool call "a" is waiting for approval`},
	{"tool_finished naming nothing", startedA, withTool(state.ToolFinished, nil),
		"invalid tool_finished event: names no tool call"},
	{"tool_finished for a call nobody made", startedA, withTool(state.ToolFinished, &state.ToolCall{ID: "zz", Result: "x"}),
		`invalid tool_finished event: no unanswered tool call has id "zz"`},
	{"tool_finished twice", answeredA, withTool(state.ToolFinished, &state.ToolCall{ID: "a", Result: "again"}),
		`invalid tool_finished event: no unanswered tool call has id "a"`},
	{"approval_requested naming nothing", openAB, withTool(state.ApprovalRequested, &state.ToolCall{}),
		"invalid approval_requested event: names no tool call"},
	{"approval_requested for a call nobody made", openAB, withTool(state.ApprovalRequested, &state.ToolCall{ID: "zz"}),
		`invalid approval_requested event: no unanswered tool call has id "zz"`},
	{"approval_requested for a running call", startedA, withTool(state.ApprovalRequested, &state.ToolCall{ID: "a"}),
		`invalid approval_requested event: tool call "a" has already started`},
	{"approval_given naming nothing", awaitingA, withTool(state.ApprovalGiven, nil),
		"invalid approval_given event: names no tool call"},
	{"approval_given for a call nobody made", awaitingA, withTool(state.ApprovalGiven, &state.ToolCall{ID: "zz"}),
		`invalid approval_given event: no unanswered tool call has id "zz"`},
	{"approval_given for a call never asked about", awaitingA, withTool(state.ApprovalGiven, &state.ToolCall{ID: "b"}),
		`invalid approval_given event: tool call "b" is not waiting for approval`},
	{"approval_given for a running call", awaitingBWhileARuns, withTool(state.ApprovalGiven, &state.ToolCall{ID: "a"}),
		`invalid approval_given event: tool call "a" is not waiting for approval`},
	{"approval_denied naming nothing", awaitingA, withTool(state.ApprovalDenied, &state.ToolCall{}),
		"invalid approval_denied event: names no tool call"},
	{"approval_denied for a call never asked about", awaitingA, withTool(state.ApprovalDenied, &state.ToolCall{ID: "b"}),
		`invalid approval_denied event: tool call "b" is not waiting for approval`},
	{"approval_denied for a running call", awaitingBWhileARuns, withTool(state.ApprovalDenied, &state.ToolCall{ID: "a"}),
		`invalid approval_denied event: tool call "a" is not waiting for approval`},

	// A summary covers whole turns, never less than the last one, never a
	// call without its answer.
	{"empty summary", twoTurns, state.Event{Kind: state.Summarized, At: t0, Through: 2},
		"invalid summarized event: summary is empty"},
	{"summary through a negative count", twoTurns, state.Event{Kind: state.Summarized, At: t0, Text: "s", Through: -1},
		"invalid summarized event: covers -1 messages; it must be between 0 and 4"},
	{"summary past the history", twoTurns, state.Event{Kind: state.Summarized, At: t0, Text: "s", Through: 5},
		"invalid summarized event: covers 5 messages; it must be between 0 and 4"},
	{"summary shrinking the last one", twoTurnsSummarized, state.Event{Kind: state.Summarized, At: t0, Text: "s", Through: 1},
		"invalid summarized event: covers 1 messages; it must be between 2 and 5"},
	{"summary ending inside a turn", twoTurns, state.Event{Kind: state.Summarized, At: t0, Text: "s", Through: 1},
		"invalid summarized event: must end where a turn starts (message 2 is a assistant message)"},
	{"summary ending before a tool answer", twoTurnsSummarized, state.Event{Kind: state.Summarized, At: t0, Text: "s", Through: 4},
		"invalid summarized event: must end where a turn starts (message 5 is a tool message)"},
	{"summary covering an unanswered call", twoTurns, state.Event{Kind: state.Summarized, At: t0, Text: "s", Through: 4},
		"invalid summarized event: would cover tool calls that are still unanswered"},

	// The model reads tool results only once every call has one.
	{"tools_done while calls are open", openAB, state.Event{Kind: state.ToolsDone, At: t0},
		"invalid tools_done event: tool calls are still unanswered"},
	// Only an interrupted task can be taken up again.
	{"resumed with nothing said", idle, state.Event{Kind: state.Resumed, At: t0},
		"invalid resumed event: there is no interrupted task to go on with"},
	// An endpoint names its model, and only endpoint_set carries one.
	{"endpoint_set without an endpoint", idle, state.Event{Kind: state.EndpointSet, At: t0},
		"invalid endpoint_set event: names no model"},
	{"endpoint_set without a model", idle, state.Event{Kind: state.EndpointSet, At: t0, Endpoint: &state.Endpoint{BaseURL: "http://x/v1"}},
		"invalid endpoint_set event: names no model"},
	{"an endpoint on an answer", planningState, state.Event{Kind: state.Answered, At: t0, Messages: msgs(state.Message{Role: state.RoleAssistant, Content: "a"}), Endpoint: &state.Endpoint{Model: "m"}},
		"invalid answered event: only user_message and endpoint_set carry an endpoint"},
	{"a user message's endpoint without a model", idle, state.Event{Kind: state.UserMessage, At: t0, Messages: msgs(state.Message{Role: state.RoleUser, Content: "hi"}), Endpoint: &state.Endpoint{BaseURL: "http://x/v1"}},
		"invalid user_message event: names no model"},
	// Thinking belongs to the model's replies.
	{"reasoning on a user message", idle, state.Event{Kind: state.UserMessage, At: t0, Messages: msgs(state.Message{Role: state.RoleUser, Content: "hi", Reasoning: "hmm"})},
		"invalid user_message event: message 1: only assistant messages carry reasoning"},
}

// doneState has answered its task.
func doneState(t *testing.T) state.State {
	return apply(t, planningState(t), state.Event{Kind: state.Answered, At: t0, Messages: msgs(state.Message{Role: state.RoleAssistant, Content: "done"})})
}

func reflecting(t *testing.T) state.State {
	return apply(t, executing(t), state.Event{Kind: state.StepCompleted, At: t0, Step: 0})
}

// Each refusal is an *EventError wrapping ErrInvalidEvent for the event's
// kind, says exactly what is wrong, and changes nothing: not the state
// Apply was given, not what it returns, not a Builder.
func TestEveryRuleRefusesWhatBreaksIt(t *testing.T) {
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			s := c.base(t)
			before := fmt.Sprintf("%#v", s)
			next, err := state.Apply(s, c.ev)
			wantRefusal(t, "Apply", err, c.ev.Kind, c.want)
			if !reflect.DeepEqual(next, s) || fmt.Sprintf("%#v", s) != before {
				t.Errorf("a refused event changed the state")
			}

			b := state.NewBuilder(s)
			wantRefusal(t, "Builder.Check", b.Check(c.ev), c.ev.Kind, c.want)
			wantRefusal(t, "Builder.Apply", b.Apply(c.ev), c.ev.Kind, c.want)
			if got := b.State(); !reflect.DeepEqual(got, s) {
				t.Errorf("a refused event changed the builder")
			}
		})
	}
}

func wantRefusal(t *testing.T, what string, err error, kind state.EventKind, want string) {
	t.Helper()
	var ee *state.EventError
	if !errors.As(err, &ee) || !errors.Is(err, state.ErrInvalidEvent) || errors.Is(err, state.ErrIllegalTransition) {
		t.Fatalf("%s: got %v, want an *EventError wrapping ErrInvalidEvent", what, err)
	}
	if ee.Event != kind {
		t.Errorf("%s: the error names kind %v, want %v", what, ee.Event, kind)
	}
	if err.Error() != want {
		t.Errorf("%s:\n got %q\nwant %q", what, err.Error(), want)
	}
}

// The same events, fixed in the one way the rule asks, are accepted: the
// refusals above are for the broken part, not for the event as a whole.
func TestRulesAcceptTheMendedEvent(t *testing.T) {
	later := t0.Add(time.Second)
	for _, c := range []struct {
		name string
		base func(*testing.T) state.State
		ev   state.Event
	}{
		{"failed with a message while calls are open", openAB,
			state.Event{Kind: state.Failed, At: later, Text: "boom", Messages: msgs(state.Message{Role: state.RoleAssistant, Content: "partial"})}},
		{"interrupted with a message while calls are open", openAB,
			state.Event{Kind: state.Interrupted, At: later, Messages: msgs(state.Message{Role: state.RoleAssistant, Content: "partial"})}},
		{"system message before the user's", idle,
			state.Event{Kind: state.UserMessage, At: later, Messages: msgs(state.Message{Role: state.RoleSystem, Content: "be brief"}, state.Message{Role: state.RoleUser, Content: "hi"})}},
		{"assistant message with calls only", executing, asst(call("a"))},
		{"several assistant messages, calls last", executing,
			state.Event{Kind: state.AssistantMessage, At: later, Messages: msgs(state.Message{Role: state.RoleAssistant, Content: "first"}, call("a", "b"))}},
		{"the same call id in a later turn", answeredA, asst(call("a"))},
		{"always on approval_given", awaitingA, state.Event{Kind: state.ApprovalGiven, At: later, Tool: &state.ToolCall{ID: "a"}, Always: true}},
		{"approval for b while a runs", awaitingBWhileARuns, withTool(state.ApprovalGiven, &state.ToolCall{ID: "b"})},
		{"last step", executing, state.Event{Kind: state.StepStatus, At: later, Step: 1, Status: state.StepDone}},
		{"first step completed", executing, state.Event{Kind: state.StepCompleted, At: later, Step: 0}},
		{"note with an empty value", executing, state.Event{Kind: state.NoteSet, At: later, NoteKey: "k"}},
		{"summary repeating the last one's end", twoTurnsSummarized, state.Event{Kind: state.Summarized, At: later, Text: "s2", Through: 2}},
		{"summary over the whole history when nothing is open", twoTurnsSummarized, state.Event{Kind: state.Summarized, At: later, Text: "s2", Through: 5}},
		{"summary up to a turn start", twoTurns, state.Event{Kind: state.Summarized, At: later, Text: "s", Through: 2}},
		{"an empty summary of nothing yet", twoTurns, state.Event{Kind: state.Summarized, At: later, Text: "nothing", Through: 0}},
		{"tools_done once every call is answered", answeredA, state.Event{Kind: state.ToolsDone, At: later}},
		{"resumed after an interruption", func(t *testing.T) state.State {
			return apply(t, openAB(t), state.Event{Kind: state.Interrupted, At: t0, Text: "cancelled"})
		}, state.Event{Kind: state.Resumed, At: later}},
		{"endpoint_set with a model only", doneState, state.Event{Kind: state.EndpointSet, At: later, Endpoint: &state.Endpoint{Model: "m"}}},
		{"a user message with the task's endpoint", idle, state.Event{Kind: state.UserMessage, At: later, Messages: msgs(state.Message{Role: state.RoleUser, Content: "hi"}), Endpoint: &state.Endpoint{Model: "m"}}},
		{"reasoning on the model's reply", planningState, state.Event{Kind: state.Answered, At: later, Messages: msgs(state.Message{Role: state.RoleAssistant, Content: "a", Reasoning: "thought"})}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := state.Apply(c.base(t), c.ev); err != nil {
				t.Fatalf("refused: %v", err)
			}
		})
	}
}

func idle(*testing.T) state.State { return state.New("s1") }

// OpenCalls reads any history, including ones no session made: the calls
// of the last assistant message that no tool message after it answers, in
// the order they were asked for.
func TestOpenCalls(t *testing.T) {
	u := state.Message{Role: state.RoleUser, Content: "u"}
	ans := func(id string) state.Message {
		return state.Message{Role: state.RoleTool, ToolCallID: id, Name: "read_file", Content: "ok"}
	}
	for _, c := range []struct {
		name    string
		history []state.Message
		want    []string
	}{
		{"empty", nil, nil},
		{"a user message", msgs(u), nil},
		{"two calls", msgs(u, call("a", "b")), []string{"a", "b"}},
		{"the first answered", msgs(u, call("a", "b"), ans("a")), []string{"b"}},
		{"the second answered", msgs(u, call("a", "b"), ans("b")), []string{"a"}},
		{"both answered", msgs(u, call("a", "b"), ans("a"), ans("b")), nil},
		{"calls first in the history", msgs(call("a")), []string{"a"}},
		{"a tool message first", msgs(ans("x")), nil},
		{"a new turn after the answers", msgs(u, call("a"), ans("a"), u), nil},
		{"only the last assistant message counts", msgs(call("a"), ans("a"), call("b")), []string{"b"}},
		{"an answer to an older call", msgs(u, call("a"), ans("a"), call("b"), ans("a")), []string{"b"}},
	} {
		var got []string
		for _, r := range (state.State{History: c.history}).OpenCalls() {
			got = append(got, r.ID)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: open calls %v, want %v", c.name, got, c.want)
		}
	}
}

// Asking again about a call the person approved but that has not started
// (a session resumed under a stricter configuration) is allowed: the call
// waits for a decision again.
func TestApprovalCanBeAskedAgainBeforeTheCallStarts(t *testing.T) {
	s := apply(t, awaitingA(t), tool(state.ApprovalGiven, "a", t0), tool(state.ApprovalRequested, "a", t0))
	if s.Phase != state.AwaitingApproval || s.Memory.ToolCalls[0].Approval != state.AwaitingDecision || len(s.Memory.ToolCalls) != 1 {
		t.Fatalf("phase %v log %+v", s.Phase, s.Memory.ToolCalls)
	}
}

// The open call's entry is found wherever it stands in the tool log, the
// log's very first entry included.
func TestOpenCallEntryFirstInTheLog(t *testing.T) {
	s := awaitingA(t)
	if len(s.Memory.ToolCalls) != 1 {
		t.Fatalf("the fixture's log: %+v", s.Memory.ToolCalls)
	}
	if e, ok := s.OpenCallEntry("a"); !ok || e.ID != "a" {
		t.Fatalf("OpenCallEntry(a) = %+v, %v", e, ok)
	}
	if _, ok := s.OpenCallEntry("b"); ok {
		t.Fatal("b has no entry yet, but one was found")
	}
}
