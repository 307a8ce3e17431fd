package tui

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"retrace/state"
	"retrace/themes"

	"retrace/state/transcript"
)

// sizes are the screens every item of the interface is held at.
var sizes = [][2]int{{80, 24}, {120, 40}}

func sizeName(size [2]int) string { return fmt.Sprintf("%dx%d", size[0], size[1]) }

// Ctrl+C with a draft takes the draft back and says so; only a second
// Ctrl+C quits.
func TestCtrlCClearsTheDraftFirst(t *testing.T) {
	for _, size := range sizes {
		t.Run(sizeName(size), func(t *testing.T) {
			m := newModel(t, newFake(answeredSession()...), "dark", size[0], size[1])
			for _, r := range "line one" {
				m.Update(keyMsg(string(r)))
			}
			pressKeys(t, m, "alt+enter")
			for _, r := range "line two" {
				m.Update(keyMsg(string(r)))
			}
			_, cmd := m.Update(keyPress(t, "ctrl+c"))
			if cmd != nil || m.input.Value() != "" {
				t.Fatalf("the first Ctrl+C with a draft: a command %v, draft %q", cmd != nil, m.input.Value())
			}
			if s := statusText(m); !strings.Contains(s, "draft cleared; Ctrl+C again quits") {
				t.Fatalf("the status line does not say the draft was cleared: %q", s)
			}
			checkScreen(t, m.Render(), size[0], size[1])
			_, cmd = m.Update(keyPress(t, "ctrl+c"))
			if cmd == nil {
				t.Fatal("the second Ctrl+C did not quit")
			}
			if _, ok := cmd().(tea.QuitMsg); !ok {
				t.Fatal("the second Ctrl+C did not quit")
			}
		})
	}
}

// numberedLog is n lines of a log, each a little different.
func numberedLog(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "2026-11-22 10:00:%02d INFO request %d served\n", i%60, i)
	}
	return b.String()
}

// A long paste stands in the input as one line saying what it is, and
// the message sent carries it whole, in its place among what was typed.
func TestLongPasteFoldsToOneLine(t *testing.T) {
	for _, size := range sizes {
		t.Run(sizeName(size), func(t *testing.T) {
			f := newFake(answeredSession()...)
			m := newModel(t, f, "dark", size[0], size[1])
			first, second := numberedLog(2500), numberedLog(30)
			for _, r := range "see " {
				m.Update(keyMsg(string(r)))
			}
			m.Update(tea.PasteMsg{Content: first})
			for _, r := range " and " {
				m.Update(keyMsg(string(r)))
			}
			m.Update(tea.PasteMsg{Content: second})
			want1 := fmt.Sprintf("[pasted %s, 2,500 lines]", transcript.ApproxSize(int64(len(first))))
			want2 := fmt.Sprintf("[paste 2: %s, 30 lines]", transcript.ApproxSize(int64(len(second))))
			if got := m.input.Value(); got != "see "+want1+" and "+want2 {
				t.Fatalf("the input holds %d bytes: %.120q", len(got), got)
			}
			if m.input.Lines() != 1 || !strings.Contains(screenOf(m), want1) {
				t.Fatalf("the folded paste is not one line on screen (%d lines):\n%s", m.input.Lines(), screenOf(m))
			}
			checkScreen(t, m.Render(), size[0], size[1])
			pressKeys(t, m, "enter")
			if want := strings.TrimSpace("see " + first + " and " + second); len(f.submitted) != 1 || f.submitted[0] != want {
				t.Fatalf("the message sent is not what was pasted, in place (%d sent)", len(f.submitted))
			}
			if m.input.Value() != "" || len(m.input.folded.markers) != 0 {
				t.Fatal("the draft and its pastes outlive the message sent")
			}
		})
	}
	t.Run("a short paste stays inline", func(t *testing.T) {
		m := newModel(t, newFake(), "dark", 80, 24)
		m.Update(tea.PasteMsg{Content: "two\nlines"})
		if m.input.Value() != "two\nlines" {
			t.Fatalf("a short paste was folded: %.120q", m.input.Value())
		}
	})
}

