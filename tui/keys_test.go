package tui

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// helpTitles names, for each keymap field, its section of the help.
var helpTitles = map[string]string{
	"Chat": "Chat", "Timeline": "Timeline", "Tree": "Branches", "Approval": "Approval",
	"Sessions": "Sessions (type to filter)", "Detail": "Tool call in full", "Memories": "Memories (/memory)", "Confirm": "Questions", "Help": "This help",
}

// modeBindings are the keymap's bindings by mode, read by reflection: a
// binding added to a keymap struct but left out of its bindings() method
// (and so out of help) fails here.
func modeBindings(t *testing.T) map[string][]key.Binding {
	t.Helper()
	out := map[string][]key.Binding{}
	v := reflect.ValueOf(keymap)
	for i := range v.NumField() {
		mode, f := v.Type().Field(i).Name, v.Field(i)
		km, ok := f.Interface().(interface{ bindings() []key.Binding })
		if !ok {
			t.Fatalf("keymap.%s has no bindings method", mode)
		}
		listed := map[string]bool{}
		for _, b := range km.bindings() {
			listed[ident(b)] = true
		}
		for j := range f.NumField() {
			b, ok := f.Field(j).Interface().(key.Binding)
			if !ok {
				continue
			}
			if !listed[ident(b)] {
				t.Errorf("keymap.%s.%s is left out of its bindings(), so help does not show it", mode, f.Type().Field(j).Name)
			}
			out[mode] = append(out[mode], b)
		}
	}
	return out
}

func ident(b key.Binding) string { return strings.Join(b.Keys(), " ") + "|" + b.Help().Desc }

// keyPress is the key press tea reports as name, failing if tea never
// reports that name: a binding to it could never match.
func keyPress(t *testing.T, name string) tea.KeyPressMsg {
	t.Helper()
	codes := map[string]rune{
		"enter": tea.KeyEnter, "esc": tea.KeyEscape, "tab": tea.KeyTab, "space": tea.KeySpace, "backspace": tea.KeyBackspace,
		"up": tea.KeyUp, "down": tea.KeyDown, "left": tea.KeyLeft, "right": tea.KeyRight,
		"home": tea.KeyHome, "end": tea.KeyEnd, "pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown, "f1": tea.KeyF1,
	}
	mods := map[string]tea.KeyMod{"ctrl": tea.ModCtrl, "alt": tea.ModAlt, "shift": tea.ModShift}
	parts := strings.Split(name, "+")
	var k tea.Key
	for _, p := range parts[:len(parts)-1] {
		k.Mod |= mods[p]
	}
	last := parts[len(parts)-1]
	switch c, ok := codes[last]; {
	case ok:
		k.Code = c
		if c == tea.KeySpace {
			k.Text = " "
		}
	case utf8.RuneCountInString(last) == 1:
		k.Code, _ = utf8.DecodeRuneInString(last)
		if k.Mod == 0 {
			k.Text = last
		}
	}
	if got := k.String(); got != name {
		t.Errorf("%q is no key tea reports (the nearest is %q): a binding to it never matches", name, got)
	}
	return tea.KeyPressMsg(k)
}

// helpSectionText is the help, rendered wide enough not to wrap, by
// section title.
func helpSectionText(m *Model) map[string]string {
	out := map[string]string{}
	for _, block := range strings.Split(plain(strings.Join(m.helpBody(300), "\n")), "\n\n") {
		title, rest, _ := strings.Cut(block, "\n")
		out[title] = rest
	}
	return out
}

