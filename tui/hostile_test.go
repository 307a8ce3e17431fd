package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"retrace/state"
)

// A 5 MB paste is cut to the message cap, said so, and the screen still
// draws.
func TestHugePaste(t *testing.T) {
	m := newModel(t, newFake(richSession()...), "dark", 120, 40)
	paste := strings.Repeat("a log line with some text in it, 2026-11-22 10:00:00 INFO ok\n", 5<<20/62)
	start := time.Now()
	m.Update(tea.PasteMsg{Content: paste})
	out := m.View().Content
	t.Logf("a %d KiB paste: handled and drawn in %s", len(paste)>>10, time.Since(start).Round(time.Millisecond))
	if n := len(m.input.Message()); n > maxInput || n < maxInput-64 {
		t.Fatalf("the message holds %d bytes, cap %d", n, maxInput)
	}
	if !strings.Contains(m.notice, "only its first 256.0 KiB is in the message") {
		t.Fatalf("notice %q", m.notice)
	}
	checkScreen(t, out, 120, 40)
	m.Update(keyMsg("x")) // typing still works
}

// A tool that printed 100,000 lines, a binary file's note and invalid
// UTF-8 in a reply: the conversation shows a few lines, the screen stays
// whole, and the detail view scrolls through it.
func TestHugeAndStrangeToolOutput(t *testing.T) {
	var b strings.Builder
	for i := range 100_000 {
		b.WriteString("line ")
		b.WriteString(strings.Repeat("x", i%40))
		b.WriteString("\n")
	}
	events := []state.Event{
		{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "run it"}}},
		{Kind: state.PlanSet, Plan: []state.Step{{Text: "run"}}},
		{Kind: state.AssistantMessage, Messages: []state.Message{{Role: state.RoleAssistant, Content: "bad \xff\xfe bytes", ToolCalls: []state.ToolRequest{{ID: "c1", Name: "run_command", Arguments: `{"command":"seq"}`}}}}},
		{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: "c1", Result: b.String()}},
	}
	m := newModel(t, newFake(events...), "dark", 120, 40)
	start := time.Now()
	out := m.View().Content
	t.Logf("a 100,000-line tool output: first frame in %s", time.Since(start).Round(time.Millisecond))
	checkScreen(t, out, 120, 40)
	if !strings.Contains(plain(out), "more lines (the tool log shows it all)") {
		t.Fatal("the conversation should show the start of the output only")
	}
	press(m, "tab", "enter")
	if m.mode != modeToolDetail {
		t.Fatal("the tool log opens the call")
	}
	press(m, "pgdown", "pgdown")
	checkScreen(t, m.View().Content, 120, 40)
}
