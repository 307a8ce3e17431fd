package tui

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"

	"retrace/state"
)

// labelSession is a task as a real agent records it: the system prompt
// before the question, a plan made with a read in the same reply, an
// approved command that fails, an edit and a call to a tool retrace
// does not know, then the answer.
func labelSession() []state.Event {
	call := func(id, name, args string) state.ToolRequest {
		return state.ToolRequest{ID: id, Name: name, Arguments: args}
	}
	asst := func(text string, calls ...state.ToolRequest) []state.Message {
		return []state.Message{{Role: state.RoleAssistant, Content: text, ToolCalls: calls}}
	}
	tool := func(id string) *state.ToolCall { return &state.ToolCall{ID: id} }
	done := func(id, result string, ms int64) state.Event {
		return state.Event{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: id, Result: result, DurationMS: ms}}
	}
	return []state.Event{
		{Kind: state.UserMessage, Messages: []state.Message{
			{Role: state.RoleSystem, Content: "You are retrace, a careful coding agent working in a terminal for a developer.\nYou work in the directory /home/dev/clock."},
			{Role: state.RoleUser, Content: "The tests fail since this morning; find out why."}}},
		{Kind: state.PlanSet, Plan: []state.Step{{Text: "Read the notes"}, {Text: "Run the tests"}, {Text: "Fix what fails"}},
			Messages: asst("", call("call_1_0", "set_plan", `{"steps":["Read the notes","Run the tests","Fix what fails"]}`),
				call("call_1_1", "read_file", `{"path":"notes.txt","start_line":1,"end_line":100}`))},
		done("call_1_0", "plan set", 0),
		{Kind: state.StepStatus, Step: 0, Status: state.StepActive},
		{Kind: state.ToolStarted, Tool: tool("call_1_1")},
		done("call_1_1", "the tests need TZ=UTC\n", 3),
		{Kind: state.StepCompleted, Step: 0, Messages: asst("The notes say the tests need TZ=UTC.")},
		{Kind: state.Continue, Messages: asst("", call("call_2_0", "run_command", `{"command":"go test ./...","timeout_seconds":120}`))},
		{Kind: state.ApprovalRequested, Tool: tool("call_2_0")},
		{Kind: state.ApprovalGiven, Tool: tool("call_2_0")},
		{Kind: state.ToolStarted, Tool: tool("call_2_0")},
		done("call_2_0", "--- FAIL: TestClock (0.00s)\n    clock_test.go:12: got 09:00, want 10:00\nFAIL\nexit code: 1", 2140),
		{Kind: state.AssistantMessage, Messages: asst("The clock test reads the local zone.",
			call("call_3_0", "edit_file", `{"path":"clock_test.go","old_text":"time.Local","new_text":"time.UTC"}`),
			call("call_3_1", "fetch_url", `{"retries":2,"url":"https://pkg.go.dev/time#LoadLocation"}`))},
		{Kind: state.ApprovalRequested, Tool: tool("call_3_0")},
		{Kind: state.ApprovalGiven, Tool: tool("call_3_0"), Always: true},
		{Kind: state.ToolStarted, Tool: tool("call_3_0")},
		done("call_3_0", "edited clock_test.go: replaced 1 line with 1", 5),
		{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: "call_3_1", Error: "unknown tool fetch_url"}},
		{Kind: state.ToolsDone},
		{Kind: state.Answered, Messages: asst("The test assumed the local time zone; it uses UTC now.")},
	}
}

// The conversation draws each call by what it does, and each result
// under what the call did, how it ended and how long it took; never
// raw JSON, never the system prompt.
func TestConversationDrawsCallsForPeople(t *testing.T) {
	m := newModel(t, newFake(labelSession()...), "dark", 120, 40)
	conv := plain(strings.Join(m.conv.Render(110, 200), "\n"))
	for _, want := range []string{
		"→ read notes.txt, lines 1–100",
		"read notes.txt, lines 1–100 (3 ms)",
		"→ run go test ./...",
		"ran go test ./... (exit 1, 2.1 s)",
		"→ edit clock_test.go (+1 −1)",
		"edited clock_test.go (+1 −1, 5 ms)",
		"→ call fetch_url https://pkg.go.dev/time#LoadLocation",
		"called fetch_url https://pkg.go.dev/time#LoadLocation (failed: unknown tool fetch_url, 0 ms)",
	} {
		if !strings.Contains(conv, want) {
			t.Errorf("the conversation lacks %q:\n%s", want, conv)
		}
	}
	for _, raw := range []string{`{"`, "call_", "You are retrace", "system prompt", "tool run_command"} {
		if strings.Contains(conv, raw) {
			t.Errorf("the conversation shows %q:\n%s", raw, conv)
		}
	}
	if first := strings.TrimSpace(strings.SplitN(strings.TrimSpace(conv), "\n", 2)[0]); first != "You" {
		t.Errorf("the conversation opens with %q, not with what the person said", first)
	}
}

