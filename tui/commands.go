package tui

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"retrace/themes"
)

// command is a slash command: completion offers it, help lists it and
// the input runs it, all from its one entry in commands.
type command struct {
	name string
	args string // what follows the name, as help and usage write it
	desc string
	// choices, if set, are the values its first argument may take, in the
	// session as it is: Tab completes them and the hint lists them.
	choices func(m *Model) []string
	run     func(m *Model, c command, args []string) tea.Cmd
}

// usage is the notice for the command typed with the wrong arguments.
func (c command) usage(more string) string {
	u := "usage: " + c.name + " " + c.args
	if more != "" {
		u += " (" + more + ")"
	}
	return u
}

// commands are the slash commands, in the order help lists them.
var commands = []command{
	{name: "/new", desc: "start a new session",
		run: func(m *Model, _ command, _ []string) tea.Cmd { return m.newSession() }},
	{name: "/sessions", desc: "the sessions: resume, start, delete",
		run: func(m *Model, _ command, _ []string) tea.Cmd { return m.openSessions() }},
	{name: "/timeline", desc: "the timeline: step through the versions",
		run: func(m *Model, _ command, _ []string) tea.Cmd { return m.openTimeline() }},
	{name: "/rollback", args: "N", desc: "restore version N", choices: (*Model).versionNumbers, run: (*Model).rollback},
	{name: "/theme", args: "NAME", desc: "switch the theme (saved)", choices: func(*Model) []string { return themes.Names() }, run: (*Model).setTheme},
	{name: "/model", args: "NAME", desc: "use another model", run: (*Model).setModel},
	{name: "/export", args: "md|json [PATH]", desc: "write the session to a file", choices: func(*Model) []string { return []string{"md", "json"} }, run: (*Model).export},
	{name: "/copy", args: "[answer|tool]", desc: "copy the last answer, or the selected tool call's result, to the clipboard",
		choices: func(*Model) []string { return []string{"answer", "tool"} }, run: (*Model).copyText},
	{name: "/mouse", args: "on|off", desc: "off: the mouse selects text, as in any terminal; on: the wheel scrolls",
		choices: func(*Model) []string { return []string{"on", "off"} }, run: (*Model).setMouse},
	{name: "/remember", args: "[--everywhere] TEXT", desc: "keep TEXT for the next tasks of this project (or of every project), across sessions", run: (*Model).remember},
	{name: "/memory", desc: "what the agent remembers across sessions, and the settings in force",
		run: func(m *Model, _ command, _ []string) tea.Cmd { return m.openMemories() }},
	{name: "/compact", desc: "summarise the older turns now",
		run: func(m *Model, _ command, _ []string) tea.Cmd { return m.compact() }},
	{name: "/help", desc: "this help",
		run: func(m *Model, _ command, _ []string) tea.Cmd { m.openHelp(); return nil }},
	{name: "/quit", desc: "quit (asks first while a task runs)",
		run: func(m *Model, _ command, _ []string) tea.Cmd { return m.quit() }},
}

// commandBindings are the commands as help rows.
func commandBindings() []key.Binding {
	out := make([]key.Binding, len(commands))
	for i, c := range commands {
		out[i] = key.NewBinding(key.WithKeys(c.name), key.WithHelp(strings.TrimSpace(c.name+" "+c.args), c.desc))
	}
	return out
}

// completion is what Tab does to a draft that starts with a slash: the
// draft it makes (the same when nothing completes) and the hint that
// lists what matches. It completes the command's name, then its first
// argument from the command's choices.
func completion(m *Model, draft string) (string, string) {
	name, arg, hasArg := strings.Cut(draft, " ")
	if strings.Contains(draft, "\n") || strings.Contains(arg, " ") {
		return draft, ""
	}
	if !hasArg {
		var names []string
		for _, c := range commands {
			if strings.HasPrefix(c.name, name) {
				names = append(names, c.name)
			}
		}
		switch len(names) {
		case 0:
			return draft, "no such command; /help lists them"
		case 1:
			return names[0] + " ", commandHint(m, names[0], "")
		}
		return commonPrefix(names), strings.Join(names, "  ")
	}
	hint := commandHint(m, name, arg)
	c, ok := commandNamed(name)
	if !ok || c.choices == nil {
		return draft, hint
	}
	var fits []string
	for _, v := range c.choices(m) {
		if strings.HasPrefix(v, arg) {
			fits = append(fits, v)
		}
	}
	switch len(fits) {
	case 0:
		return draft, hint
	case 1:
		return name + " " + fits[0], hint
	}
	return name + " " + commonPrefix(fits), hint
}

// commandHint is what the status line says while a command is typed:
// its arguments and the choices left for the typed one.
func commandHint(m *Model, name, arg string) string {
	c, ok := commandNamed(name)
	if !ok {
		return "no such command; /help lists them"
	}
	hint := strings.TrimSpace(c.name + " " + c.args + " · " + c.desc)
	if c.choices == nil {
		return hint
	}
	var fits []string
	for _, v := range c.choices(m) {
		if strings.HasPrefix(v, arg) {
			fits = append(fits, v)
		}
	}
	switch {
	case len(fits) == 0:
		return hint + " · nothing matches " + arg
	case len(fits) > 12:
		return hint + " · " + strings.Join(fits[:6], ", ") + " … " + fits[len(fits)-1]
	}
	return hint + " · " + strings.Join(fits, ", ")
}

