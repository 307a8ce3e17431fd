package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// helpSection is a block of the help screen: a mode's keys, or the slash
// commands.
type helpSection struct {
	title string
	rows  []key.Binding
}

// helpSections are the help screen's blocks, read from the keymap and the
// command table, never written out by hand.
func helpSections() []helpSection {
	return []helpSection{
		{"Chat", keymap.Chat.bindings()},
		{"Commands (type them in the message)", commandBindings()},
		{"Timeline", keymap.Timeline.bindings()},
		{"Branches", keymap.Tree.bindings()},
		{"Approval", keymap.Approval.bindings()},
		{"Sessions (type to filter)", keymap.Sessions.bindings()},
		{"Tool call in full", keymap.Detail.bindings()},
		{"Memories (/memory)", keymap.Memories.bindings()},
		{"Questions", keymap.Confirm.bindings()},
		{"This help", keymap.Help.bindings()},
	}
}

// helpBody is the whole help screen at width, before scrolling. The key
// column is as wide as the widest keys, up to a fifth of the width (so
// the descriptions keep most of a small terminal): keys wider than that
// get a line of their own, and descriptions wrap under themselves, never
// cut off.
func (m *Model) helpBody(width int) []string {
	h := m.st.Help
	secs := helpSections()
	kw := 0
	for _, s := range secs {
		for _, b := range s.rows {
			kw = max(kw, visibleWidth(b.Help().Key))
		}
	}
	kw = min(kw, max(width/5, 12), 24)
	pad := strings.Repeat(" ", kw+3)
	var out []string
	for i, s := range secs {
		if i > 0 {
			out = append(out, "")
		}
		out = append(out, h.Section.Render(clip(s.title, width)))
		for _, b := range s.rows {
			keys, desc := b.Help().Key, wrap(b.Help().Desc, width-kw-3)
			if visibleWidth(keys) > kw {
				out = append(out, "  "+h.Key.Render(cut(keys, width-2)))
				keys = ""
			}
			out = append(out, "  "+h.Key.Render(fit(keys, kw))+" "+h.Desc.Render(desc[0]))
			for _, l := range desc[1:] {
				out = append(out, pad+h.Desc.Render(l))
			}
		}
	}
	return out
}

// helpBox is the help screen framed in width×height: the part of the body
// scrolled to, and a footer that says how to scroll and how to leave.
func (m *Model) helpBox(width, height int) []string {
	body := m.helpBody(width - 2)
	rows := max(height-3, 1)
	off := min(m.helpOffset, max(len(body)-rows, 0))
	end := min(off+rows, len(body))
	title := "Keys"
	if len(body) > rows {
		title = fmt.Sprintf("Keys · lines %d–%d of %d", off+1, end, len(body))
	}
	h, k := m.st.Help, keymap.Help
	foot := h.Key.Render(k.Close.Help().Key) + h.Desc.Render(" close this help · ") +
		h.Key.Render(legendPair(k.Up, k.Down)+" "+legendPair(k.PageUp, k.PageDown)+" "+legendPair(k.Top, k.Bottom)) +
		h.Desc.Render(" scroll")
	content := append(block(body[off:end], width-2, rows), fit(foot, width-2))
	return frame(title, content, width, height, m.st.Pane.BorderFocused, m.st.Pane.TitleFocused)
}

// helpRows is how many body lines the help shows at once: the frame and
// the footer take three of the main area.
func (m *Model) helpRows() int { return max(m.lay.mainH-3, 1) }

// helpEnd is the offset that shows the last line of the help.
func (m *Model) helpEnd() int { return max(len(m.helpBody(m.width-2))-m.helpRows(), 0) }

// openHelp shows the help from its top; closing it returns to the mode it
// was opened from.
func (m *Model) openHelp() {
	m.helpFrom, m.mode, m.helpOffset = m.mode, modeHelp, 0
}

func (m *Model) helpKey(k tea.KeyPressMsg) tea.Cmd {
	h := keymap.Help
	page := max(m.helpRows()-1, 1)
	switch {
	case key.Matches(k, h.Close):
		m.mode = m.helpFrom
	case key.Matches(k, h.Up):
		m.scrollHelp(-1)
	case key.Matches(k, h.Down):
		m.scrollHelp(1)
	case key.Matches(k, h.PageUp):
		m.scrollHelp(-page)
	case key.Matches(k, h.PageDown):
		m.scrollHelp(page)
	case key.Matches(k, h.Top):
		m.helpOffset = 0
	case key.Matches(k, h.Bottom):
		m.helpOffset = m.helpEnd()
	}
	return nil
}

// scrollHelp moves the help by n lines, within the body; the offset may
// be past the end after a resize, so it is bounded first.
func (m *Model) scrollHelp(n int) {
	end := m.helpEnd()
	m.helpOffset = min(max(min(m.helpOffset, end)+n, 0), end)
}

// keyHint is the status line's short help for the current mode.
func (m *Model) keyHint() string {
	var hints []key.Binding
	switch {
	case m.confirm != nil:
		// The question itself is on the lines above; these are its answers.
		c := keymap.Confirm
		hints = []key.Binding{hint("yes", c.Yes)}
		if m.confirm.keep != nil {
			hints = append(hints, hint("keep the files", c.Keep))
		}
		if m.confirm.look != nil {
			hints = append(hints, hint("read-only", c.Look))
		}
		hints = append(hints, hint("no", c.No))
	case m.approval != nil:
		a := keymap.Approval
		hints = []key.Binding{hint("approve", a.Approve), hint("always", a.Always), hint("project", a.Project), hint("deny", a.Deny), hint("cancel", a.Cancel)}
	case m.mode == modeHelp:
		h := keymap.Help
		hints = []key.Binding{hint("scroll", h.Up, h.Down), hint("close", h.Close)}
	case m.mode == modeTimeline:
		t := keymap.Timeline
		hints = []key.Binding{hint("step", t.Back, t.Forward), hint("restore", t.Restore), hint("branches", t.Branches), hint("back", t.Close)}
	case m.mode == modeTree:
		t := keymap.Tree
		hints = []key.Binding{hint("choose", t.Up, t.Down), hint("open", t.Open), hint("back", t.Close)}
	case m.mode == modeSessions:
		s := keymap.Sessions
		hints = []key.Binding{hint("open", s.Open), hint("new", s.New), hint("delete", s.Delete), hint("back", s.Close)}
	case m.mode == modeToolDetail:
		d := keymap.Detail
		hints = []key.Binding{hint("scroll", d.Up, d.Down), hint("back", d.Close)}
	case m.mode == modeMemories:
		k := keymap.Memories
		hints = []key.Binding{hint("choose", k.Up, k.Down), hint("remove", k.Delete), hint("back", k.Close)}
	case m.running:
		c := keymap.Chat
		hints = []key.Binding{hint("cancel", c.Cancel), hint("timeline", c.Timeline), hint("help", c.Help)}
	default:
		c := keymap.Chat
		hints = []key.Binding{hint("timeline", c.Timeline), hint("sessions", c.Sessions), hint("help", c.Help), hint("quit", c.Quit)}
	}
	bar := help.New()
	bar.ShortSeparator = " "
	bar.Styles = help.Styles{ShortKey: m.st.Status.Key, ShortDesc: m.st.Status.KeyDesc}
	return bar.ShortHelpView(hints)
}