// A call's full JSON arguments are in the tool detail (Enter on a call in
// the tool log), under what the call did; a long argument is not cut.
func TestToolDetailHasTheFullArguments(t *testing.T) {
	long := strings.Repeat("x", 300)
	evs := labelSession()
	evs[7].Messages[0].ToolCalls[0].Arguments = `{"command":"go test ./... -run ` + long + `","timeout_seconds":120}`
	m := newModel(t, newFake(evs...), "dark", 120, 40)
	press(m, "tab", "up", "up") // from the last call to run_command
	_, cmd := m.Update(keyMsg("enter"))
	run(m, cmd)
	if m.mode != modeToolDetail {
		t.Fatal("Enter on the tool log did not open the call")
	}
	body := strings.Join(m.detail.body, "\n")
	for _, want := range []string{
		"ran go test ./... -run xxx",
		"tool run_command · call id call_2_0",
		`"command": "go test ./... -run ` + long + `"`,
		`"timeout_seconds": 120`,
		"exit code: 1",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the detail lacks %q:\n%s", want, body)
		}
	}
	if title := plain(m.detail.title); !strings.HasPrefix(title, "run go test ./... -run xxx") || !strings.HasSuffix(title, "Esc back") {
		t.Errorf("the detail's title is %q, not the call and the keys", title)
	}
}

// Goldens of the new labels at both sizes: the chat at the head, the
// timeline at the failed command, and the banner's line for every
// version.
func TestLabelGoldens(t *testing.T) {
	for _, size := range [][2]int{{120, 40}, {80, 24}} {
		w, h := size[0], size[1]
		t.Run(fmt.Sprintf("chat_%dx%d", w, h), func(t *testing.T) {
			m := newModel(t, newFake(labelSession()...), "dark", w, h)
			out := m.View().Content
			checkScreen(t, out, w, h)
			golden.RequireEqual(t, []byte(out))
		})
		t.Run(fmt.Sprintf("timeline_%dx%d", w, h), func(t *testing.T) {
			m := newModel(t, newFake(labelSession()...), "dark", w, h)
			_, cmd := m.Update(keyMsg("ctrl+t"))
			run(m, cmd)
			for m.timeline != nil && m.timeline.current().Version > 12 {
				press(m, "left")
			}
			out := m.View().Content
			checkScreen(t, out, w, h)
			golden.RequireEqual(t, []byte(out))
		})
		t.Run(fmt.Sprintf("banner_%dx%d", w, h), func(t *testing.T) {
			m := newModel(t, newFake(labelSession()...), "dark", w, h)
			_, cmd := m.Update(keyMsg("ctrl+t"))
			run(m, cmd)
			press(m, "home")
			var banners []string
			for range len(labelSession()) + 1 {
				banners = append(banners, plain(lines(m.View().Content)[1]))
				m.Update(tea.KeyPressMsg(tea.Key{Code: tea.KeyRight}))
			}
			golden.RequireEqual(t, []byte(strings.Join(banners, "\n")+"\n"))
		})
	}
}

// A result is drawn from the tool log: the same message under another
// log entry (another branch's run of the same command) is drawn again,
// not taken from the cache.
func TestConversationRedrawsAResultWhenItsCallChanges(t *testing.T) {
	m := newModel(t, newFake(labelSession()...), "dark", 120, 40)
	before := plain(strings.Join(m.conv.Render(110, 200), "\n"))
	if !strings.Contains(before, "ran go test ./... (exit 1, 2.1 s)") {
		t.Fatalf("before:\n%s", before)
	}
	log := slices.Clone(m.head.Memory.ToolCalls)
	for i := range log {
		if log[i].ID == "call_2_0" {
			log[i].DurationMS = 3000
		}
	}
	m.conv.SetCalls(log)
	if after := plain(strings.Join(m.conv.Render(110, 200), "\n")); !strings.Contains(after, "ran go test ./... (exit 1, 3.0 s)") {
		t.Fatalf("the result still shows the old log's call:\n%s", after)
	}
}