// Every key a mode takes is named in that mode's help section, with what
// it does, and is a key tea can report.
func TestHelpShowsEveryBinding(t *testing.T) {
	m := newModel(t, newFake(richSession()...), "dark", 120, 40)
	sections := helpSectionText(m)
	quit := keymap.Chat.Quit.Keys()
	for mode, bs := range modeBindings(t) {
		title, ok := helpTitles[mode]
		if !ok {
			t.Errorf("keymap.%s has no help section in helpTitles", mode)
			continue
		}
		text, ok := sections[title]
		if !ok {
			t.Errorf("help has no section %q for keymap.%s", title, mode)
			continue
		}
		seen := map[string]string{}
		for _, b := range bs {
			h := b.Help()
			if h.Desc == "" || !strings.Contains(text, h.Key) || !strings.Contains(text, h.Desc) {
				t.Errorf("help section %q lacks %q: %q", title, h.Key, h.Desc)
			}
			for _, k := range b.Keys() {
				keyPress(t, k)
				if !strings.Contains(h.Key, keyName(k)) {
					t.Errorf("%s: help %q does not name %q, which it takes", mode, h.Key, k)
				}
				// The first binding to match wins: a key twice in a mode
				// would be dead in the second.
				if other, dup := seen[k]; dup {
					t.Errorf("%s: %q is bound to both %q and %q", mode, k, other, h.Desc)
				}
				seen[k] = h.Desc
				if mode != "Chat" && mode != "Confirm" && slices.Contains(quit, k) {
					t.Errorf("%s: %q quits before the mode sees it", mode, k)
				}
			}
		}
	}
}

// Every slash command is in help and offered by completion.
func TestCommandsInHelpAndCompletion(t *testing.T) {
	help := helpSectionText(newModel(t, newFake(richSession()...), "dark", 120, 40))["Commands (type them in the message)"]
	for _, c := range commands {
		if !strings.Contains(help, strings.TrimSpace(c.name+" "+c.args)) || !strings.Contains(help, c.desc) {
			t.Errorf("help lacks %s %s: %q", c.name, c.args, c.desc)
		}
		m := newModel(t, newFake(richSession()...), "dark", 120, 40)
		for _, r := range c.name[:2] {
			press(m, string(r))
		}
		if !strings.Contains(m.notice, c.name) {
			t.Errorf("typing %q offers %q, not %s", c.name[:2], m.notice, c.name)
		}
		for _, r := range c.name[2:] {
			press(m, string(r))
		}
		press(m, "tab")
		if got := m.input.Value(); got != c.name+" " {
			t.Errorf("Tab after %s gives %q", c.name, got)
		}
	}
}

// flat is a screen's text as one line: borders gone, spacing collapsed,
// and a word the help wrapped at its hyphen joined again.
func flat(screen string) string {
	s := strings.Join(strings.Fields(strings.ReplaceAll(plain(screen), "│", " ")), " ")
	return strings.ReplaceAll(s, "- ", "-")
}

// At 80×24 the help scrolls, a line at a time, through every section and
// every key's description, each screen exactly 80×24; the other keys
// scroll as they say, and only the close keys close it.
func TestHelpReadableAt80x24(t *testing.T) {
	m := newModel(t, newFake(richSession()...), "dark", 80, 24)
	press(m, "?")
	if m.mode != modeHelp {
		t.Fatal("? opens the help")
	}
	var screens []string
	for range 500 {
		s := m.View().Content
		checkScreen(t, s, 80, 24)
		if len(screens) > 0 && s == screens[len(screens)-1] {
			break
		}
		screens = append(screens, s)
		m.Update(keyPress(t, "j"))
	}
	if len(screens) < 2 {
		t.Fatal("the help fits one 80×24 screen or does not scroll")
	}
	var text strings.Builder
	for _, s := range screens {
		text.WriteString(flat(s) + "\n")
	}
	all := text.String()
	var want []string
	for _, s := range helpSections() {
		want = append(want, s.title)
	}
	for _, bs := range modeBindings(t) {
		for _, b := range bs {
			want = append(want, b.Help().Desc)
		}
	}
	for _, c := range commands {
		want = append(want, c.desc)
	}
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("scrolling the 80×24 help never shows %q", w)
		}
	}
	if first := flat(screens[0]); !strings.Contains(first, "Esc, q, ?, F1 close this help") {
		t.Errorf("the help does not say how to close it:\n%s", plain(screens[0]))
	}

	first, last := screens[0], screens[len(screens)-1]
	steps := []struct {
		key  string
		want func() bool
	}{
		{"home", func() bool { return m.View().Content == first }},
		{"end", func() bool { return m.View().Content == last }},
		{"k", func() bool { return m.View().Content == screens[len(screens)-2] }},
		{"down", func() bool { return m.View().Content == last }},
		{"up", func() bool { return m.View().Content == screens[len(screens)-2] }},
		{"g", func() bool { return m.View().Content == first }},
		{"pgdown", func() bool { return m.helpOffset == m.helpRows()-1 }},
		{"space", func() bool { return m.helpOffset == 2*(m.helpRows()-1) }},
		{"pgup", func() bool { return m.helpOffset == m.helpRows()-1 }},
		{"G", func() bool { return m.View().Content == last }},
		{"x", func() bool { return m.mode == modeHelp && m.View().Content == last }},
	}
	for _, s := range steps {
		m.Update(keyPress(t, s.key))
		if !s.want() {
			t.Errorf("%s in the help: offset %d\n%s", s.key, m.helpOffset, plain(m.View().Content))
		}
	}
	for _, k := range keymap.Help.Close.Keys() {
		if m.mode != modeHelp {
			press(m, "?")
		}
		m.Update(keyPress(t, k))
		if m.mode != modeChat {
			t.Errorf("%s does not close the help", k)
		}
	}
}

