package tui

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"retrace/state"
	"retrace/state/statetest"
	"retrace/state/transcript"
	"retrace/state/transcript/inerttest"
)

// labelled is one event of a session and the label the timeline gives it.
type labelled struct {
	ev   state.Event
	want string
}

// everyKind is a session that holds every kind of event, each with the
// label a person reads for it, written out by hand.
func everyKind() []labelled {
	call := func(id, name, args string) state.ToolRequest {
		return state.ToolRequest{ID: id, Name: name, Arguments: args}
	}
	asst := func(text string, calls ...state.ToolRequest) []state.Message {
		return []state.Message{{Role: state.RoleAssistant, Content: text, ToolCalls: calls}}
	}
	tool := func(id string) *state.ToolCall { return &state.ToolCall{ID: id} }
	file := state.FileChange{Path: "main.go", Before: state.FileImage{Absent: true}, After: state.FileImage{Size: 9 << 20, Untracked: "larger than 8 MiB"}}
	return []labelled{
		{state.Event{Kind: state.UserMessage, Messages: []state.Message{
			{Role: state.RoleSystem, Content: "You are retrace, a careful coding agent."},
			{Role: state.RoleUser, Content: "Why does\n`go build` fail?"}}},
			"you said: Why does `go build` fail? → planning"},
		{state.Event{Kind: state.PlanSet, Plan: []state.Step{{Text: "Read main.go"}, {Text: "Run the build"}},
			Messages: asst("", call("call_p", "set_plan", `{"steps":["Read main.go","Run the build"]}`), call("call_r", "read_file", `{"path":"main.go","start_line":1,"end_line":40}`))},
			"the model set the plan: 2 steps and asked to read main.go, lines 1–40 → executing"},
		{state.Event{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: "call_p", Result: "plan set"}}, "set the plan: 2 steps (0 ms) → executing"},
		{state.Event{Kind: state.StepStatus, Step: 0, Status: state.StepActive}, "step 1 is under way: Read main.go → executing"},
		{state.Event{Kind: state.ToolStarted, Tool: tool("call_r")}, "started: read main.go, lines 1–40 → executing"},
		{state.Event{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: "call_r", Result: "package main\n", DurationMS: 3}},
			"read main.go, lines 1–40 (3 ms) → executing"},
		{state.Event{Kind: state.NoteSet, NoteKey: "module", NoteValue: "greeter"}, "the model noted module: greeter → executing"},
		{state.Event{Kind: state.NoteSet, NoteKey: "module"}, "the model forgot the note module → executing"},
		{state.Event{Kind: state.ToolsDone}, "every tool call has its result; the model reads them next → reflecting"},
		{state.Event{Kind: state.Continue, Messages: asst("It calls greet.", call("call_b", "run_command", `{"command":"go build ./..."}`))},
			"the model went on and asked to run go build ./..., saying: It calls greet. → executing"},
		{state.Event{Kind: state.ApprovalRequested, Tool: tool("call_b")}, "waiting for your approval: run go build ./... → awaiting approval"},
		{state.Event{Kind: state.ApprovalGiven, Tool: tool("call_b"), Always: true},
			"you approved: run go build ./..., and every run_command call for the rest of the session → executing"},
		{state.Event{Kind: state.ToolStarted, Tool: tool("call_b")}, "started: run go build ./... → executing"},
		{state.Event{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: "call_b", Result: "./main.go:6:14: undefined: greet\nexit code: 1", DurationMS: 2140},
			Files: []state.FileChange{file}},
			"ran go build ./... (exit 1, 2.1 s) → executing"},
		{state.Event{Kind: state.AssistantMessage, Messages: asst("", call("call_w", "write_file", `{"path":"greet.go","content":"package main\n"}`),
			call("call_f", "fetch_url", `{"tries":2,"url":"https://go.dev/doc"}`))},
			"the model asked to write greet.go (1 line) and call fetch_url https://go.dev/doc → executing"},
		{state.Event{Kind: state.ApprovalRequested, Tool: tool("call_w")}, "waiting for your approval: write greet.go (1 line) → awaiting approval"},
		{state.Event{Kind: state.ApprovalDenied, Tool: tool("call_w"), Text: "not yet"}, "you denied: write greet.go (1 line): not yet → executing"},
		{state.Event{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: "call_f", Error: "unknown tool fetch_url"}},
			"called fetch_url https://go.dev/doc (failed: unknown tool fetch_url, 0 ms) → executing"},
		{state.Event{Kind: state.StepCompleted, Step: 0, Messages: asst("main.go is read.")},
			"step 1 is done: Read main.go; the model said: main.go is read. → reflecting"},
		{state.Event{Kind: state.Replan}, "the model went back to planning → planning"},
		{state.Event{Kind: state.Answered, Messages: asst("greet is not defined;\nadd it.")}, "the model answered: greet is not defined; add it. → done"},
		{state.Event{Kind: state.EndpointSet, Endpoint: &state.Endpoint{Model: "qwen3", BaseURL: "http://localhost:11434/v1"}},
			"the session now talks to qwen3 at http://localhost:11434/v1 → done"},
		{state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "and the tests?"}}}, "you said: and the tests? → planning"},
		{state.Event{Kind: state.Summarized, Text: "They asked why the build fails.", Through: 12},
			"the older turns were summarised to fit the context window (12 messages) → planning"},
		{state.Event{Kind: state.Interrupted, Text: "cancelled by the user"}, "the task was interrupted: cancelled by the user → idle"},
		{state.Event{Kind: state.Resumed}, "the interrupted task goes on → reflecting"},
		{state.Event{Kind: state.Failed, Text: "the endpoint answered 503"}, "the task failed: the endpoint answered 503 → error"},
		{state.Event{Kind: state.RestoreStarted, From: 9, Files: []state.FileChange{file}},
			"restoring 1 file as it was here (the workspace was at v9) → error"},
		{state.Event{Kind: state.FilesRestored, Text: "restored 1 file"}, "the restore is over: restored 1 file → error"},
		{state.Event{Kind: state.Imported, Text: "imported from review.json"},
			"the session arrived here (imported from review.json): nothing of it runs until you send a message → error"},
	}
}

