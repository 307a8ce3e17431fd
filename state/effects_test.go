package state_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"retrace/state"
)

// Every event adds its Usage to the state's, prompt and completion apart,
// refused events nothing.
func TestUsageAddsUp(t *testing.T) {
	s := apply(t, state.New("s1"),
		state.Event{Kind: state.UserMessage, At: t0, Messages: msgs(state.Message{Role: state.RoleUser, Content: "hi"}), Usage: state.Usage{PromptTokens: 3}},
		state.Event{Kind: state.PlanSet, At: t0, Plan: []state.Step{{Text: "x"}}, Usage: state.Usage{PromptTokens: 100, CompletionTokens: 20}},
		state.Event{Kind: state.NoteSet, At: t0, NoteKey: "k", NoteValue: "v", Usage: state.Usage{PromptTokens: 50, CompletionTokens: 7}},
	)
	if want := (state.Usage{PromptTokens: 153, CompletionTokens: 27}); s.Usage != want {
		t.Fatalf("usage %+v, want %+v", s.Usage, want)
	}
	if got := s.Usage.Total(); got != 180 {
		t.Fatalf("total %d, want 180", got)
	}
	if _, err := state.Apply(s, state.Event{Kind: state.NoteSet, At: t0, Usage: state.Usage{PromptTokens: 9}}); err == nil {
		t.Fatal("a note without a key was accepted")
	}
	if got := (state.Usage{PromptTokens: 5, CompletionTokens: 8}).Add(state.Usage{PromptTokens: 2, CompletionTokens: 1}); got != (state.Usage{PromptTokens: 7, CompletionTokens: 9}) {
		t.Fatalf("Add gave %+v", got)
	}
}

func TestStateString(t *testing.T) {
	s := apply(t, executing(t), assistantCalls("a"))
	s.Version = 3
	if got, want := s.String(), "session s1 v3 (executing, 2 messages)"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
}

// A plan_set's goal replaces the current goal; without one the goal the
// task started with stays. Steps keep the status they come with; those
// without one are pending.
func TestPlanSetGoalAndStatuses(t *testing.T) {
	s := apply(t, planningState(t), state.Event{Kind: state.PlanSet, At: t0,
		Plan: []state.Step{{Text: "a", Status: state.StepDone}, {Text: "b"}, {Text: "c", Status: state.StepActive}}})
	if s.Memory.CurrentGoal != "fix the build" {
		t.Fatalf("a plan without a goal changed the goal to %q", s.Memory.CurrentGoal)
	}
	want := []state.Step{{Text: "a", Status: state.StepDone}, {Text: "b", Status: state.StepPending}, {Text: "c", Status: state.StepActive}}
	if !reflect.DeepEqual(s.Memory.Plan, want) {
		t.Fatalf("plan %+v, want %+v", s.Memory.Plan, want)
	}
	s = apply(t, s, state.Event{Kind: state.PlanSet, At: t0, Goal: "fix the build on arm64", Plan: []state.Step{{Text: "d"}}})
	if s.Memory.CurrentGoal != "fix the build on arm64" {
		t.Fatalf("goal %q", s.Memory.CurrentGoal)
	}
}

// A user message starts a task afresh: goal from its (last) user message,
// no plan, no answer, no error, iteration 0. Everything else stays.
func TestUserMessageClearsTheLastTask(t *testing.T) {
	s := apply(t, executing(t), state.Event{Kind: state.NoteSet, At: t0, NoteKey: "k", NoteValue: "v"},
		state.Event{Kind: state.Failed, At: t0, Text: "boom"})
	if s.ErrorMessage != "boom" || s.Phase != state.Error {
		t.Fatalf("after failed: %q in %v", s.ErrorMessage, s.Phase)
	}
	s = apply(t, s, state.Event{Kind: state.UserMessage, At: t0, Messages: msgs(
		state.Message{Role: state.RoleUser, Content: "first"}, state.Message{Role: state.RoleUser, Content: "second"})})
	if s.ErrorMessage != "" || s.FinalAnswer != "" || s.Memory.Plan != nil || s.Memory.CurrentGoal != "second" || s.Iteration != 0 {
		t.Fatalf("a new task kept the old one's outcome: error %q answer %q plan %v goal %q iteration %d",
			s.ErrorMessage, s.FinalAnswer, s.Memory.Plan, s.Memory.CurrentGoal, s.Iteration)
	}
	if s.Memory.Notes["k"] != "v" {
		t.Fatalf("notes are the session's, not the task's: %v", s.Memory.Notes)
	}
}

