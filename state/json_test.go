package state_test

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"retrace/state"
	"retrace/state/statetest"
)

func TestStateJSONRoundTrip(t *testing.T) {
	for seed := range uint64(20) {
		_, s := statetest.Script(rand.New(rand.NewPCG(seed, 1)), state.New("abc"), 150)
		s.Version, s.ParentVersion = 151, 150
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var back state.State
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if !reflect.DeepEqual(back, s) {
			t.Fatalf("seed %d: round trip differs:\n%s\n%s", seed, b, mustJSON(t, back))
		}
	}
}

// The field names are a contract with scripts that read `retrace show --json`.
func TestStateJSONFieldNames(t *testing.T) {
	s := apply(t, executing(t), assistantCalls("a"), tool(state.ToolStarted, "a", t0))
	var doc map[string]any
	if err := json.Unmarshal([]byte(mustJSON(t, s)), &doc); err != nil {
		t.Fatal(err)
	}
	wantKeys(t, "state", doc, "session_id", "version", "parent_version", "phase", "history", "memory",
		"iteration", "final_answer", "error_message", "usage", "summary")
	mem := doc["memory"].(map[string]any)
	wantKeys(t, "memory", mem, "current_goal", "plan", "notes", "tool_calls")
	wantKeys(t, "plan step", mem["plan"].([]any)[0].(map[string]any), "text", "status")
	wantKeys(t, "tool log entry", mem["tool_calls"].([]any)[0].(map[string]any), "id", "name", "arguments", "started_at")
	hist := doc["history"].([]any)
	wantKeys(t, "message", hist[len(hist)-1].(map[string]any), "role", "content", "tool_calls")
	if doc["phase"] != "executing" {
		t.Fatalf("phase written as %v", doc["phase"])
	}

	var empty map[string]any
	if err := json.Unmarshal([]byte(mustJSON(t, state.New("x"))), &empty); err != nil {
		t.Fatal(err)
	}
	if h, ok := empty["history"].([]any); !ok || len(h) != 0 {
		t.Fatalf("an empty history must be written as [], got %v", empty["history"])
	}
	if n, ok := empty["memory"].(map[string]any)["notes"].(map[string]any); !ok || len(n) != 0 {
		t.Fatalf("empty notes must be written as {}, got %v", empty["memory"])
	}
	for _, k := range []string{"plan", "tool_calls"} {
		if l, ok := empty["memory"].(map[string]any)[k].([]any); !ok || len(l) != 0 {
			t.Fatalf("an empty %s must be written as [], got %v", k, empty["memory"])
		}
	}
}

func wantKeys(t *testing.T, what string, m map[string]any, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			have := slices.Sorted(func(yield func(string) bool) {
				for k := range m {
					if !yield(k) {
						return
					}
				}
			})
			t.Errorf("%s has no %q field (has %v)", what, k, have)
		}
	}
}

func TestEventRoundTrip(t *testing.T) {
	events, _ := statetest.Script(rand.New(rand.NewPCG(3, 3)), state.New("abc"), 400)
	for i, ev := range events {
		b, err := state.EncodeEvent(ev)
		if err != nil {
			t.Fatal(err)
		}
		back, err := state.DecodeEvent(b)
		if err != nil {
			t.Fatalf("event %d: %v\n%s", i, err, b)
		}
		if !reflect.DeepEqual(back, ev) {
			t.Fatalf("event %d differs after a round trip:\n%+v\n%+v", i, ev, back)
		}
	}
}

func TestDecodeEventRejects(t *testing.T) {
	for _, in := range []string{
		``, `{}`, `{"kind":"user-message"}`, `{"kind":"step_status","status":"halfway"}`,
		`{"kind":"plan_set","plan":[{"text":"x","status":"?"}]}`, `{"kind":"answered","at":"yesterday"}`,
		`{"kind":"answered"} trailing`, `[1,2]`,
	} {
		if _, err := state.DecodeEvent([]byte(in)); err == nil {
			t.Errorf("DecodeEvent(%q) accepted it", in)
		}
	}
}

