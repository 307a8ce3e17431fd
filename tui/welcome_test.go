package tui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"

	"retrace/state"
	"retrace/themes"
)

// emptySession is a session just created: no message yet, in a
// workspace, with the shell commands the command line would give.
func emptySession(t testing.TB, start Start, w, h int) (*Model, *fakeDriver) {
	t.Helper()
	return emptySessionIn(t, "dark", start, w, h)
}

func emptySessionIn(t testing.TB, palette string, start Start, w, h int) (*Model, *fakeDriver) {
	t.Helper()
	f := newFake()
	f.info.Title = ""
	f.info.Workspace = "/home/dev/src/greeter"
	p, err := themes.Get(palette)
	if err != nil {
		t.Fatal(err)
	}
	m := New(f, Options{Palette: p, Now: func() time.Time { return t0 }, Start: start})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m, f
}

var shellHints = []ShellCommand{
	{Line: "retrace -c", Does: "continues the latest session"},
	{Line: "retrace -r ID", Does: "resumes one; retrace sessions lists them"},
}

// An empty session greets with the model, the workspace, the keys that
// start and how to come back to a past session, at both sizes the issue
// names.
func TestWelcomeGoldens(t *testing.T) {
	for _, tc := range []struct {
		size    [2]int
		palette string
	}{{[2]int{80, 24}, "dark"}, {[2]int{120, 40}, "dark"}, {[2]int{80, 24}, "light"}, {[2]int{120, 40}, "light"}} {
		size := tc.size
		t.Run(fmt.Sprintf("%dx%d_%s", size[0], size[1], tc.palette), func(t *testing.T) {
			m, _ := emptySessionIn(t, tc.palette, Start{Commands: shellHints}, size[0], size[1])
			out := m.View().Content
			checkScreen(t, out, size[0], size[1])
			golden.RequireEqual(t, []byte(out))
			screen := plain(out)
			for _, want := range []string{"gpt-test", "/home/dev/src/greeter", "retrace -c", "retrace -r ID", "retrace sessions lists them"} {
				if !strings.Contains(screen, want) {
					t.Errorf("the welcome lacks %q:\n%s", want, screen)
				}
			}
			// The keys are the keymap's, whatever it binds them to.
			k := keymap.Chat
			for _, b := range []struct {
				name string
				keys string
			}{{"send", legend(k.Send)}, {"new line", legend(k.Newline)}, {"help", legend(k.Help)}, {"sessions", legend(k.Sessions)}, {"quit", legend(k.Quit)}} {
				if !strings.Contains(screen, b.keys) {
					t.Errorf("the welcome does not name %s (%s):\n%s", b.name, b.keys, screen)
				}
			}
		})
	}
}

// The demo model is named as such, and a long workspace path keeps its
// end, the part that tells projects apart.
func TestWelcomeDemoAndLongPath(t *testing.T) {
	m, _ := emptySession(t, Start{}, 80, 24)
	m.session.Demo = true
	m.session.Workspace = "/home/dev/" + strings.Repeat("deeply/nested/", 8) + "greeter"
	screen := plain(m.View().Content)
	if !strings.Contains(screen, "demo model") || strings.Contains(screen, "gpt-test") {
		t.Errorf("the demo session's welcome:\n%s", screen)
	}
	if !strings.Contains(screen, "nested/greeter") || !strings.Contains(screen, "…") {
		t.Errorf("a long workspace path loses its end:\n%s", screen)
	}
}

// Text from the store is drawn inert.
func TestWelcomeInert(t *testing.T) {
	m, _ := emptySession(t, Start{}, 120, 40)
	m.session.Model = "gpt\x1b]0;pwned\x07"
	m.session.Workspace = "/tmp/\x1b[2J"
	if out := m.View().Content; strings.Contains(out, "\x1b]0;") || strings.Contains(out, "\x1b[2J") {
		t.Fatalf("an escape sequence from the store reached the screen: %q", out)
	}
}

// The welcome goes as soon as the first message is sent, before the
// driver reports anything, and stays gone.
func TestWelcomeVanishesOnFirstMessage(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		m, f := emptySession(t, Start{Commands: shellHints}, size[0], size[1])
		if !m.welcoming() {
			t.Fatalf("%v: an empty session shows no welcome", size)
		}
		press(m, "h", "i")
		if !m.welcoming() {
			t.Fatalf("%v: typing hides the welcome; only sending should", size)
		}
		_, cmd := m.Update(keyMsg("enter"))
		run(m, cmd)
		if !slices.Equal(f.submitted, []string{"hi"}) {
			t.Fatalf("%v: submitted %q", size, f.submitted)
		}
		if m.welcoming() || strings.Contains(plain(m.View().Content), "retrace -c") {
			t.Fatalf("%v: the welcome outlives the first message:\n%s", size, plain(m.View().Content))
		}
		s := state.New(f.info.ID)
		s.Version, s.Phase = 1, state.Planning
		s.History = []state.Message{{Role: state.RoleUser, Content: "hi"}}
		m.Update(StateMsg{State: s})
		m.Update(TaskDoneMsg{Session: f.info, Head: s})
		if m.welcoming() {
			t.Fatalf("%v: the welcome came back after the task", size)
		}
	}
}

// A session with messages never shows it.
func TestNoWelcomeWithMessages(t *testing.T) {
	m := newModel(t, newFake(richSession()...), "dark", 80, 24)
	if m.welcoming() {
		t.Fatal("a session with messages shows the welcome")
	}
}

// A prompt given on the command line is sent at once, as the first
// message, without a key pressed.
func TestStartPromptIsSentAtOnce(t *testing.T) {
	m, f := emptySession(t, Start{Prompt: "fix the tests"}, 80, 24)
	run(m, m.Init())
	if !slices.Equal(f.submitted, []string{"fix the tests"}) {
		t.Fatalf("submitted %q, want the prompt", f.submitted)
	}
	if m.welcoming() {
		t.Fatal("the welcome shows while the prompt is sent")
	}
}

// A notice from the command line (a config setting it ignored) is in the
// status line at start: the warning on stderr is hidden behind the
// interface until it quits.
func TestStartNotice(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		m, _ := emptySession(t, Start{Notice: `config: "modle" ignored`}, size[0], size[1])
		run(m, m.Init())
		if s := plain(m.View().Content); !strings.Contains(s[strings.LastIndex(s, "\n")+1:], `config: "modle" ignored`) {
			t.Errorf("%v: the status line lacks the notice:\n%s", size, s)
		}
	}
}

// A resumed session, past its welcome, still says where it works: the
// conversation's title names the workspace, a long path cut at its
// start, at both sizes the issue names.
func TestResumedSessionNamesItsWorkspace(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		f := newFake(answeredSession()...)
		f.info.Workspace = "/home/dev/" + strings.Repeat("deeply/nested/", 8) + "greeter"
		m := newModel(t, f, "dark", size[0], size[1])
		screen := plain(m.View().Content)
		title := ""
		for _, l := range lines(screen) {
			if strings.Contains(l, "Conversation") {
				title = l
			}
		}
		if !strings.Contains(title, "Conversation · …") || !strings.Contains(title, "nested/greeter ") {
			t.Errorf("at %dx%d the conversation's title is %q", size[0], size[1], title)
		}
	}
}
