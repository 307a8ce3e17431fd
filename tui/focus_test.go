package tui

import (
	"strings"
	"testing"
)

// A letter typed while the tool log has the focus goes to the input,
// and the focus with it, instead of vanishing.
func TestTypingInTheToolLogGoesToTheInput(t *testing.T) {
	for _, size := range sizes {
		t.Run(sizeName(size), func(t *testing.T) {
			m := newModel(t, newFake(richSession()...), "dark", size[0], size[1])
			pressKeys(t, m, "tab")
			if size[0] < wideLayout {
				pressKeys(t, m, "tab")
			}
			if m.focus != focusTools {
				t.Fatalf("Tab did not reach the tool log: focus %v", m.focus)
			}
			pressKeys(t, m, "h", "i")
			if m.focus != focusInput || m.input.Value() != "hi" || m.tab != 0 {
				t.Fatalf("typing in the tool log: focus %v, input %q, tab %d", m.focus, m.input.Value(), m.tab)
			}
			if s := screenOf(m); !strings.Contains(s, "hi") {
				t.Fatalf("the typed text is not on screen:\n%s", s)
			}
		})
	}
}

// Tab on a /command completes it and its argument, and never moves the
// focus: a second Tab with nothing left to complete stays in the input.
func TestTabCompletesCommandsAndArguments(t *testing.T) {
	for _, size := range sizes {
		t.Run(sizeName(size), func(t *testing.T) {
			m := newModel(t, newFake(richSession()...), "dark", size[0], size[1]) // 15 versions
			steps := []struct{ typed, want string }{
				{"/th", "/theme "},
				{"", "/theme "},
				{"tok", "/theme tokyo-night"},
			}
			for _, st := range steps {
				for _, r := range st.typed {
					m.Update(keyMsg(string(r)))
				}
				pressKeys(t, m, "tab")
				if got := m.input.Value(); got != st.want || m.focus != focusInput {
					t.Fatalf("after %q and Tab: %q (want %q), focus %v", st.typed, got, st.want, m.focus)
				}
			}
			m.input.Reset()
			for _, r := range "/export j" {
				m.Update(keyMsg(string(r)))
			}
			pressKeys(t, m, "tab")
			if got := m.input.Value(); got != "/export json" {
				t.Fatalf("/export j and Tab: %q", got)
			}
			m.input.Reset()
			for _, r := range "/rollback 1" {
				m.Update(keyMsg(string(r)))
			}
			if s := statusText(m); !strings.Contains(s, "15, 14, 13") {
				t.Fatalf("the hint for /rollback 1 does not list the versions: %q", s)
			}
			m.Update(keyMsg("2"))
			pressKeys(t, m, "tab")
			if got := m.input.Value(); got != "/rollback 12" || m.focus != focusInput {
				t.Fatalf("/rollback 12 and Tab: %q, focus %v", got, m.focus)
			}
			m.input.Reset()
			m.Update(keyMsg("/"))
			pressKeys(t, m, "tab")
			if got := m.input.Value(); got != "/" || m.focus != focusInput {
				t.Fatalf("/ and Tab (every command matches): %q, focus %v", got, m.focus)
			}
		})
	}
}

// The scrolled conversation's title names End, and End follows; while
// nothing is scrolled, End is the input's.
func TestEndFollowsTheConversation(t *testing.T) {
	for _, size := range sizes {
		t.Run(sizeName(size), func(t *testing.T) {
			m := newModel(t, newFake(longSession(40)...), "dark", size[0], size[1])
			pressKeys(t, m, "pgup")
			if s := screenOf(m); !strings.Contains(s, "scrolled up; End follows") {
				t.Fatalf("the scrolled title does not name End:\n%s", s)
			}
			pressKeys(t, m, "end")
			if m.conv.offset != 0 || strings.Contains(screenOf(m), "scrolled up") {
				t.Fatalf("End did not follow: offset %d", m.conv.offset)
			}
			for _, r := range "abc" {
				m.Update(keyMsg(string(r)))
			}
			pressKeys(t, m, "left", "left", "end", "d")
			if got := m.input.Value(); got != "abcd" {
				t.Fatalf("End in the input did not move the cursor to the end: %q", got)
			}
		})
	}
}

// Home, while the conversation is scrolled up, goes to its first
// message; while nothing is scrolled, Home is the input's. Ctrl+Home
// goes there from anywhere.
func TestHomeGoesToTheFirstMessage(t *testing.T) {
	for _, size := range sizes {
		t.Run(sizeName(size), func(t *testing.T) {
			m := newModel(t, newFake(longSession(40)...), "dark", size[0], size[1])
			for _, r := range "abc" {
				m.Update(keyMsg(string(r)))
			}
			pressKeys(t, m, "home", "d")
			if got := m.input.Value(); got != "dabc" || m.conv.offset != 0 {
				t.Fatalf("Home in the input: %q, offset %d", got, m.conv.offset)
			}
			for _, keys := range [][]string{{"pgup", "home"}, {"ctrl+home"}} {
				m.conv.Bottom()
				pressKeys(t, m, keys...)
				if s := screenOf(m); !strings.Contains(s, "question 0:") || strings.Contains(s, "question 19:") {
					t.Fatalf("%v did not show the first message:\n%s", keys, s)
				}
				pressKeys(t, m, "pgdown")
				if s := screenOf(m); !strings.Contains(s, "scrolled up") {
					t.Fatalf("PgDn after %v left the view at the bottom:\n%s", keys, s)
				}
			}
		})
	}
}
