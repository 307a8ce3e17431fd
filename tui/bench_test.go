package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"retrace/state"
)

// longSession is a session of n messages: turns of a question and an
// answer with a little markdown, every fifth answer after a tool call.
func longSession(n int) []state.Event {
	var evs []state.Event
	for i := 0; len(evs) < n/2; i++ {
		evs = append(evs,
			state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: fmt.Sprintf("question %d: why does the build fail on line %d?", i, i)}}},
			state.Event{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: fmt.Sprintf("Turn %d. The **import** is wrong:\n\n```go\nimport \"fmt\"\n```\n\nFix it and run `go build`.", i)}}})
	}
	return evs
}

func longModel(b *testing.B, messages int) (*Model, *fakeDriver) {
	f := newFake(longSession(messages)...)
	m := newModel(b, f, "dark", 120, 40)
	return m, f
}

// BenchmarkFirstFrame: a model made for a 10,000-message session, sized,
// and drawn once (the store's load is measured by retrace bench).
func BenchmarkFirstFrame(b *testing.B) {
	f := newFake(longSession(10_000)...)
	for b.Loop() {
		m := newModel(b, f, "dark", 120, 40)
		_ = m.View()
	}
}

// BenchmarkView: the root View once warm, with a 10,000-message session.
func BenchmarkView(b *testing.B) {
	m, _ := longModel(b, 10_000)
	_ = m.View()
	for b.Loop() {
		_ = m.View()
	}
}

// BenchmarkStreamingFrame: a streamed token arrives and the frame is drawn.
func BenchmarkStreamingFrame(b *testing.B) {
	m, _ := longModel(b, 10_000)
	m.Update(DeltaMsg{Phase: state.Planning, Text: strings.Repeat("some streamed text with `code` ", 40)})
	for b.Loop() {
		m.Update(DeltaMsg{Phase: state.Planning, Text: "more "})
		_ = m.View()
	}
}

// BenchmarkTimelineStep: one step back in the timeline, drawn.
func BenchmarkTimelineStep(b *testing.B) {
	m, f := longModel(b, 10_000)
	t, err := newTimeline(f.info.ID, f.versions, 1)
	if err != nil {
		b.Fatal(err)
	}
	m.timeline, m.mode = t, modeTimeline
	m.relayout()
	for b.Loop() {
		if t.pos == 0 {
			t.pos = len(t.versions)
		}
		m.Update(keyMsg("left"))
		_ = m.View()
	}
}

// BenchmarkKeystroke: a key typed into the input, drawn.
func BenchmarkKeystroke(b *testing.B) {
	m, _ := longModel(b, 10_000)
	_ = m.View()
	for b.Loop() {
		m.Update(tea.KeyPressMsg(tea.Key{Code: 'x', Text: "x"}))
		_ = m.View()
	}
}

// BenchmarkDeepScroll: a PgUp drawn with the view already scrolled most
// of the way up a 10,000-message session.
func BenchmarkDeepScroll(b *testing.B) {
	m, _ := longModel(b, 10_000)
	m.conv.Scroll(1 << 30) // the top: Render stops the offset there
	_ = m.View()
	top := m.conv.offset
	m.conv.offset = top * 9 / 10
	_ = m.View()
	for b.Loop() {
		m.conv.offset = top * 9 / 10
		m.Update(keyMsg("pgup"))
		_ = m.View()
	}
}