// Calls left open by failed or interrupted are answered with why, so the
// model is told and a strict server accepts the history.
func TestClosedCallsSayWhy(t *testing.T) {
	for _, c := range []struct {
		ev   state.Event
		want string
	}{
		{state.Event{Kind: state.Failed, Text: "503 from the endpoint"}, "Error: not completed: 503 from the endpoint"},
		{state.Event{Kind: state.Interrupted, Text: "cancelled by the user"}, "Error: interrupted: cancelled by the user"},
		{state.Event{Kind: state.Interrupted}, "Error: interrupted"},
	} {
		c.ev.At = t0.Add(4 * time.Second)
		s := apply(t, openAB(t), tool(state.ToolStarted, "a", t0.Add(time.Second)), c.ev)
		n := len(s.History)
		for i, id := range []string{"a", "b"} {
			m := s.History[n-2+i]
			if m.Role != state.RoleTool || m.ToolCallID != id || m.Name != "read_file" || m.Content != c.want {
				t.Errorf("%s %q: answer to %s is %+v, want %q", c.ev.Kind, c.ev.Text, id, m, c.want)
			}
		}
		a, b := s.Memory.ToolCalls[0], s.Memory.ToolCalls[1]
		if a.ID != "a" || a.Error != strings.TrimPrefix(c.want, "Error: ") || a.DurationMS != 3000 || !a.FinishedAt.Equal(c.ev.At) {
			t.Errorf("%s: the running call's entry %+v", c.ev.Kind, a)
		}
		if b.ID != "b" || b.DurationMS != 0 || !b.StartedAt.IsZero() || !b.Finished() {
			t.Errorf("%s: the call that never started: %+v", c.ev.Kind, b)
		}
	}
}

// A tool's own duration wins; without one it is the time from start to
// finish; a call that never started has none.
func TestToolDurations(t *testing.T) {
	s := apply(t, openAB(t), tool(state.ToolStarted, "a", t0.Add(time.Second)))
	given := tool(state.ToolFinished, "a", t0.Add(9*time.Second))
	given.Tool.DurationMS, given.Tool.Result = 1234, "ok"
	unstarted := tool(state.ToolFinished, "b", t0.Add(10*time.Second))
	unstarted.Tool.Error = "no such file"
	s = apply(t, s, given, unstarted)
	if d := s.Memory.ToolCalls[0].DurationMS; d != 1234 {
		t.Errorf("duration %d, want the tool's own 1234", d)
	}
	if c := s.Memory.ToolCalls[1]; c.DurationMS != 0 || c.Error != "no such file" || c.Result != "" {
		t.Errorf("a call finished without a start: %+v", c)
	}
	if m := s.History[len(s.History)-1]; m.Content != "Error: no such file" {
		t.Errorf("the model is told %q", m.Content)
	}
}

func TestToolMessageContent(t *testing.T) {
	for _, c := range []struct{ result, err, want string }{
		{"package main", "", "package main"},
		{"", "exit status 1", "Error: exit status 1"},
		{"FAIL x_test.go", "exit status 1", "FAIL x_test.go\n\nError: exit status 1"},
		{"", "", ""},
	} {
		if got := state.ToolMessageContent(c.result, c.err); got != c.want {
			t.Errorf("ToolMessageContent(%q, %q) = %q, want %q", c.result, c.err, got, c.want)
		}
	}
}

// Tools allowed for the session are a sorted set.
func TestAllowedToolsAreASortedSet(t *testing.T) {
	s := executing(t)
	for _, name := range []string{"write_file", "run_command", "write_file", "edit_file"} {
		m := state.Message{Role: state.RoleAssistant, ToolCalls: []state.ToolRequest{{ID: "c_" + name, Name: name}}}
		always := tool(state.ApprovalGiven, "c_"+name, t0)
		always.Always = true
		fin := tool(state.ToolFinished, "c_"+name, t0)
		fin.Tool.Result = "ok"
		s = apply(t, s, asst(m), tool(state.ApprovalRequested, "c_"+name, t0), always, fin)
	}
	if want := []string{"edit_file", "run_command", "write_file"}; !reflect.DeepEqual(s.Memory.AllowedTools, want) {
		t.Fatalf("allowed %v, want %v", s.Memory.AllowedTools, want)
	}
}

// Notes: a value sets, an empty value deletes, the others stay.
func TestNotes(t *testing.T) {
	s := apply(t, executing(t),
		state.Event{Kind: state.NoteSet, At: t0, NoteKey: "a", NoteValue: "1"},
		state.Event{Kind: state.NoteSet, At: t0, NoteKey: "b", NoteValue: "2"},
		state.Event{Kind: state.NoteSet, At: t0, NoteKey: "a", NoteValue: "3"},
		state.Event{Kind: state.NoteSet, At: t0, NoteKey: "b"},
		state.Event{Kind: state.NoteSet, At: t0, NoteKey: "never set"},
	)
	if want := map[string]string{"a": "3"}; !reflect.DeepEqual(s.Memory.Notes, want) {
		t.Fatalf("notes %v, want %v", s.Memory.Notes, want)
	}
}

