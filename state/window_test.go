package state_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"retrace/state"
	"retrace/state/statetest"
)

// A windowed state, and one read back from its snapshot, goes on like the
// whole: the rest of a random session applied to either gives the whole
// session's final state, less the same old messages and tool calls.
func TestWindowGoesOnLikeTheWhole(t *testing.T) {
	windows := 0
	for seed := range uint64(16) {
		rng := rand.New(rand.NewPCG(seed, 21))
		events, states := script(rng, 240)
		final := states[len(states)-1]
		for range 12 {
			k := rng.IntN(len(states))
			at := states[k]
			from := at.HistoryFrom + rng.IntN(at.HistoryLen()+1)
			w, err := at.Window(from)
			if err != nil {
				t.Fatal(err)
			}
			where := fmt.Sprintf("seed %d, after %d events, window from %d", seed, k, from)
			if w.HistoryFrom > from || (w.HistoryFrom < from && w.HistoryFrom != at.HistoryFrom+lastExchange(at.History)) {
				t.Fatalf("%s: the window starts at %d", where, w.HistoryFrom)
			}
			if got := snapshotRoundTrip(t, w); !reflect.DeepEqual(got, w) {
				t.Fatalf("%s: the snapshot reads back as\n%#v\nnot\n%#v", where, got, w)
			}
			for _, start := range []state.State{w, snapshotRoundTrip(t, w)} {
				b := state.NewBuilder(start)
				for i, ev := range events[k:] {
					if err := b.Apply(ev); err != nil {
						t.Fatalf("%s: event %d (%s) refused by the window: %v", where, k+i+1, ev.Kind, err)
					}
				}
				sameButWindow(t, where, b.State(), final)
			}
			windows++
		}
	}
	t.Logf("%d windows went on", windows)
}

// An event Apply refuses on the whole state it refuses on a window, for
// the same reason; the one rule a window cannot check is a summary ending
// inside a turn it does not hold.
func TestWindowRefusesWhatTheWholeRefuses(t *testing.T) {
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 22))
		_, states := script(rng, 150)
		for k, s := range states {
			ev, want := statetest.Invalid(rng, s)
			w, err := s.Window(s.HistoryFrom + rng.IntN(s.HistoryLen()+1))
			if err != nil {
				t.Fatal(err)
			}
			_, err = state.Apply(w, ev)
			if want.Rule == "a summary ending inside a turn" && ev.Through < w.HistoryFrom {
				continue
			}
			var ee *state.EventError
			if !errors.As(err, &ee) || ee.Reason != want.Reason {
				t.Fatalf("seed %d step %d: %s on a window from %d: got %v, want %q", seed, k, want.Rule, w.HistoryFrom, err, want.Reason)
			}
		}
	}
}

func TestWindowKeepsTheLatestExchange(t *testing.T) {
	s := state.New("w")
	for _, ev := range []state.Event{
		{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleSystem, Content: "be brief"}, {Role: state.RoleUser, Content: "hi"}}},
		{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: "hello"}}},
		{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "list files"}}},
		{Kind: state.PlanSet, Plan: []state.Step{{Text: "look"}}, Messages: []state.Message{{Role: state.RoleAssistant, ToolCalls: []state.ToolRequest{{ID: "c1", Name: "ls"}, {ID: "c2", Name: "ls"}}}}},
		{Kind: state.ToolStarted, Tool: &state.ToolCall{ID: "c1"}},
		{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: "c1", Result: "a.go"}},
	} {
		var err error
		if s, err = state.Apply(s, ev); err != nil {
			t.Fatalf("%s: %v", ev.Kind, err)
		}
	}
	w, err := s.Window(s.HistoryLen())
	if err != nil {
		t.Fatal(err)
	}
	// The assistant's calls and the one answer so far: c2 is still open.
	if w.HistoryFrom != 4 || len(w.History) != 2 || w.History[0].Role != state.RoleAssistant {
		t.Fatalf("window from %d holds %v", w.HistoryFrom, w.History)
	}
	if got := w.OpenCalls(); len(got) != 1 || got[0].ID != "c2" {
		t.Fatalf("the window's open calls are %v, want c2", got)
	}
	if len(w.Memory.ToolCalls) != 1 || w.Memory.ToolCallsFrom != 0 {
		t.Fatalf("the window's tool log is %v from %d", w.Memory.ToolCalls, w.Memory.ToolCallsFrom)
	}
	if w.SystemPrompt() != "be brief" || s.SystemPrompt() != "be brief" {
		t.Fatalf("the system prompt is %q in the window and %q in the whole", w.SystemPrompt(), s.SystemPrompt())
	}
	if _, err := s.Window(s.HistoryLen() + 1); err == nil {
		t.Fatal("a window past the end was made")
	}
	if _, err := w.Window(w.HistoryFrom - 1); err == nil {
		t.Fatal("a window reaching before what a window holds was made")
	}
}

