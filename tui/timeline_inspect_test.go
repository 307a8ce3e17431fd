package tui

import (
	tea "charm.land/bubbletea/v2"

	"fmt"
	"strings"
	"testing"
)

// The timeline reads a whole version: PgUp reaches its first message,
// Tab reaches the plan and the tool log at any width, a call opens in
// full, and no input box sits under it pretending to take text.
func TestTimelineInspectsAVersion(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			f := newFake(longSession(40)...) // 20 turns
			m := newModel(t, f, "dark", size[0], size[1])
			pressKeys(t, m, "ctrl+t", "left")
			if s := screenOf(m); strings.Contains(s, "question 0:") {
				t.Fatalf("the first message shows before any scrolling:\n%s", s)
			}
			for range 40 {
				pressKeys(t, m, "pgup")
			}
			s := screenOf(m)
			if !strings.Contains(s, "question 0:") {
				t.Fatalf("PgUp in the timeline never reaches the first message:\n%s", s)
			}
			checkScreen(t, m.Render(), size[0], size[1])
			if strings.Contains(s, "Message retrace") || strings.Contains(s, "input") {
				t.Fatalf("an input box shows under the timeline:\n%s", s)
			}
			pressKeys(t, m, "pgdown")
			if m.mode != modeTimeline {
				t.Fatalf("PgDn left the timeline: mode %v", m.mode)
			}
		})
	}
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("tabs %dx%d", size[0], size[1]), func(t *testing.T) {
			f := newFake(richSession()...)
			m := newModel(t, f, "dark", size[0], size[1])
			pressKeys(t, m, "ctrl+t", "left")
			if size[0] < wideLayout {
				pressKeys(t, m, "tab")
				if s := screenOf(m); !strings.Contains(s, "Read main.go") {
					t.Fatalf("Tab in a narrow timeline does not show the plan:\n%s", s)
				}
				pressKeys(t, m, "tab")
			} else {
				pressKeys(t, m, "tab")
			}
			if m.focus != focusTools {
				t.Fatalf("Tab did not reach the tool log: focus %v", m.focus)
			}
			pressKeys(t, m, "up", "enter")
			if m.mode != modeToolDetail || !strings.Contains(m.detail.title, "read main.go") {
				t.Fatalf("Enter on the first call in the timeline's tool log: mode %v, title %q", m.mode, m.detail.title)
			}
			if len(f.restored) != 0 {
				t.Fatalf("Enter in the tool log restored %v", f.restored)
			}
			checkScreen(t, m.Render(), size[0], size[1])
			pressKeys(t, m, "esc")
			if m.mode != modeTimeline {
				t.Fatalf("closing the call went to mode %v, not the timeline", m.mode)
			}
		})
	}
}

// The phase pane in the timeline speaks of the version shown: how long
// its phase had lasted when it was written, not the head's clock, and
// never as if something ran it.
func TestTimelinePhaseIsTheVersions(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			f := newFake(richSession()...) // one event a second from t0; v3 starts executing
			m := newModel(t, f, "dark", size[0], size[1])
			m.running = true
			if s := plain(strings.Join(phaseLines(&m.st, m.head, m.phaseTiming(), 40), "\n")); !strings.Contains(s, "for 42s") {
				t.Fatalf("the head's running phase does not say how long it has lasted: %q", s)
			}
			pressKeys(t, m, "ctrl+t", "home", "right", "right", "right", "right", "right", "right")
			shown := m.timeline.current()
			got := plain(strings.Join(phaseLines(&m.st, shown, m.phaseTiming(), 40), "\n"))
			if shown.Version != 6 || !strings.Contains(got, "for 4s at v6") || strings.Contains(got, "42s") {
				t.Fatalf("v%d's phase pane: %q, want 'for 4s at v6'", shown.Version, got)
			}
			if size[0] >= wideLayout && !strings.Contains(screenOf(m), "for 4s at v6") {
				t.Fatalf("the screen does not show the version's time:\n%s", screenOf(m))
			}
		})
	}
}

// A head left mid-task with nothing running says so, and which key
// carries it on, instead of a clock that stands still.
func TestPausedHeadSaysNothingRunsIt(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		f := newFake(richSession()...)
		m := newModel(t, f, "dark", size[0], size[1])
		if size[0] < wideLayout {
			pressKeys(t, m, "tab", "tab", "tab")
		}
		if s := screenOf(m); !strings.Contains(s, "paused: Ctrl+R carries it on") || strings.Contains(s, "for 42s") {
			t.Fatalf("%v: a mid-task head with nothing running:\n%s", size, s)
		}
	}
}

// messagesOf runs a command and the batches it returns, and gives back
// the messages they produce (a tick waits its second first).
func messagesOf(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if batch, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range batch {
			out = append(out, messagesOf(c)...)
		}
		return out
	}
	return []tea.Msg{msg}
}

// Every way a task starts also starts the clock the phase pane ticks
// by: Ctrl+R on a session left mid-task carries it on, and its "for Ns"
// must move. Opening one starts nothing.
func TestEveryTaskStartTicks(t *testing.T) {
	ticks := func(msgs []tea.Msg) bool {
		for _, msg := range msgs {
			if _, ok := msg.(tickMsg); ok {
				return true
			}
		}
		return false
	}
	f := newFake(richSession()...)
	m := newModel(t, f, "dark", 120, 40)
	if msgs := messagesOf(m.Init()); m.running || ticks(msgs) {
		t.Fatalf("starting on a mid-task session: running %v, a tick among %v: %v", m.running, msgs, ticks(msgs))
	}
	if msgs := messagesOf(m.retry()); !m.running || !ticks(msgs) {
		t.Fatalf("Ctrl+R on a mid-task session: running %v, a tick among %v: %v", m.running, msgs, ticks(msgs))
	}
	m = newModel(t, newFake(), "dark", 80, 24)
	_, cmd := m.Update(SessionChangedMsg{Session: f.info, Head: f.head})
	if msgs := messagesOf(cmd); m.running || ticks(msgs) {
		t.Fatalf("switching to a mid-task session: running %v, ticks %v", m.running, ticks(msgs))
	}
}