// Help opened from the timeline closes back to it.
func TestHelpReturnsToTheTimeline(t *testing.T) {
	m := newModel(t, newFake(richSession()...), "dark", 120, 40)
	_, cmd := m.Update(keyMsg("ctrl+t"))
	run(m, cmd)
	m.Update(keyPress(t, "f1"))
	if m.mode != modeHelp {
		t.Fatal("F1 in the timeline opens the help")
	}
	press(m, "esc")
	if m.mode != modeTimeline || m.timeline == nil {
		t.Fatalf("closing the help leaves mode %d, not the timeline", m.mode)
	}
}

// The vi-style and other second keys do what their first key does.
func TestAliases(t *testing.T) {
	f := newFake(richSession()...)
	m := newModel(t, f, "dark", 120, 40)
	_, cmd := m.Update(keyMsg("ctrl+t"))
	run(m, cmd)
	tl := m.timeline
	for _, s := range []struct {
		key string
		pos int
	}{{"h", 14}, {"l", 15}, {"g", 0}, {"G", 15}, {"H", 1}, {"L", 15}} {
		m.Update(keyPress(t, s.key))
		if tl.pos != s.pos {
			t.Errorf("timeline %s: at %d, want %d", s.key, tl.pos, s.pos)
		}
	}
	press(m, "b")
	for _, k := range []string{"j", "k", "q"} {
		m.Update(keyPress(t, k))
	}
	if m.mode != modeTimeline {
		t.Errorf("q in the branches leaves mode %d", m.mode)
	}
	press(m, "q")
	if m.timeline != nil {
		t.Error("q leaves the timeline")
	}

	press(m, "tab", "enter")
	if m.mode != modeToolDetail {
		t.Fatalf("Tab, Enter opens a tool call, mode %d", m.mode)
	}
	for _, s := range []struct {
		key    string
		offset int
	}{{"j", 1}, {"k", 0}, {"space", m.lay.mainH - 3}, {"g", 0}} {
		m.Update(keyPress(t, s.key))
		if m.detail.offset != s.offset {
			t.Errorf("detail %s: offset %d, want %d", s.key, m.detail.offset, s.offset)
		}
	}
	press(m, "q")
	if m.mode != modeChat {
		t.Error("q leaves the tool call")
	}

	for i, k := range []string{"y", "n"} {
		m.Update(ApprovalMsg{Tool: "run_command", Command: "make"})
		later(m, approvalGuard)
		_, cmd := m.Update(keyPress(t, k))
		run(m, cmd)
		if len(f.decided) != i+1 || f.decided[i].Approve != (k != "n") {
			t.Errorf("approval %s: decided %+v", k, f.decided)
		}
	}

	_, cmd = m.Update(keyMsg("ctrl+s"))
	run(m, cmd)
	press(m, "o", "n", "d")
	if m.sessions.filter != "ond" || m.confirm != nil {
		t.Errorf("while filtering, n and d are letters: filter %q", m.sessions.filter)
	}
}

// The help, scrolled anywhere, draws exactly the screen asked for at any
// size.
func TestHelpNeverGarbles(t *testing.T) {
	m := newModel(t, newFake(richSession()...), "dark", 120, 40)
	press(m, "?")
	for w := 20; w <= 200; w += 13 {
		for h := 8; h <= 60; h += 9 {
			m.Update(tea.WindowSizeMsg{Width: w, Height: h})
			for _, k := range []string{"home", "pgdown", "end"} {
				m.Update(keyPress(t, k))
				checkScreen(t, m.View().Content, w, h)
			}
		}
	}
}
