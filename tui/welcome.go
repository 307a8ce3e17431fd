package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"retrace/state"
)

// Start is what the command line gives the interface's first screen.
type Start struct {
	// Prompt, when set, is sent as the first message at once:
	// `retrace "fix the tests"`.
	Prompt string
	// Commands are the shell commands that come back to a past session,
	// spelled as this retrace was run ("retrace -r ID", or "go run . -r
	// ID" from a source tree): the interface does not know the command
	// line's syntax, and a name that is not on PATH helps nobody.
	Commands []ShellCommand
	// Notice is shown in the status line at start: a warning printed
	// before the interface took the screen is not seen until it quits.
	Notice string
}

// ShellCommand is a command line and what it does.
type ShellCommand struct{ Line, Does string }

// start sends the command line's prompt, unless the session can take no
// message now, and shows its notice.
func (m *Model) start() tea.Cmd {
	var cmd tea.Cmd
	why := ""
	if m.opts.Start.Prompt != "" && !m.running && !m.session.ReadOnly {
		if why = m.unsendable(m.opts.Start.Prompt); why != "" {
			// The person sees the prompt in the input and why it was not
			// sent, and can cut it.
			m.input.SetValue(m.opts.Start.Prompt)
			m.relayout()
		} else {
			cmd = m.send(m.opts.Start.Prompt)
		}
	}
	if m.opts.Start.Notice != "" {
		m.notice = m.opts.Start.Notice // after send, which clears notices
	}
	if why != "" {
		m.notice = why
	}
	return cmd
}

// welcoming reports an empty session at rest: the conversation pane
// shows the welcome instead of an empty box. Sending sets running, so it
// goes with the first message, before the driver reports anything.
func (m *Model) welcoming() bool {
	if m.timeline != nil || m.running || m.conv.live.active || m.conv.errText != "" {
		return false
	}
	if m.head.HistoryFrom > 0 {
		return false
	}
	for _, msg := range m.head.History {
		if msg.Role != state.RoleSystem {
			return false
		}
	}
	return true
}

// welcome is the first screen, width cells wide: what the session talks
// to and works in, the keys that start, and the ways back to a past
// session. Keys are the keymap's; the shell commands are the command
// line's.
func (m *Model) welcome(width int) []string {
	h, k := m.st.Help, keymap.Chat
	out := []string{h.Section.Render("retrace") + h.Desc.Render(" · every step is a checkpoint you can go back to"), ""}

	model := m.st.Notes.Value.Render(inert(m.session.Model))
	if m.session.Demo {
		model = m.st.Status.Demo.Render("demo model") + h.Desc.Render(" scripted, needs no API key")
	}
	label := func(s string) string { return "  " + m.st.Notes.Key.Render(fit(s, 10)) + " " }
	out = append(out, label("model")+model,
		label("workspace")+m.st.Notes.Value.Render(clipStart(inert(m.session.Workspace), width-13)), "")

	if !m.session.ReadOnly {
		out = append(out, h.Section.Render("Start: type what you want done below"))
		out = append(out, m.keyTable([][2]string{
			{legend(k.Send), "send it"}, {legend(k.Newline), "new line"},
			{legend(k.Editor), "write it in $EDITOR"}, {legend(k.Help), "every key"},
			{"/", "commands (" + legend(k.NextPane) + " completes)"}, {legend(k.Quit), "quit"},
		}, width)...)
		out = append(out, "")
	}

	out = append(out, h.Section.Render("Or go back to a past session"))
	rows := [][2]string{{legend(k.Sessions), "the sessions: resume, start, delete"}}
	for _, c := range m.opts.Start.Commands {
		rows = append(rows, [2]string{inert(c.Line), inert(c.Does)}) // the command line holds a path
	}
	return append(out, m.keyTable(rows, 0)...)
}

// keyTable lays out key/description rows: in two columns side by side
// where width allows (0: never), else one under the other, keys aligned.
func (m *Model) keyTable(rows [][2]string, width int) []string {
	h := m.st.Help
	kw, dw := 0, 0
	for _, r := range rows {
		kw, dw = max(kw, ansi.StringWidth(r[0])), max(dw, ansi.StringWidth(r[1]))
	}
	cell := func(r [2]string, descW int) string {
		return h.Key.Render(fit(r[0], kw)) + "  " + h.Desc.Render(fit(r[1], descW))
	}
	var out []string
	if colW := kw + 2 + dw; width > 0 && 2+colW+3+colW <= width {
		for i := 0; i < len(rows); i += 2 {
			line := "  " + cell(rows[i], dw)
			if i+1 < len(rows) {
				line += "   " + cell(rows[i+1], dw)
			}
			out = append(out, line)
		}
		return out
	}
	for _, r := range rows {
		out = append(out, "  "+h.Key.Render(fit(r[0], kw))+"  "+h.Desc.Render(r[1]))
	}
	return out
}

// clipStart shortens text to width cells by cutting its start: a path's
// end is what tells two projects apart.
func clipStart(s string, width int) string {
	s = strings.Join(strings.Fields(s), " ")
	if ansi.StringWidth(s) <= width {
		return s
	}
	if width <= 1 {
		return "…"
	}
	return "…" + ansi.TruncateLeft(s, ansi.StringWidth(s)-width+1, "")
}

// withWorkspace adds the workspace the session works in to a pane's
// title of at most width cells, its start cut if need be: a resumed
// session may work in another directory than retrace was started in,
// and where its tools and restores act must be on the screen.
func (m *Model) withWorkspace(title string, width int) string {
	const sep = " · "
	room := width - ansi.StringWidth(title) - ansi.StringWidth(sep)
	if m.session.Workspace == "" || room < 8 {
		return title
	}
	return title + sep + clipStart(inert(m.session.Workspace), room)
}
