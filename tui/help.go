package tui

import (
	"strings"
)

// binding is one key of the help screen.
type binding struct{ keys, what string }

var helpSections = []struct {
	title string
	keys  []binding
}{
	{"Chat", []binding{
		{"Enter", "send the message (or run a /command)"},
		{"Alt+Enter, Shift+Enter", "new line in the message"},
		{"Ctrl+E", "write the message in $EDITOR"},
		{"Esc", "cancel the running step (what streamed is kept)"},
		{"Ctrl+R", "retry the last message after an error"},
		{"PgUp, PgDn, wheel", "scroll the conversation; Ctrl+End follows again"},
		{"Ctrl+O", "fold or unfold the model's thinking"},
		{"Tab", "tool log (↑/↓ choose, Enter read it all); narrow screens: next tab"},
		{"Ctrl+T", "timeline: step through the versions"},
		{"Ctrl+S", "sessions: resume, start, delete"},
		{"? or F1", "this help"},
		{"Ctrl+C", "quit (asks first while a task runs)"},
	}},
	{"Timeline", []binding{
		{"←, →", "one version back, forward"},
		{"Shift+←, Shift+→", "one user turn back, forward"},
		{"Home, End", "the first version, the branch's last"},
		{"b", "the branches; Enter opens one"},
		{"Enter", "restore this version: the next message starts a new branch"},
		{"Esc", "back to the head"},
	}},
	{"Approval", []binding{
		{"a", "approve this call"},
		{"s", "approve this tool for the rest of the session"},
		{"d", "deny (the model is told)"},
		{"Esc", "cancel the task"},
	}},
	{"Commands", []binding{
		{"/new", "start a new session"},
		{"/sessions", "the sessions"},
		{"/timeline", "the timeline"},
		{"/rollback N", "restore version N"},
		{"/theme NAME", "switch the theme (saved)"},
		{"/model NAME", "use another model"},
		{"/export md|json [PATH]", "write the session to a file"},
		{"/compact", "summarise the older turns now"},
		{"/help, /quit", "this help; quit"},
	}},
}

func (m *Model) helpLines(width int) []string {
	h := m.st.Help
	var out []string
	for _, sec := range helpSections {
		out = append(out, h.Section.Render(sec.title))
		for _, b := range sec.keys {
			out = append(out, "  "+h.Key.Render(fit(b.keys, 24))+" "+h.Desc.Render(clip(b.what, width-27)))
		}
		out = append(out, "")
	}
	return append(out, h.Desc.Render("any key closes this help"))
}

// keyHint is the status line's short help for the current mode.
func (m *Model) keyHint() string {
	if m.confirm != nil {
		return m.st.Status.Error.Render(m.confirm.question)
	}
	var pairs [][2]string
	switch {
	case m.approval != nil:
		pairs = [][2]string{{"a", "approve"}, {"s", "always"}, {"d", "deny"}, {"esc", "cancel"}}
	case m.mode == modeTimeline:
		pairs = [][2]string{{"←→", "step"}, {"enter", "restore"}, {"b", "branches"}, {"esc", "back"}}
	case m.mode == modeSessions:
		pairs = [][2]string{{"enter", "open"}, {"n", "new"}, {"d", "delete"}, {"esc", "back"}}
	case m.running:
		pairs = [][2]string{{"esc", "cancel"}, {"^T", "timeline"}, {"?", "help"}}
	default:
		pairs = [][2]string{{"^T", "timeline"}, {"^S", "sessions"}, {"?", "help"}, {"^C", "quit"}}
	}
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(m.st.Status.Key.Render(p[0]) + " " + m.st.Status.KeyDesc.Render(p[1]))
	}
	return b.String()
}
