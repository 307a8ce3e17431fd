package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"

	"retrace/state"
)

// TestEverydayFrames records, as golden frames at 80×24 and 120×40, the
// screens the everyday fixes made: each frame is what a person sees, so a
// change to any of them shows in review as a diff of the screen.
func TestEverydayFrames(t *testing.T) {
	frames := []struct {
		name string
		make func(t *testing.T, size [2]int) *Model
	}{
		{"timeline_scrolled", func(t *testing.T, size [2]int) *Model {
			m := newModel(t, newFake(longSession(40)...), "dark", size[0], size[1])
			pressKeys(t, m, "ctrl+t", "left", "pgup", "pgup")
			return m
		}},
		{"timeline_tools", func(t *testing.T, size [2]int) *Model {
			m := newModel(t, newFake(richSession()...), "dark", size[0], size[1])
			pressKeys(t, m, "ctrl+t", "left", "tab")
			if size[0] < wideLayout {
				pressKeys(t, m, "tab")
			}
			return m
		}},
		{"branches", func(t *testing.T, size [2]int) *Model {
			f := newFake(richSession()...)
			f.tree.Branches[0].Opening = "Why does `go build` fail?"
			f.tree.Branches = append(f.tree.Branches, Branch{ID: 2, Fork: 4, First: 16, Tip: 17, Versions: 2, Opening: "try the vendor directory instead"})
			m := newModel(t, f, "dark", size[0], size[1])
			pressKeys(t, m, "ctrl+t", "b")
			return m
		}},
		{"paste_folded", func(t *testing.T, size [2]int) *Model {
			m := newModel(t, newFake(answeredSession()...), "dark", size[0], size[1])
			for _, r := range "what fails in " {
				m.Update(keyMsg(string(r)))
			}
			m.Update(tea.PasteMsg{Content: numberedLog(40213)})
			return m
		}},
		{"draft_cleared", func(t *testing.T, size [2]int) *Model {
			m := newModel(t, newFake(answeredSession()...), "dark", size[0], size[1])
			for _, r := range "half a thought" {
				m.Update(keyMsg(string(r)))
			}
			m.Update(keyPress(t, "ctrl+c"))
			return m
		}},
		{"completion", func(t *testing.T, size [2]int) *Model {
			m := newModel(t, newFake(richSession()...), "dark", size[0], size[1])
			for _, r := range "/rollback 1" {
				m.Update(keyMsg(string(r)))
			}
			return m
		}},
		{"restore_notice", func(t *testing.T, size [2]int) *Model {
			f := newFake(answeredSession()...)
			m := newModel(t, f, "dark", size[0], size[1])
			m.Update(restoredMsg{version: 2, session: f.info, head: f.head,
				files: Restored{Files: 3, Left: []string{"cmd/server/main.go", "internal/store/bolt.go", "README.md", "go.sum"}}})
			return m
		}},
		{"compacted", func(t *testing.T, size [2]int) *Model {
			events := append(answeredSession(), state.Event{Kind: state.Summarized, Text: "They greeted each other.", Through: 2},
				state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "and now?"}}},
				state.Event{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: "Now this."}}})
			return newModel(t, newFake(events...), "dark", size[0], size[1])
		}},
		{"paused_head", func(t *testing.T, size [2]int) *Model {
			m := newModel(t, newFake(richSession()...), "dark", size[0], size[1])
			if size[0] < wideLayout {
				pressKeys(t, m, "shift+tab")
			}
			return m
		}},
	}
	for _, fr := range frames {
		for _, size := range sizes {
			t.Run(fr.name+"_"+sizeName(size), func(t *testing.T) {
				out := fr.make(t, size).Render()
				checkScreen(t, out, size[0], size[1])
				lines := strings.Split(plain(out), "\n")
				for i, l := range lines {
					lines[i] = strings.TrimRight(l, " ")
				}
				golden.RequireEqual(t, []byte(strings.Join(lines, "\n")+"\n"))
			})
		}
	}
}
