package tui

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"retrace/themes"
)

// commands are the slash commands, for completion.
var commands = []string{"/new", "/sessions", "/timeline", "/rollback", "/theme", "/model", "/export", "/compact", "/help", "/quit"}

// completeHint shows, while a command is typed, which ones match; Tab
// completes when one does.
func (m *Model) completeHint() {
	v := m.input.Value()
	if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, " \n") {
		return
	}
	var match []string
	for _, c := range commands {
		if strings.HasPrefix(c, v) {
			match = append(match, c)
		}
	}
	if len(match) == 0 {
		m.notice = "no such command; /help lists them"
		return
	}
	m.notice = strings.Join(match, "  ")
	if v == "/t" || v == "/th" || v == "/the" || v == "/them" || v == "/theme" {
		m.notice += "  (" + strings.Join(themes.Names(), ", ") + ")"
	}
}

// completeCommand completes the typed command if exactly one matches.
func (m *Model) completeCommand() bool {
	v := m.input.Value()
	if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, " \n") {
		return false
	}
	var match []string
	for _, c := range commands {
		if strings.HasPrefix(c, v) {
			match = append(match, c)
		}
	}
	if len(match) != 1 {
		return false
	}
	m.input.SetValue(match[0] + " ")
	return true
}

// command runs a slash command.
func (m *Model) command(line string) tea.Cmd {
	f := strings.Fields(line)
	name, args := f[0], f[1:]
	switch name {
	case "/new":
		return m.newSession()
	case "/sessions":
		return m.openSessions()
	case "/timeline":
		return m.openTimeline()
	case "/rollback":
		if len(args) != 1 {
			m.notice = "usage: /rollback N (a version number; the timeline shows them)"
			return nil
		}
		v, err := strconv.Atoi(strings.TrimPrefix(args[0], "v"))
		if err != nil || v < 0 || v > m.session.Versions {
			m.notice = fmt.Sprintf("/rollback: %q is not a version (0 to %d)", args[0], m.session.Versions)
			return nil
		}
		return m.restore(v)
	case "/theme":
		return m.setTheme(args)
	case "/model":
		if len(args) != 1 {
			m.notice = "usage: /model NAME"
			return nil
		}
		name := args[0]
		return func() tea.Msg {
			if err := m.d.SetModel(name); err != nil {
				return errMsg{err}
			}
			return modelMsg{name: name}
		}
	case "/export":
		return m.export(args)
	case "/compact":
		if m.running {
			m.notice = "the agent is working; /compact after it is done"
			return nil
		}
		return m.withNotice(m.d.Compact, "older turns summarised")
	case "/help":
		m.mode = modeHelp
		return nil
	case "/quit":
		return m.quit()
	}
	m.notice = fmt.Sprintf("unknown command %s; /help lists them", name)
	return nil
}

func (m *Model) setTheme(args []string) tea.Cmd {
	if len(args) != 1 {
		m.notice = "usage: /theme NAME (" + strings.Join(themes.Names(), ", ") + ")"
		return nil
	}
	p, err := themes.Get(args[0])
	if err != nil {
		m.notice = err.Error()
		return nil
	}
	m.setPalette(p)
	m.conv.cache = map[int]rendered{}
	return m.withNotice(func() error { return m.d.SaveTheme(p.Name) }, "theme "+p.Name+" (saved)")
}

func (m *Model) export(args []string) tea.Cmd {
	if len(args) < 1 || (args[0] != "md" && args[0] != "json") || len(args) > 2 {
		m.notice = "usage: /export md|json [PATH]"
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
