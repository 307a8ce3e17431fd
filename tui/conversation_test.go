package tui

import (
	"fmt"
	"slices"
	"testing"

	"retrace/state"
	"retrace/themes"
)

// Render shows, at every scroll offset and height, exactly the lines a
// whole drawing of the conversation has there: the newest at the bottom,
// the earlier-messages line and the summary mark in their places, the
// offset stopped at the top.
func TestRenderShowsTheLinesAtEveryOffset(t *testing.T) {
	p, err := themes.Get("dark")
	if err != nil {
		t.Fatal(err)
	}
	st := p.Styles()
	c := newConversation(&st)
	const width, from = 60, 40
	var h []state.Message
	for i := range 60 {
		h = append(h, state.Message{Role: state.RoleUser, Content: fmt.Sprintf("question %d\nwith a second line", i)},
			state.Message{Role: state.RoleAssistant, Content: fmt.Sprintf("answer %d", i)})
	}
	c.SetHistory(h, from)
	c.SetSummary(from + 30)
	c.SetError("the server went away")
	c.Stream(false, "streaming")

	// The whole drawing, top to bottom, put together the plain way.
	var whole []string
	whole = append(whole, c.st.Chat.Notice.Render(fit(fmt.Sprintf("… %d earlier messages, %s", from, c.unread), width)), "")
	for i := from; i < from+len(h); i++ {
		whole = append(whole, c.message(i, width)...)
		whole = append(whole, "")
		if i == c.summaryThrough-1 {
			whole = append(whole, c.summaryMark(width), "")
		}
	}
	whole = append(whole, c.liveBlock(width)...)
	whole = append(whole, "")
	whole = append(whole, c.errorBlock(width)...)

	for _, height := range []int{1, 7, 40, len(whole) + 3} {
		for offset := 0; offset <= len(whole)+2; offset++ {
			c.offset = offset
			got := c.Render(width, height)
			top := max(len(whole)-height, 0)
			end := len(whole) - min(offset, top)
			want := block(whole[max(end-height, 0):end], width, height)
			if !slices.Equal(got, want) {
				t.Fatalf("height %d, offset %d: got\n%q\nwant\n%q", height, offset, got, want)
			}
			if offset > top && c.offset != top {
				t.Fatalf("height %d: scrolled to %d of %d lines, the offset stays %d; want it stopped at %d", height, offset, len(whole), c.offset, top)
			}
		}
	}
}