// Every kind of event has a label a person reads: what was said (never
// the system prompt), which call ran, by what it does, and no wire
// names or call ids.
func TestEveryEventKindHasAHumanLabel(t *testing.T) {
	b := state.NewBuilder(state.New("s"))
	seen := map[state.EventKind]bool{}
	for i, l := range everyKind() {
		l.ev.At = t0.Add(time.Duration(i) * time.Second)
		if err := b.Apply(l.ev); err != nil {
			t.Fatalf("event %d (%s): %v", i+1, l.ev.Kind, err)
		}
		b.SetVersion(i+1, i)
		seen[l.ev.Kind] = true
		if got := describe(Version{Version: i + 1, Parent: i, Event: l.ev, Phase: b.Phase()}, b.State()); got != l.want {
			t.Errorf("v%d %s:\n got %q\nwant %q", i+1, l.ev.Kind, got, l.want)
		}
	}
	for _, k := range state.EventKinds {
		if !seen[k] {
			t.Errorf("no label is checked for %s", k)
		}
	}
}

// wireName is what a label must never show: an event's or a phase's
// stored name, or a call id.
var wireName = func() *regexp.Regexp {
	var names []string
	for _, k := range state.EventKinds {
		if strings.Contains(k.String(), "_") {
			names = append(names, k.String())
		}
	}
	for _, p := range state.Phases {
		if strings.Contains(p.String(), "_") {
			names = append(names, p.String())
		}
	}
	return regexp.MustCompile(strings.Join(names, "|") + `|call_\d`)
}()

// In random sessions too, every label is one line for people.
func TestLabelsOfRandomSessionsAreForPeople(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		b := state.NewBuilder(state.New("s"))
		for i := range 300 {
			ev := statetest.NextEvent(rng, b.State())
			if err := b.Apply(ev); err != nil {
				t.Fatalf("seed %d event %d: %v", seed, i, err)
			}
			got := describe(Version{Version: i + 1, Event: ev, Phase: b.Phase()}, b.State())
			if got == "" || strings.Contains(got, "\n") || wireName.MatchString(got) {
				t.Fatalf("seed %d, %s: the label %q is not for people", seed, ev.Kind, got)
			}
		}
	}
}

// The tool log's entry for a call drawn in the conversation: one line,
// cut to the room, whatever the model sent.
func FuzzCallLine(f *testing.F) {
	f.Add("read_file", `{"path":"a.go","start_line":1,"end_line":9}`, "x", "", int64(3), 40)
	f.Add("run_command", `{"command":"go test ./...\n\u001b[2J"}`, "exit code: 1", "", int64(2100), 12)
	f.Add("界\x1b]0;t\x07", `{"a":"全角文字全角文字全角文字"}`, "", "\u202e", int64(-1), 5)
	f.Fuzz(func(t *testing.T, name, args, result, errText string, ms int64, width int) {
		width = min(max(width, 1), 300)
		call := state.ToolCall{Name: name, Arguments: args, Result: result, Error: errText, DurationMS: ms, FinishedAt: t0}
		for _, s := range []string{callLine(transcript.CallSummary(name, args), width), callLine(transcript.CallOutcome(call), width)} {
			if strings.ContainsAny(s, "\n\r") || ansi.StringWidth(s) > width {
				t.Fatalf("%q is not one line of at most %d cells", s, width)
			}
			if bad := inerttest.Problems(s, ""); len(bad) != 0 {
				t.Fatalf("%q carries %v", s, bad)
			}
		}
	})
}