// A state with no plan in executing (one made by hand, or stored before
// plans were required) still completes a step: it just has none to mark.
func TestStepCompletedWithoutAPlan(t *testing.T) {
	s := executing(t)
	s.Memory.Plan = nil
	next := apply(t, s, state.Event{Kind: state.StepCompleted, At: t0, Step: 3})
	if next.Phase != state.Reflecting || next.Memory.Plan != nil {
		t.Fatalf("phase %v plan %+v", next.Phase, next.Memory.Plan)
	}
}

// Apply must not write into the spare capacity of a history it was given:
// a State decoded from JSON, or built by hand, may have some, and two
// events applied to it would then write over each other.
func TestForksOfAStateWithSpareCapacity(t *testing.T) {
	base := executing(t)
	hist := make([]state.Message, len(base.History), len(base.History)+8)
	copy(hist, base.History)
	base.History = hist

	left := apply(t, base, asst(state.Message{Role: state.RoleAssistant, Content: "left"}))
	right := apply(t, base, asst(state.Message{Role: state.RoleAssistant, Content: "right"}))
	if l, r := left.History[len(left.History)-1].Content, right.History[len(right.History)-1].Content; l != "left" || r != "right" {
		t.Fatalf("forks wrote over each other: left ends %q, right ends %q", l, r)
	}

	b := state.NewBuilder(base)
	if err := b.Apply(asst(state.Message{Role: state.RoleAssistant, Content: "builder"})); err != nil {
		t.Fatal(err)
	}
	if got := hist[:cap(hist)][len(base.History)]; got.Content != "" {
		t.Fatalf("NewBuilder wrote into its base's array: %+v", got)
	}
}

// A Builder's Check answers what Apply would, and changes nothing; Phase
// and SetVersion report and set where it stands.
func TestBuilderCheckPhaseAndVersion(t *testing.T) {
	b := state.NewBuilder(state.New("s1"))
	if b.Phase() != state.Idle {
		t.Fatalf("phase %v", b.Phase())
	}
	if err := b.Check(userMsg("hi")); err != nil {
		t.Fatal(err)
	}
	if b.Phase() != state.Idle || len(b.State().History) != 0 {
		t.Fatal("Check applied the event")
	}
	var te *state.TransitionError
	if err := b.Check(state.Event{Kind: state.Answered, At: t0}); !errors.As(err, &te) || te.From != state.Idle || te.Event != state.Answered {
		t.Fatalf("Check of an illegal event: %v", err)
	}
	if err := b.Apply(userMsg("hi")); err != nil {
		t.Fatal(err)
	}
	b.SetVersion(7, 4)
	if s := b.State(); s.Version != 7 || s.ParentVersion != 4 || b.Phase() != state.Planning {
		t.Fatalf("version %d parent %d phase %v", s.Version, s.ParentVersion, b.Phase())
	}
}

// The error for an event with no kind at all says so without a kind.
func TestEventErrorWithoutKind(t *testing.T) {
	_, err := state.DecodeEvent([]byte(`{"at":"2026-11-22T10:00:00Z"}`))
	var ee *state.EventError
	if !errors.As(err, &ee) || !errors.Is(err, state.ErrInvalidEvent) || err.Error() != "invalid event: no kind" {
		t.Fatalf("got %v", err)
	}
}

// Canonical gives the event as the store will give it back: invalid UTF-8
// replaced, times in UTC, empty lists nil. An event that cannot be encoded
// is an error, and comes back as it was.
func TestCanonical(t *testing.T) {
	at := time.Date(2026, 11, 22, 11, 0, 0, 0, time.FixedZone("CET", 3600))
	ev := state.Event{Kind: state.AssistantMessage, At: at, Plan: []state.Step{},
		Messages: msgs(state.Message{Role: state.RoleAssistant, Content: "bad \xff byte", ToolCalls: []state.ToolRequest{}})}
	got, err := state.Canonical(ev)
	if err != nil {
		t.Fatal(err)
	}
	want := state.Event{Kind: state.AssistantMessage, At: at.UTC(),
		Messages: msgs(state.Message{Role: state.RoleAssistant, Content: "bad \uFFFD byte"})}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Canonical gave\n%#v\nwant\n%#v", got, want)
	}

	bad := state.Event{Kind: state.EventKind(99), At: t0}
	back, err := state.Canonical(bad)
	if err == nil || !reflect.DeepEqual(back, bad) {
		t.Fatalf("an unknown kind: %v, %+v", err, back)
	}
}

