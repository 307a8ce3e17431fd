package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// slash types a /command and sends it, returning what it asks the
// program to do.
func slash(t *testing.T, m *Model, line string) tea.Cmd {
	t.Helper()
	m.input.SetValue(line)
	_, cmd := m.Update(keyPress(t, "enter"))
	return cmd
}

// /copy puts the last answer, or a tool call's result, on the clipboard;
// /mouse off gives the mouse back to the terminal for selecting text.
func TestCopyAndMouse(t *testing.T) {
	for _, size := range sizes {
		t.Run(sizeName(size), func(t *testing.T) {
			m := newModel(t, newFake(richSession()...), "dark", size[0], size[1])
			cmd := slash(t, m, "/copy")
			if cmd == nil {
				t.Fatalf("/copy asked for nothing; notice %q", m.notice)
			}
			want := "main.go calls `greet`, which is **not defined**:\n\n```go\nfmt.Println(greet())\n```"
			if got := fmt.Sprint(cmd()); got != want {
				t.Fatalf("/copy put %q on the clipboard, want the last answer", got)
			}
			if got := statusText(m); !strings.Contains(got, "copied the last answer") {
				t.Fatalf("/copy does not say what it copied: %q", got)
			}
			pressKeys(t, m, "tab")
			if size[0] < wideLayout {
				pressKeys(t, m, "tab")
			}
			pressKeys(t, m, "up")
			m.focus = focusInput
			if cmd := slash(t, m, "/copy tool"); cmd == nil || fmt.Sprint(cmd()) != "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(greet())\n}\n" {
				t.Fatalf("/copy tool did not copy the selected call's result; notice %q", m.notice)
			}
			if cmd := slash(t, m, "/copy everything"); cmd != nil || !strings.Contains(m.notice, "usage: /copy [answer|tool]") {
				t.Fatalf("/copy with a wrong argument: notice %q", m.notice)
			}
			if m.View().MouseMode != tea.MouseModeCellMotion {
				t.Fatal("the wheel is not tracked at the start")
			}
			slash(t, m, "/mouse off")
			if m.View().MouseMode != tea.MouseModeNone || !strings.Contains(statusText(m), "select text with it") {
				t.Fatalf("/mouse off: mode %v, notice %q", m.View().MouseMode, m.notice)
			}
			checkScreen(t, m.Render(), size[0], size[1])
			slash(t, m, "/mouse on")
			if m.View().MouseMode != tea.MouseModeCellMotion {
				t.Fatal("/mouse on did not track the wheel again")
			}
		})
	}
	m := newModel(t, newFake(), "dark", 80, 24)
	if cmd := slash(t, m, "/copy"); cmd != nil || !strings.Contains(m.notice, "nothing to copy") {
		t.Fatalf("/copy in an empty session: notice %q", m.notice)
	}
}