func TestDecodeSnapshotRefusesDamage(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 23))
	_, states := script(rng, 80) // every prefix is decoded: the cost is the body's length squared
	body := state.AppendSnapshot(nil, states[len(states)-1])
	for i := range body {
		if _, err := state.DecodeSnapshot(body[:i]); err == nil && i > 0 && !prefixIsWhole(body, i) {
			t.Fatalf("a snapshot cut to %d of %d bytes decoded", i, len(body))
		}
	}
	if _, err := state.DecodeSnapshot(append(slices.Clone(body), 0x7f)); err == nil {
		t.Fatal("an unknown field decoded")
	}
}

// prefixIsWhole reports whether body[:i] ends at a field's end, which a
// cut there leaves decodable (the fields after it are simply absent).
func prefixIsWhole(body []byte, i int) bool {
	_, err := state.DecodeSnapshot(body[:i])
	return err == nil
}

// script returns a random session's events and the state after each,
// states[0] being the empty one.
func script(rng *rand.Rand, n int) ([]state.Event, []state.State) {
	s := state.New("w")
	events := make([]state.Event, 0, n)
	states := []state.State{s}
	for range n {
		ev := statetest.NextEvent(rng, s)
		next, err := state.Apply(s, ev)
		if err != nil {
			panic(err)
		}
		events, states, s = append(events, ev), append(states, next), next
	}
	return events, states
}

func snapshotRoundTrip(t *testing.T, s state.State) state.State {
	t.Helper()
	got, err := state.DecodeSnapshot(state.AppendSnapshot(nil, s))
	if err != nil {
		t.Fatal(err)
	}
	got.SessionID, got.Version, got.ParentVersion = s.SessionID, s.Version, s.ParentVersion
	return got
}

func lastExchange(h []state.Message) int {
	i := len(h) - 1
	for i > 0 && h[i].Role == state.RoleTool {
		i--
	}
	return max(i, 0)
}