// A paste over the message cap keeps its first part, and both the marker
// and the notice say how much.
func TestPasteOverTheCapSaysWhatIsKept(t *testing.T) {
	for _, size := range sizes {
		t.Run(sizeName(size), func(t *testing.T) {
			f := newFake(answeredSession()...)
			m := newModel(t, f, "dark", size[0], size[1])
			huge := numberedLog(40213) // about 1.8 MiB
			m.Update(tea.PasteMsg{Content: huge})
			if got := m.input.Value(); !strings.HasPrefix(got, "[pasted the first 256.0 KiB of 1.8 MiB, 5,851 lines]") {
				t.Fatalf("the marker of a paste over the cap: %.120q", got)
			}
			if !strings.Contains(m.notice, "the paste is 1.8 MiB and a message holds at most 256 KiB") {
				t.Fatalf("notice %q", m.notice)
			}
			pressKeys(t, m, "enter")
			if len(f.submitted) != 1 || !strings.HasPrefix(huge, f.submitted[0]) || len(f.submitted[0]) < maxInput-64 {
				t.Fatalf("sent %d messages; the first is not the paste's first %d bytes", len(f.submitted), maxInput)
			}
		})
	}
}

// A message larger than the model's window is refused before it is
// sent, the draft kept.
func TestMessageOverTheWindowIsRefused(t *testing.T) {
	for _, size := range sizes {
		t.Run(sizeName(size), func(t *testing.T) {
			f := newFake(answeredSession()...)
			f.info.Window = 8000
			m := newModel(t, f, "dark", size[0], size[1])
			m.Update(tea.PasteMsg{Content: numberedLog(1000)}) // about 10k tokens
			pressKeys(t, m, "enter")
			if len(f.submitted) != 0 || m.running {
				t.Fatalf("a message over the window was sent: %d", len(f.submitted))
			}
			if !strings.Contains(m.notice, "more than the model's window of 8.0k") || m.input.Value() == "" {
				t.Fatalf("notice %q, draft %.120q", m.notice, m.input.Value())
			}
		})
	}
}

// Terminals paste line breaks as carriage returns: the message keeps
// them as line breaks, and the marker counts them.
func TestPastedCarriageReturnsAreLineBreaks(t *testing.T) {
	f := newFake()
	m := newModel(t, f, "dark", 80, 24)
	log := numberedLog(100)
	m.Update(tea.PasteMsg{Content: strings.ReplaceAll(log, "\n", "\r")})
	if got := m.input.Value(); !strings.HasSuffix(got, ", 100 lines]") {
		t.Fatalf("the marker of a pasted log with CR line breaks: %q", got)
	}
	pressKeys(t, m, "enter")
	if len(f.submitted) != 1 || f.submitted[0] != strings.TrimSpace(log) {
		t.Fatalf("the message sent does not keep the paste's line breaks")
	}
	m.Update(tea.PasteMsg{Content: strings.Repeat("x", 3000)})
	if got := m.input.Value(); got != "[pasted 2.9 KiB, 1 line]" {
		t.Fatalf("the marker of one long line: %q", got)
	}
}

// A long message in the conversation shows its start and how much more
// there is, so scrolling past a pasted log takes a PgUp or two.
func TestLongMessageShowsItsStart(t *testing.T) {
	for _, size := range sizes {
		t.Run(sizeName(size), func(t *testing.T) {
			f := newFake()
			m := newModel(t, f, "dark", size[0], size[1])
			m.Update(tea.PasteMsg{Content: numberedLog(3000)})
			pressKeys(t, m, "enter")
			f2 := newFake(state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: f.submitted[0]}}})
			m.Update(StateMsg{State: f2.head})
			s := screenOf(m)
			if !strings.Contains(s, "… 2,980 lines more of your message, sent whole") {
				t.Fatalf("the long message does not say how much more it holds:\n%s", s)
			}
			pressKeys(t, m, "pgup", "pgup")
			if s := screenOf(m); !strings.Contains(s, "request 0 served") {
				t.Fatalf("two PgUps do not reach the message's start:\n%s", s)
			}
			checkScreen(t, m.Render(), size[0], size[1])
		})
	}
}

// Ctrl+C with a draft takes the draft back first on every screen over
// the input, not only in the chat.
func TestCtrlCClearsTheDraftOnEveryScreen(t *testing.T) {
	for _, size := range sizes {
		for _, open := range [][]string{{"ctrl+t"}, {"ctrl+s"}, {"f1"}, {"tab", "tab", "enter"}} {
			t.Run(sizeName(size)+strings.Join(open, "+"), func(t *testing.T) {
				m := newModel(t, newFake(richSession()...), "dark", size[0], size[1])
				for _, r := range "unsent" {
					m.Update(keyMsg(string(r)))
				}
				if open[0] == "tab" && size[0] >= wideLayout {
					open = open[1:] // one Tab reaches the tool log beside the chat
				}
				pressKeys(t, m, open...)
				_, cmd := m.Update(keyPress(t, "ctrl+c"))
				if cmd != nil || m.input.Value() != "" || !strings.Contains(m.notice, "draft cleared") {
					t.Fatalf("the first Ctrl+C with a draft (mode %v): quits %v, draft %q", m.mode, cmd != nil, m.input.Value())
				}
			})
		}
	}
}

