package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"retrace/state"
	"retrace/themes"
)

// What the agent remembers across sessions (issue 17): /remember keeps a
// memory, /memory lists them, and a memory is removed there. The list is
// read when the view opens and after each change, never in View.

// memoryView is the /memory screen: every memory, one selected.
type memoryView struct {
	list     []state.Memory
	project  string // the open session's, for saying which hold here
	selected int
	settings []Setting
}

// memoriesMsg brings the memories, read in the background.
type memoriesMsg struct {
	list     []state.Memory
	settings []Setting
	err      error
}

// rememberedMsg says a /remember was kept, or why not.
type rememberedMsg struct {
	memory state.Memory
	known  bool // it was kept before, and was not kept again
	err    error
}

// forgottenMsg says a removal was kept, or why not.
type forgottenMsg struct {
	id  string
	err error
}

// readMemories asks the driver for the memories and the settings.
func (m *Model) readMemories() tea.Cmd {
	d := m.d
	return func() tea.Msg {
		list, err := d.Memories()
		return memoriesMsg{list: list, settings: d.Settings(), err: err}
	}
}

// openMemories shows the memory view; its list comes with the answer.
func (m *Model) openMemories() tea.Cmd {
	m.memories = &memoryView{project: m.project()}
	m.mode = modeMemories
	return m.readMemories()
}

func (m *Model) handleMemories(msg memoriesMsg) tea.Cmd {
	if msg.err != nil {
		m.notice = "could not read the memories: " + msg.err.Error()
		return nil
	}
	if v := m.memories; v != nil {
		v.list, v.settings = msg.list, msg.settings
		v.selected = min(max(v.selected, 0), max(len(v.list)-1, 0))
	}
	return nil
}

// remember is /remember [--everywhere] TEXT.
func (m *Model) remember(c command, args []string) tea.Cmd {
	everywhere := len(args) > 0 && args[0] == "--everywhere"
	if everywhere {
		args = args[1:]
	}
	text := strings.TrimSpace(strings.Join(args, " "))
	if text == "" {
		m.notice = c.usage("what to remember")
		return nil
	}
	d := m.d
	return func() tea.Msg {
		mem, known, err := d.Remember(text, everywhere)
		return rememberedMsg{memory: mem, known: known, err: err}
	}
}

func (m *Model) handleRemembered(msg rememberedMsg) tea.Cmd {
	if msg.err != nil {
		m.notice = "not remembered: " + msg.err.Error()
		return nil
	}
	m.notice = fmt.Sprintf("remembered %s %s; the next task is told it (/memory lists them)", msg.memory.ID, memoryScope(msg.memory, m.project()))
	if msg.known {
		m.notice = fmt.Sprintf("already remembered as %s %s; nothing new was kept (/memory lists them)", msg.memory.ID, memoryScope(msg.memory, m.project()))
	}
	if m.memories != nil {
		return m.readMemories()
	}
	return nil
}

func (m *Model) handleForgotten(msg forgottenMsg) tea.Cmd {
	if msg.err != nil {
		m.notice = "not removed: " + msg.err.Error()
		return nil
	}
	m.notice = "removed memory " + msg.id + "; 'retrace memory log' and 'retrace memory restore' bring it back"
	return m.readMemories()
}

func (m *Model) memoriesKey(k tea.KeyPressMsg) tea.Cmd {
	v, mk := m.memories, keymap.Memories
	switch {
	case key.Matches(k, mk.Close):
		m.memories, m.mode = nil, modeChat
	case key.Matches(k, mk.Up):
		v.selected = max(v.selected-1, 0)
	case key.Matches(k, mk.Down):
		v.selected = min(v.selected+1, max(len(v.list)-1, 0))
	case key.Matches(k, mk.Delete) && len(v.list) > 0:
		mem := v.list[v.selected]
		m.confirm = &confirmation{
			question: fmt.Sprintf("Remove memory %s (%q)? (y/n)", mem.ID, clip(inert(mem.Text), 40)),
			yes: func() tea.Cmd {
				d := m.d
				return func() tea.Msg { return forgottenMsg{id: mem.ID, err: d.Forget(mem.ID)} }
			},
		}
	}
	return nil
}

// project is the open session's project, as its memories are kept for.
func (m *Model) project() string { return m.session.Project }

// memoryScope says where a memory holds, from the open session's view.
func memoryScope(x state.Memory, project string) string {
	switch {
	case x.Everywhere():
		return "for every project"
	case x.Project == project:
		return "for this project"
	}
	return "for " + inert(x.Project)
}

// lines is the view width×height: the memories, the selected one marked,
// then the settings and where each comes from.
func (v *memoryView) lines(st *themes.Styles, width, height int) []string {
	var out []string
	if len(v.list) == 0 {
		out = append(out, st.Notes.Value.Render(fit("No memories yet. The agent keeps one when you ask it to remember something, or type /remember TEXT.", width)))
	}
	for i, x := range v.list {
		head := fmt.Sprintf("%s %s · %s", x.ID, memoryScope(x, v.project), x.UpdatedAt.Local().Format("2006-01-02"))
		style := st.Notes.Key
		if i == v.selected {
			style = st.Tools.Selected
		}
		out = append(out, style.Render(fit(head, width)))
		for _, l := range wrap(inert(x.Text), width-2) {
			out = append(out, "  "+st.Notes.Value.Render(l))
		}
	}
	if len(v.settings) > 0 {
		out = append(out, "", st.Help.Section.Render(fit("Settings, and where each comes from", width)))
		for _, s := range v.settings {
			out = append(out, fit(st.Notes.Key.Render(inert(s.Name))+" "+st.Notes.Value.Render(inert(s.Value))+" "+st.Help.Desc.Render("("+inert(s.From)+")"), width))
		}
	}
	// Keep the selection in view.
	first := 0
	if sel := v.selectedLine(width); sel >= height {
		first = sel - height + 1
	}
	end := min(first+height, len(out))
	return out[first:end]
}

// selectedLine is the line the selected memory's head is on.
func (v *memoryView) selectedLine(width int) int {
	n := 0
	for i, x := range v.list {
		if i == v.selected {
			return n
		}
		n += 1 + len(wrap(inert(x.Text), width-2))
	}
	return 0
}