// sameButWindow fails unless got is want less the messages and tool calls
// before got's window.
func sameButWindow(t *testing.T, where string, got, want state.State) {
	t.Helper()
	if got.HistoryLen() != want.HistoryLen() || !reflect.DeepEqual(got.History, want.History[got.HistoryFrom:]) {
		t.Fatalf("%s: the window holds %d of %d messages, not the whole's last ones", where, len(got.History), want.HistoryLen())
	}
	calls := want.Memory.ToolCalls
	if got.Memory.ToolCallsFrom > len(calls) || !reflect.DeepEqual(got.Memory.ToolCalls, nilIfEmpty(calls[got.Memory.ToolCallsFrom:])) {
		t.Fatalf("%s: the tool log is\n%v from %d, not the whole's\n%v", where, got.Memory.ToolCalls, got.Memory.ToolCallsFrom, calls)
	}
	if got.SystemPrompt() != want.SystemPrompt() {
		t.Fatalf("%s: system prompt %q, want %q", where, got.SystemPrompt(), want.SystemPrompt())
	}
	rest := func(s state.State) state.State {
		s.History, s.HistoryFrom, s.Memory.ToolCalls, s.Memory.ToolCallsFrom = nil, 0, nil, 0
		return state.WithoutPrompt(s)
	}
	if g, w := rest(got), rest(want); fmt.Sprintf("%#v", g) != fmt.Sprintf("%#v", w) {
		t.Fatalf("%s: beside the history the states differ:\n%#v\n%#v", where, g, w)
	}
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// Servers that number calls per reply send call_0 every turn. A window
// cuts the tool log by the calls asked before it all the same, so a
// window of a window, gone on from, is the window of the whole: what a
// store's snapshot-based load must give.
func TestWindowOfAWindowWithReusedCallIDs(t *testing.T) {
	var events []state.Event
	for i := range 12 {
		calls := []state.ToolRequest{{ID: "call_0", Name: "ls"}, {ID: "call_1", Name: "ls"}}
		events = append(events,
			state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: fmt.Sprintf("turn %d", i)}}},
			state.Event{Kind: state.PlanSet, Plan: []state.Step{{Text: "look"}}, Messages: []state.Message{{Role: state.RoleAssistant, ToolCalls: calls}}})
		for _, c := range calls {
			events = append(events, state.Event{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: c.ID, Result: fmt.Sprintf("%s of turn %d", c.ID, i)}})
		}
		events = append(events, state.Event{Kind: state.StepCompleted, Step: 0},
			state.Event{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: "done"}}})
	}
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	for i := range events {
		events[i].At = at.Add(time.Duration(i) * time.Second) // as every stored event has one
	}
	states := []state.State{state.New("w")}
	for _, ev := range events {
		next, err := state.Apply(states[len(states)-1], ev)
		if err != nil {
			t.Fatalf("%s: %v", ev.Kind, err)
		}
		states = append(states, next)
	}
	for k := 0; k < len(states); k += 3 {
		for a := 0; a <= states[k].HistoryLen(); a += 2 {
			w, err := states[k].Window(a)
			if err != nil {
				t.Fatal(err)
			}
			b := state.NewBuilder(w)
			for _, ev := range events[k:] {
				if err := b.Apply(ev); err != nil {
					t.Fatal(err)
				}
			}
			got, whole := b.State(), states[len(states)-1]
			for from := got.HistoryFrom; from <= got.HistoryLen(); from += 5 {
				g, err := got.Window(from)
				if err != nil {
					t.Fatal(err)
				}
				want, err := whole.Window(from)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(g, want) {
					t.Fatalf("after %d events, from %d, then from %d: the tool log is %d calls from %d, the whole's window %d from %d",
						k, a, from, len(g.Memory.ToolCalls), g.Memory.ToolCallsFrom, len(want.Memory.ToolCalls), want.Memory.ToolCallsFrom)
				}
			}
		}
	}
}

// A damaged snapshot is an error, never a panic, and the state one
// decodes to is written and read back as itself, its allowed tools
// sorted and each once. Events go on from it without a panic too.
//
//	go test ./state -run '^$' -fuzz FuzzSnapshot -fuzztime 60s
func FuzzSnapshot(f *testing.F) {
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 23))
		_, states := script(rng, 120)
		for _, k := range []int{0, 10, 60, 120} {
			s := states[k]
			f.Add(state.AppendSnapshot(nil, s))
			if w, err := s.Window(s.HistoryLen()); err == nil {
				f.Add(state.AppendSnapshot(nil, w))
			}
		}
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		s, err := state.DecodeSnapshot(p)
		if err != nil {
			return
		}
		if again := snapshotRoundTrip(t, s); !reflect.DeepEqual(again, s) {
			t.Fatalf("decoded %+v, written again and read back as %+v", s, again)
		}
		if tools := s.Memory.AllowedTools; !slices.IsSorted(tools) || len(slices.Compact(slices.Clone(tools))) != len(tools) {
			t.Fatalf("decoded allowed tools %q: not sorted, or one twice", tools)
		}
		for _, ev := range goOnEvents {
			_, _ = state.Apply(s, ev)
		}
	})
}

