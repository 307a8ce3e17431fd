package tui

import (
	"strings"
	"testing"

	"retrace/state"
)

// After /compact the conversation marks where it summarised: the model
// sees a summary of the messages above the line, and the person still
// sees them all.
func TestCompactMarksTheConversation(t *testing.T) {
	for _, size := range sizes {
		t.Run(sizeName(size), func(t *testing.T) {
			events := append(answeredSession(), state.Event{Kind: state.Summarized, Text: "They greeted each other.", Through: 2},
				state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "and now?"}}},
				state.Event{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: "Now this."}}})
			m := newModel(t, newFake(events...), "dark", size[0], size[1])
			s := plain(strings.Join(m.conv.Render(min(size[0], 78), size[1]-6), "\n"))
			mark := strings.Index(s, "summarised: the model sees a summary of the 2 messages above")
			if mark < 0 {
				t.Fatalf("no mark where the turns were summarised:\n%s", s)
			}
			if hello, now := strings.Index(s, "Hello!"), strings.Index(s, "and now?"); hello < 0 || hello > mark || now < mark {
				t.Fatalf("the mark is not between the summarised turns and the next:\n%s", s)
			}
			checkScreen(t, m.Render(), size[0], size[1])
		})
	}
}
