package state_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"retrace/state"
)

// A session's first message names its instruction files and every task's
// message its memories: the files stay, the memories are the latest
// task's, and both come back from the binary body and from a snapshot.
func TestBriefingIsKeptByTheState(t *testing.T) {
	files := []state.InstructionFile{{Path: "/src/app/AGENTS.md", Tokens: 420}, {Path: "/home/ada/.config/retrace/AGENTS.md", Tokens: 80, Truncated: true}}
	first := &state.Briefing{Instructions: files, Memories: []state.Memory{memory("m1", "", "call me Ada")}}
	second := &state.Briefing{Memories: []state.Memory{memory("m2", "/src/app", "tabs")}}
	s := state.New("b")
	for _, ev := range []state.Event{
		{Kind: state.UserMessage, At: memoryT0, Messages: []state.Message{{Role: state.RoleUser, Content: "hi"}}, Briefing: first},
		{Kind: state.Answered, At: memoryT0, Messages: []state.Message{{Role: state.RoleAssistant, Content: "hello"}}},
		{Kind: state.UserMessage, At: memoryT0, Messages: []state.Message{{Role: state.RoleUser, Content: "again"}}, Briefing: second},
	} {
		body := state.AppendEventBody(nil, ev)
		back, err := state.DecodeEventBody(ev.Kind, ev.At, body)
		if err != nil || !reflect.DeepEqual(back, ev) {
			t.Fatalf("%s read back as %+v (%v)", ev.Kind, back, err)
		}
		if s, err = state.Apply(s, ev); err != nil {
			t.Fatal(err)
		}
	}
	want := state.Briefing{Instructions: files, Memories: second.Memories}
	if !reflect.DeepEqual(s.Briefing, want) {
		t.Fatalf("the state's briefing is %+v, want %+v", s.Briefing, want)
	}
	if got := snapshotRoundTrip(t, s); !reflect.DeepEqual(got.Briefing, want) {
		t.Fatalf("the snapshot's briefing is %+v", got.Briefing)
	}
	for _, b := range []state.Briefing{{Instructions: files}, {Memories: second.Memories}} {
		one := s
		one.Briefing = b
		if got := snapshotRoundTrip(t, one); !reflect.DeepEqual(got.Briefing, b) {
			t.Fatalf("a snapshot of the briefing %+v reads back as %+v", b, got.Briefing)
		}
	}
	_, err := state.Apply(s, state.Event{Kind: state.PlanSet, At: memoryT0, Plan: []state.Step{{Text: "x"}}, Briefing: second})
	var ee *state.EventError
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "only user_message carries a briefing") {
		t.Fatalf("a briefing on plan_set: %v", err)
	}
	// plan_set's own check ends early; what no kind but two carries is
	// checked before it.
	_, err = state.Apply(s, state.Event{Kind: state.PlanSet, At: memoryT0, Plan: []state.Step{{Text: "x"}}, Endpoint: &state.Endpoint{Model: "m"}})
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "only user_message and endpoint_set carry an endpoint") {
		t.Fatalf("an endpoint on plan_set: %v", err)
	}
}