// FuzzDecodeEvent feeds arbitrary bytes to the decoder of stored events. It
// must never panic; what it accepts must survive a round trip, and applying
// it to a state in any phase must return a state or an error, never panic.
func FuzzDecodeEvent(f *testing.F) {
	events, _ := statetest.Script(rand.New(rand.NewPCG(9, 9)), state.New("f"), 120)
	for _, ev := range events {
		b, _ := state.EncodeEvent(ev)
		f.Add(b)
	}
	f.Add([]byte(`{"kind":"tool_finished","tool":{"id":"x","result":"\u001b[2J"}}`))
	f.Add([]byte(`{"kind":"step_status","step":-1,"status":"done"}`))
	f.Add([]byte(`{"kind":"imported","at":"2026-11-22T10:00:00Z","text":"imported from x.json"}`))
	f.Add([]byte(`{"kind":"imported","messages":[{"role":"assistant","content":"hi"}]}`))

	bases := phaseSamples(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := state.DecodeEvent(b)
		if err != nil {
			return
		}
		again, err := state.EncodeEvent(ev)
		if err != nil {
			t.Fatalf("decoded event does not encode: %v", err)
		}
		back, err := state.DecodeEvent(again)
		if err != nil || !reflect.DeepEqual(back, ev) {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, ev, back)
		}
		for _, s := range bases {
			_, _ = state.Apply(s, ev)
			r := state.NewBuilder(s)
			_ = r.Apply(ev)
		}
	})
}

// phaseSamples returns states in varied phases and shapes, from scripts.
func phaseSamples(f *testing.F) []state.State {
	seen := map[state.Phase]int{}
	var out []state.State
	s := state.New("f")
	rng := rand.New(rand.NewPCG(5, 5))
	for range 400 {
		ev := statetest.NextEvent(rng, s)
		next, err := state.Apply(s, ev)
		if err != nil {
			f.Fatal(err)
		}
		s = next
		if seen[s.Phase] < 3 {
			seen[s.Phase]++
			out = append(out, s)
		}
	}
	return out
}

// Events are what the store keeps: their JSON is a format old files are
// read in, written here by hand, not taken from the encoder.
func TestEventWireFormat(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		ev   state.Event
		wire string
	}{
		{state.Event{Kind: state.ToolFinished, At: at, Tool: &state.ToolCall{ID: "c1", Result: "ok", DurationMS: 12}, Usage: state.Usage{PromptTokens: 1, CompletionTokens: 2}},
			`{"kind":"tool_finished","at":"2026-11-22T10:00:00Z","tool":{"id":"c1","result":"ok","duration_ms":12},"usage":{"prompt_tokens":1,"completion_tokens":2}}`},
		{state.Event{Kind: state.UserMessage, At: at, Messages: []state.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}}},
			`{"kind":"user_message","at":"2026-11-22T10:00:00Z","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]}`},
		{state.Event{Kind: state.AssistantMessage, At: at, Messages: []state.Message{{Role: "assistant", ToolCalls: []state.ToolRequest{{ID: "c2", Name: "read_file", Arguments: "{}"}}}}},
			`{"kind":"assistant_message","at":"2026-11-22T10:00:00Z","messages":[{"role":"assistant","content":"","tool_calls":[{"id":"c2","name":"read_file","arguments":"{}"}]}]}`},
		{state.Event{Kind: state.PlanSet, At: at, Goal: "g", Plan: []state.Step{{Text: "a", Status: state.StepPending}}},
			`{"kind":"plan_set","at":"2026-11-22T10:00:00Z","goal":"g","plan":[{"text":"a","status":"pending"}]}`},
		{state.Event{Kind: state.StepStatus, At: at, Step: 1, Status: state.StepSkipped},
			`{"kind":"step_status","at":"2026-11-22T10:00:00Z","step":1,"status":"skipped"}`},
		{state.Event{Kind: state.NoteSet, At: at, NoteKey: "k", NoteValue: "v"},
			`{"kind":"note_set","at":"2026-11-22T10:00:00Z","note_key":"k","note_value":"v"}`},
		{state.Event{Kind: state.ApprovalGiven, At: at, Tool: &state.ToolCall{ID: "c3"}, Always: true, Text: "fine"},
			`{"kind":"approval_given","at":"2026-11-22T10:00:00Z","tool":{"id":"c3"},"text":"fine","always":true}`},
		{state.Event{Kind: state.Summarized, At: at, Text: "s", Through: 4},
			`{"kind":"summarized","at":"2026-11-22T10:00:00Z","text":"s","through":4}`},
	} {
		b, err := state.EncodeEvent(c.ev)
		if err != nil || string(b) != c.wire {
			t.Errorf("%s encodes as\n%s (%v)\nwant\n%s", c.ev.Kind, b, err, c.wire)
		}
		back, err := state.DecodeEvent([]byte(c.wire))
		if err != nil || !reflect.DeepEqual(back, c.ev) {
			t.Errorf("%s decodes as %+v (%v), want %+v", c.ev.Kind, back, err, c.ev)
		}
	}
}
