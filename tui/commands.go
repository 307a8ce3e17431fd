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
	// choices, if set, are the values its argument may take: completion
	// shows them once the typed name is more than the slash.
	choices func() []string
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
	{name: "/rollback", args: "N", desc: "restore version N", run: (*Model).rollback},
	{name: "/theme", args: "NAME", desc: "switch the theme (saved)", choices: themes.Names, run: (*Model).setTheme},
	{name: "/model", args: "NAME", desc: "use another model", run: (*Model).setModel},
	{name: "/export", args: "md|json [PATH]", desc: "write the session to a file", run: (*Model).export},
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

// matching are the commands the typed text may be the start of, or
// false when it is not a command name being typed.
func matching(v string) ([]command, bool) {
	if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, " \n") {
		return nil, false
	}
	var match []command
	for _, c := range commands {
		if strings.HasPrefix(c.name, v) {
			match = append(match, c)
		}
	}
	return match, true
}

// completeHint shows, while a command is typed, which ones match; Tab
// completes when one does.
func (m *Model) completeHint() {
	v := m.input.Value()
	match, typing := matching(v)
	if !typing {
		return
	}
	if len(match) == 0 {
		m.notice = "no such command; /help lists them"
		return
	}
	names := make([]string, len(match))
	for i, c := range match {
		names[i] = c.name
	}
	m.notice = strings.Join(names, "  ")
	for _, c := range match {
		if c.choices != nil && len(v) > 1 {
			m.notice += "  (" + strings.Join(c.choices(), ", ") + ")"
		}
	}
}

// completeCommand completes the typed command if exactly one matches.
func (m *Model) completeCommand() bool {
	match, _ := matching(m.input.Value())
	if len(match) != 1 {
		return false
	}
	m.input.SetValue(match[0].name + " ")
	return true
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
		m.notice = c.usage(strings.Join(c.choices(), ", "))
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
	_, _ = f.WriteString(m.input.Value())
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
	m.input.SetValue(strings.TrimRight(msg.text, "\n"))
	m.relayout()
	return nil
}