// A paste while the tool log has the focus goes to the input with the
// focus, so Enter sends it.
func TestPasteTakesTheFocus(t *testing.T) {
	for _, size := range sizes {
		t.Run(sizeName(size), func(t *testing.T) {
			f := newFake(richSession()...)
			f.head.Phase, f.info.Phase = state.Done, state.Done
			m := newModel(t, f, "dark", size[0], size[1])
			pressKeys(t, m, "tab")
			if size[0] < wideLayout {
				pressKeys(t, m, "tab")
			}
			m.Update(tea.PasteMsg{Content: "pasted words"})
			pressKeys(t, m, "enter")
			if m.mode == modeToolDetail || len(f.submitted) != 1 || f.submitted[0] != "pasted words" {
				t.Fatalf("Enter after a paste in the tool log: mode %v, submitted %q", m.mode, f.submitted)
			}
		})
	}
}

// A message over the cap (a paste at the cap and a word more) is refused
// before it is sent and the draft kept; one the driver refuses to start
// comes back into the input.
func TestRefusedMessagesKeepTheDraft(t *testing.T) {
	for _, size := range sizes {
		t.Run(sizeName(size), func(t *testing.T) {
			f := newFake(answeredSession()...)
			f.info.Window = 1 << 20
			m := newModel(t, f, "dark", size[0], size[1])
			m.Update(tea.PasteMsg{Content: numberedLog(10000)})
			for _, r := range " please" {
				m.Update(keyMsg(string(r)))
			}
			pressKeys(t, m, "enter")
			if len(f.submitted) != 0 || m.running || !strings.Contains(m.notice, "a message holds at most 256 KiB") ||
				!strings.HasSuffix(m.input.Value(), " please") {
				t.Fatalf("a message over the cap: submitted %d, running %v, notice %q, draft %.60q", len(f.submitted), m.running, m.notice, m.input.Value())
			}
			m.input.Reset()
			f.submitErr = errors.New("set OPENAI_API_KEY")
			typed(t, m, "keep me")
			if m.running || m.input.Value() != "keep me" || !strings.Contains(statusText(m), "set OPENAI_API_KEY") {
				t.Fatalf("a message the driver refused: running %v, draft %q", m.running, m.input.Value())
			}
		})
	}
}

// The command line's prompt passes the same checks as a typed message.
func TestStartPromptOverTheWindowIsNotSent(t *testing.T) {
	for _, size := range sizes {
		t.Run(sizeName(size), func(t *testing.T) {
			f := newFake()
			f.info.Window = 1000
			p, _ := themes.Get("dark")
			m := New(f, Options{Palette: p, Start: Start{Prompt: numberedLog(400)}})
			m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			m.Init()
			if len(f.submitted) != 0 || m.running || !strings.Contains(m.notice, "more than the model's window") || m.input.Message() == "" {
				t.Fatalf("a prompt over the window: submitted %d, running %v, notice %q", len(f.submitted), m.running, m.notice)
			}
		})
	}
}

// The welcome's shell lines come from the command line, which holds a
// path: a directory name with escape sequences is shown, not obeyed.
func TestWelcomeCommandsAreInert(t *testing.T) {
	for _, size := range sizes {
		f := newFake()
		p, _ := themes.Get("dark")
		hostile := "/tmp/x\x1b]52;c;aGVsbG8=\x07y/retrace"
		m := New(f, Options{Palette: p, Start: Start{Commands: []ShellCommand{{Line: hostile + " -r ID", Does: "resume \x1b[2J it"}}}})
		m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		out := m.Render()
		if strings.Contains(out, "\x1b]52") || strings.Contains(out, "\x1b[2J") {
			t.Fatalf("%v: the welcome writes a command line's escape sequences raw", size)
		}
		if !strings.Contains(plain(out), "-r ID") {
			t.Fatalf("%v: the welcome lost the command:\n%s", size, plain(out))
		}
	}
}