// Decoding a state or working memory keeps one form of "none": nil, for
// collections written as [] or {} as for those left out.
func TestDecodedEmptyCollectionsAreNil(t *testing.T) {
	var s state.State
	doc := `{"session_id":"x","phase":"idle","history":[],"memory":{"plan":[],"notes":{},"tool_calls":[],"allowed_tools":[]}}`
	if err := json.Unmarshal([]byte(doc), &s); err != nil {
		t.Fatal(err)
	}
	if s.History != nil || s.Memory.Plan != nil || s.Memory.Notes != nil || s.Memory.ToolCalls != nil || s.Memory.AllowedTools != nil {
		t.Fatalf("empty collections kept: %#v", s)
	}
	if !reflect.DeepEqual(s, state.New("x")) {
		t.Fatalf("decoded %#v, want the new state", s)
	}
	for _, bad := range []string{`{"phase":"sleeping"}`, `{"memory":{"plan":3}}`, `[`} {
		if err := json.Unmarshal([]byte(bad), &s); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}

// The events of the model's rhythm: tools_done hands the results back,
// resumed takes up an interrupted task, endpoint_set records the model,
// and an answer closes the step the model was on.
func TestRhythmEvents(t *testing.T) {
	s := apply(t, state.New("s1"), userMsg("fix the build"),
		state.Event{Kind: state.PlanSet, At: t0, Plan: []state.Step{{Text: "read", Status: state.StepActive}, {Text: "fix"}}},
		assistantCalls("a"), assistantFinish("a"))
	s = apply(t, s, state.Event{Kind: state.ToolsDone, At: t0})
	if s.Phase != state.Reflecting || len(s.History) != 3 {
		t.Fatalf("after tools_done: %s with %d messages, want reflecting with 3 (nothing added)", s.Phase, len(s.History))
	}
	more := apply(t, s, state.Event{Kind: state.Continue, At: t0, Messages: msgs(call("b"))})
	if more.Phase != state.Executing || len(more.OpenCalls()) != 1 || more.OpenCalls()[0].ID != "b" {
		t.Fatalf("continue with a call: %s, open %v", more.Phase, more.OpenCalls())
	}
	answered := apply(t, s, state.Event{Kind: state.Answered, At: t0, Messages: msgs(state.Message{Role: state.RoleAssistant, Content: "fixed", Reasoning: "it was the import"})})
	if got := []state.StepState{answered.Memory.Plan[0].Status, answered.Memory.Plan[1].Status}; got[0] != state.StepDone || got[1] != state.StepPending {
		t.Fatalf("after the answer the steps are %v, want [done pending]: the step the model was on is over, the one it never began is not", got)
	}
	if last := answered.History[len(answered.History)-1]; last.Reasoning != "it was the import" || answered.FinalAnswer != "fixed" {
		t.Fatalf("the answer keeps its thinking: %+v", last)
	}

	stopped := apply(t, more, state.Event{Kind: state.Interrupted, At: t0, Text: "cancelled"})
	if !stopped.Unfinished() || answered.Unfinished() || state.New("s1").Unfinished() {
		t.Fatalf("Unfinished: interrupted %v, answered %v, empty %v; want true, false, false", stopped.Unfinished(), answered.Unfinished(), state.New("s1").Unfinished())
	}
	failed := apply(t, more, state.Event{Kind: state.Failed, At: t0, Text: "401"})
	if failed.Unfinished() {
		t.Fatal("a failed task is not an interrupted one")
	}
	resumed := apply(t, stopped, state.Event{Kind: state.Resumed, At: t0})
	if resumed.Phase != state.Reflecting || resumed.Memory.CurrentGoal != "fix the build" || len(resumed.Memory.Plan) != 2 {
		t.Fatalf("resumed: %s, goal %q, plan %v", resumed.Phase, resumed.Memory.CurrentGoal, resumed.Memory.Plan)
	}

	ep := state.Endpoint{Model: "qwen", BaseURL: "http://localhost:11434/v1", KeyEnv: "OLLAMA_KEY"}
	set := apply(t, answered, state.Event{Kind: state.EndpointSet, At: t0, Endpoint: &ep})
	if set.Endpoint != ep || set.Phase != state.Done || len(set.History) != len(answered.History) {
		t.Fatalf("endpoint_set: %+v in %s", set.Endpoint, set.Phase)
	}
	next := apply(t, set, userMsg("and the tests?"))
	if next.Endpoint != ep {
		t.Fatalf("the endpoint is the session's until another is recorded: %+v", next.Endpoint)
	}
	other := state.Endpoint{Model: "gpt-4o", BaseURL: "https://api.openai.com/v1", KeyEnv: "OPENAI_API_KEY"}
	withEP := userMsg("now with another model")
	withEP.Endpoint = &other
	if next := apply(t, answered, withEP); next.Endpoint != other {
		t.Fatalf("a user message that names the task's endpoint records it: %+v", next.Endpoint)
	}
}