func commandNamed(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// commonPrefix is the longest start all of vs share.
func commonPrefix(vs []string) string {
	p := vs[0]
	for _, v := range vs[1:] {
		for !strings.HasPrefix(v, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}

// versionNumbers are the versions /rollback may restore, newest first.
func (m *Model) versionNumbers() []string {
	out := make([]string, 0, m.session.Versions+1)
	for v := m.session.Versions; v >= 0; v-- {
		out = append(out, strconv.Itoa(v))
	}
	return out
}

// completeHint shows, while a command is typed, what matches.
func (m *Model) completeHint() {
	if draft := m.input.Value(); strings.HasPrefix(draft, "/") {
		_, m.notice = completion(m, draft)
	}
}

// completeCommand is Tab on a draft that starts with a slash: it
// completes what it can and never moves the focus, so a second Tab does
// not jump to the tool log.
func (m *Model) completeCommand() {
	done, hint := completion(m, m.input.Value())
	m.input.SetValue(done)
	m.notice = hint
}

// command runs a slash command.
func (m *Model) command(line string) tea.Cmd {
	f := strings.Fields(line)
	for _, c := range commands {
		if c.name == f[0] {
			return c.run(m, c, f[1:])
		}
	}
	m.notice = fmt.Sprintf("unknown command %s; /help lists them", f[0])
	return nil
}

func (m *Model) rollback(c command, args []string) tea.Cmd {
	if len(args) != 1 {
		m.notice = c.usage("a version number; the timeline shows them")
		return nil
	}
	v, err := strconv.Atoi(strings.TrimPrefix(args[0], "v"))
	if err != nil || v < 0 || v > m.session.Versions {
		m.notice = fmt.Sprintf("%s: %q is not a version (0 to %d)", c.name, args[0], m.session.Versions)
		return nil
	}
	return m.restore(v, RestoreHow{})
}

func (m *Model) setModel(c command, args []string) tea.Cmd {
	if m.session.Demo {
		// The demo model is a script, not an endpoint with models to
		// choose from: saying it switched would be a lie.
		m.notice = "the demo model cannot be switched; start retrace with --model NAME (and its key) to talk to another model"
		return nil
	}
	if len(args) != 1 {
		m.notice = c.usage("")
		return nil
	}
	name := args[0]
	return func() tea.Msg {
		if err := m.d.SetModel(name); err != nil {
			return errMsg{err}
		}
		return modelMsg{name: name}
	}
}

func (m *Model) compact() tea.Cmd {
	if m.running {
		m.notice = "the agent is working; /compact after it is done"
		return nil
	}
	return m.withNotice(m.d.Compact, "older turns summarised")
}

func (m *Model) setTheme(c command, args []string) tea.Cmd {
	if len(args) != 1 {
		m.notice = c.usage(strings.Join(c.choices(m), ", "))
		return nil
	}
	p, err := themes.Get(args[0])
	if err != nil {
		m.notice = err.Error()
		return nil
	}
	m.setPalette(p)
	m.conv.cache = map[int]rendered{}
	return m.withNotice(func() error { return m.opts.SaveTheme(p.Name) }, "theme "+p.Name+" (saved)")
}

func (m *Model) export(c command, args []string) tea.Cmd {
	if len(args) < 1 || (args[0] != "md" && args[0] != "json") || len(args) > 2 {
		m.notice = c.usage("")
		return nil
	}
	format, path := args[0], ""
	if len(args) == 2 {
		path = args[1]
	}
	return func() tea.Msg {
		where, err := m.d.Export(format, path)
		if err != nil {
			return errMsg{err}
		}
		return NoticeMsg{Text: "exported to " + where}
	}
}

// modelMsg says the model changed.
type modelMsg struct{ name string }

func (m *Model) handleModel(msg modelMsg) tea.Cmd {
	m.session.Model = msg.name
	m.notice = "model: " + msg.name
	return nil
}

// withNotice runs a driver call in a command and says done when it is.
func (m *Model) withNotice(fn func() error, done string) tea.Cmd {
	return func() tea.Msg {
		if err := fn(); err != nil {
			return errMsg{err}
		}
		return NoticeMsg{Text: done}
	}
}

// openEditor writes the message in $EDITOR.
func (m *Model) openEditor() tea.Cmd {
	editor := m.opts.Editor
	if editor == "" {
		m.notice = "set $EDITOR to write messages in your editor"
		return nil
	}
	f, err := os.CreateTemp("", "retrace-message-*.md")
	if err != nil {
		m.notice = "editor: " + err.Error()
		return nil
	}
	_, _ = f.WriteString(m.input.Message()) // the pastes whole: the editor is where to change them
	f.Close()
	parts := strings.Fields(editor)
	cmd := exec.Command(parts[0], append(parts[1:], f.Name())...)
	return tea.ExecProcess(cmd, func(err error) tea.Msg {
		defer os.Remove(f.Name())
		b, rerr := os.ReadFile(f.Name())
		if err == nil {
			err = rerr
		}
		return editorMsg{text: string(b), err: err}
	})
}

func (m *Model) handleEditor(msg editorMsg) tea.Cmd {
	if msg.err != nil {
		m.notice = "editor: " + msg.err.Error()
		return nil
	}
	m.input.SetValue(m.input.folded.refold(strings.TrimRight(msg.text, "\n")))
	m.relayout()
	return nil
}
