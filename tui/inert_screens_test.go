package tui

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"retrace/state"
	"retrace/state/transcript/inerttest"
)

// The screens the interface can show are not a list kept by hand: they
// are what its keys and its slash commands reach. These tests walk them
// all, on a session whose every text holds every class of hostile text,
// and check each screen whole. The matrix (TestInertMatrix) says where
// each field is drawn; this says that nothing anywhere is obeyed.

// everyClass is each hostile class's text, one after the other.
func everyClass() string {
	var b strings.Builder
	for _, c := range inerttest.Classes {
		b.WriteString(tag + c.Text + " ")
	}
	return b.String()
}

// poison sets every string field of the struct v points to, but those
// named in keep, to h: what a driver reports may come from anywhere.
func poison(v any, h string, keep ...string) {
	s := reflect.ValueOf(v).Elem()
	for i := range s.NumField() {
		f := s.Field(i)
		if f.Kind() == reflect.String && f.Type() == reflect.TypeFor[string]() && f.CanSet() &&
			!contains(keep, s.Type().Field(i).Name) {
			f.SetString(h)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// hostileDriver is a session whose texts, session infos, memories and
// settings all hold h. Ids stay plain: they name things to the driver.
func hostileDriver(h string) *fakeDriver {
	x := texts{system: h, user: h, reply: h, reasoning: h, step: h, callID: "c1", callName: h, callArgs: h,
		result: h, toolErr: h, noteKey: h, noteValue: h, failed: h, always: true}
	f := newFake(x.events()...)
	poison(&f.info, h, "ID")
	for i := range f.sessions {
		poison(&f.sessions[i], h, "ID")
	}
	f.memories = []state.Memory{{ID: "mem1", Text: h, Project: h, CreatedAt: t0, UpdatedAt: t0}, {ID: "mem2", Text: h, CreatedAt: t0, UpdatedAt: t0}}
	f.settings = []Setting{{}, {}}
	for i := range f.settings {
		poison(&f.settings[i], h)
	}
	return f
}

// allKeys are the keys of every binding in the keymap, each once: the
// keymap is the one place a key is spelled, so a new mode's keys are here.
func allKeys(t *testing.T) []string {
	var out []string
	seen := map[string]bool{}
	for _, bs := range modeBindings(t) {
		for _, b := range bs {
			for _, k := range b.Keys() {
				if !seen[k] {
					seen[k] = true
					out = append(out, k)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// step is one way from a screen to another: a key, or a slash command
// typed and sent.
type step struct {
	name string
	do   func(m *Model)
}

// allSteps are every key of the keymap and every slash command (with its
// first choice of argument, if it has choices).
func allSteps(t *testing.T, m *Model) []step {
	var out []step
	for _, k := range allKeys(t) {
		msg := keyPress(t, k)
		out = append(out, step{k, func(m *Model) { _, cmd := m.Update(msg); run(m, cmd) }})
	}
	for _, c := range commands {
		line := c.name
		if c.choices != nil {
			if ch := c.choices(m); len(ch) > 0 {
				line += " " + ch[0]
			}
		}
		switch c.name {
		case "/remember", "/model":
			line += " something" // what is typed is the user's own
		case "/export":
			line += " " + t.TempDir() + "/x"
		}
		out = append(out, step{line, func(m *Model) { typeLine(m, line) }})
	}
	return out
}

// checkInert fails unless the screen and the window title hold nothing a
// terminal acts on but the interface's own styling.
func checkInert(t *testing.T, where string, m *Model) {
	t.Helper()
	v := m.View()
	screen := sgr.ReplaceAllString(v.Content, "")
	if bad := inerttest.Problems(screen, "\n"); len(bad) != 0 {
		t.Fatalf("%s: the screen carries %v:\n%s", where, bad, screen)
	}
	if bad := inerttest.Problems(v.WindowTitle, ""); len(bad) != 0 {
		t.Fatalf("%s: the window title %q carries %v", where, v.WindowTitle, bad)
	}
}

// where names the kind of screen m shows: its mode, what is open over
// it, and on a narrow screen the tab its panes show.
func where(m *Model) string {
	tab := -1
	if !m.lay.wide && (m.mode == modeChat || m.mode == modeTimeline) && m.approval == nil {
		tab = m.tab
	}
	return fmt.Sprint(m.mode, m.approval != nil, m.timeline != nil, m.confirm != nil, tab)
}

// Every kind of screen the keys and the slash commands reach from the
// chat, wide and narrow, on a session whose every text is hostile, shows
// it inert. Each kind of screen is reached once, by the shortest way,
// and every step is tried from it to find more.
func TestInertEveryScreen(t *testing.T) {
	clock := tick
	tick = func() tea.Cmd { return nil }
	t.Cleanup(func() { tick = clock })
	h := everyClass()
	for _, size := range []struct{ w, h int }{{matrixW, matrixH}, {70, 30}} {
		open := func(path []step) *Model {
			m := newModel(t, hostileDriver(h), "dark", size.w, size.h)
			for _, s := range path {
				s.do(m)
			}
			return m
		}
		steps := allSteps(t, open(nil))
		start := open(nil)
		checkInert(t, "the chat", start)
		seen := map[string]bool{where(start): true}
		for queue := [][]step{nil}; len(queue) > 0; queue = queue[1:] {
			for _, s := range steps {
				path := append(slices.Clip(queue[0]), s)
				m := open(path)
				// Each kind of screen is looked at where it is first
				// reached, and every step from the chat's.
				if w := where(m); !seen[w] || len(path) == 1 {
					checkInert(t, pathName(path), m)
					if !seen[w] {
						seen[w] = true
						queue = append(queue, path)
					}
				}
			}
		}
		t.Logf("%dx%d: %d kinds of screen", size.w, size.h, len(seen))
	}
}

func pathName(path []step) string {
	names := make([]string, len(path))
	for i, s := range path {
		names[i] = s.name
	}
	return strings.Join(names, ", then ")
}

// A pane that forgot to make what it draws inert (here the tool detail,
// given raw text behind the code that makes it inert) still shows it
// inert: the screen leaves the interface through one inert painter.
func TestInertScreenWhenAPaneForgets(t *testing.T) {
	for _, c := range inerttest.Classes {
		t.Run(c.Name, func(t *testing.T) {
			m := openModel(t, newFake(richSession()...))
			m.detail = detailView{title: tag + c.Text, body: []string{tag + c.Text}, from: modeChat}
			m.mode = modeToolDetail
			checkInert(t, "a raw tool detail", m)
			if c.Name == "CSI SGR" {
				return // styling is let through, and stripped here with the interface's own
			}
			screen := sgr.ReplaceAllString(m.View().Content, "")
			if miss := inerttest.Missing(screen, tag, c, 0); len(miss) != 0 {
				t.Fatalf("the raw text is not shown: %q\n%s", miss, screen)
			}
		})
	}
}