// goOnEvents are one event of each kind a stored session goes on with,
// for FuzzSnapshot to apply to whatever state a snapshot decodes to.
var goOnEvents = func() []state.Event {
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	call := &state.ToolCall{ID: "call_0", Name: "read_file", Arguments: `{"path":"a"}`, Result: "a"}
	say := func(role, text string) []state.Message { return []state.Message{{Role: role, Content: text}} }
	return []state.Event{
		{Kind: state.UserMessage, At: at, Messages: say(state.RoleUser, "go on")},
		{Kind: state.PlanSet, At: at, Plan: []state.Step{{Text: "look"}}},
		{Kind: state.AssistantMessage, At: at, Messages: []state.Message{{Role: state.RoleAssistant, ToolCalls: []state.ToolRequest{{ID: "call_0", Name: "read_file"}}}}},
		{Kind: state.ApprovalRequested, At: at, Tool: call},
		{Kind: state.ApprovalGiven, At: at, Tool: call, Always: true},
		{Kind: state.ToolStarted, At: at, Tool: call},
		{Kind: state.ToolFinished, At: at, Tool: call},
		{Kind: state.StepCompleted, At: at},
		{Kind: state.Summarized, At: at, Text: "so far", Through: 1},
		{Kind: state.Answered, At: at, Messages: say(state.RoleAssistant, "done")},
		{Kind: state.Interrupted, At: at, Text: "cancelled"},
		{Kind: state.Failed, At: at, Text: "gone"},
		{Kind: state.Resumed, At: at},
	}
}()

// A snapshot holds notes, files and allowed tools as a state does: sorted,
// each once. One that repeats or reorders them is not one AppendSnapshot
// wrote, and is refused rather than read as some other state.
func TestSnapshotRefusesRepeatsAndDisorder(t *testing.T) {
	s := state.New("x")
	s.Memory.Notes = map[string]string{"k1": "one", "k2": "two"}
	s.Memory.AllowedTools = []string{"run_command", "write_file"}
	p := state.AppendSnapshot(nil, s)
	if _, err := state.DecodeSnapshot(p); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string][]byte{
		"a note twice":           bytes.Replace(p, []byte("k2"), []byte("k1"), 1),
		"notes out of order":     bytes.Replace(p, []byte("k1"), []byte("k3"), 1),
		"allowed tools unsorted": bytes.Replace(p, []byte("run_command"), []byte("zun_command"), 1),
	} {
		if _, err := state.DecodeSnapshot(bad); err == nil || !strings.Contains(err.Error(), "repeated or out of order") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A snapshot keeps the endpoint a session talks to, and refuses a phase
// no state can be in.
func TestSnapshotKeepsTheEndpointAndRefusesUnknownPhases(t *testing.T) {
	s := state.New("x")
	s.Phase = state.Error
	s.Endpoint = state.Endpoint{Model: "m", BaseURL: "http://localhost:11434/v1", KeyEnv: "OLLAMA_KEY"}
	if got := snapshotRoundTrip(t, s); got.Endpoint != s.Endpoint || got.Phase != state.Error {
		t.Fatalf("read back as %+v in phase %s", got.Endpoint, got.Phase)
	}
	for _, ph := range []state.Phase{state.Phase(len(state.Phases)), 255} {
		s.Phase = ph
		if _, err := state.DecodeSnapshot(state.AppendSnapshot(nil, s)); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("phase %d: %v", int(ph), err)
		}
	}
	// The first phase, idle, is 0: the phase's tag (1) with 0 is idle.
	if got, err := state.DecodeSnapshot([]byte{1, 0}); err != nil || got.Phase != state.Idle {
		t.Errorf("phase 0: %s, %v", got.Phase, err)
	}
	if p := state.New("x").SystemPrompt(); p != "" {
		t.Errorf("an empty session's system prompt is %q", p)
	}
}
