package themes

import (
	"image/color"

	"charm.land/lipgloss/v2"
)

// Styles builds every style the UI uses from the palette. It is cheap
// enough to call on each theme change, not on each frame.
func (p Palette) Styles() Styles {
	return Styles{
		App:      p.app(),
		Pane:     p.paneStyles(),
		Chat:     p.chatStyles(),
		Phase:    p.phaseStyles(),
		Plan:     p.planStyles(),
		Tools:    p.toolStyles(),
		Notes:    NoteStyles{Key: fg(p.Accent).Bold(true), Value: fg(p.Text)},
		Input:    p.inputStyles(),
		Status:   p.statusStyles(),
		Dialog:   p.dialogStyles(),
		Timeline: p.timelineStyles(),
		Sessions: p.sessionStyles(),
		Help:     HelpStyles{Section: fg(p.Primary).Bold(true), Key: fg(p.Accent).Bold(true), Desc: fg(p.Muted)},
		Markdown: p.markdownStyles(),
	}
}

// fg returns a style with foreground c, or a plain style if c is no colour:
// a nil foreground would still emit the "default colour" code.
func fg(c color.Color) lipgloss.Style {
	s := lipgloss.NewStyle()
	if hasColor(c) {
		s = s.Foreground(c)
	}
	return s
}

// onBackground sets background c on s if c is a colour.
func onBackground(s lipgloss.Style, c color.Color) lipgloss.Style {
	if hasColor(c) {
		return s.Background(c)
	}
	return s
}

// badge is bold, padded reverse video of c: the palette's background (or
// the terminal's) as text on c. In a palette without colour it is plain
// reverse video.
func (p Palette) badge(c color.Color) lipgloss.Style {
	return onBackground(fg(c), p.Background).Reverse(true).Bold(true).Padding(0, 1)
}

// selected marks a selected row: bold Primary on Surface, or reverse video
// when the palette has no Surface colour.
func (p Palette) selected() lipgloss.Style {
	s := fg(p.Primary).Bold(true)
	if hasColor(p.Surface) {
		return s.Background(p.Surface)
	}
	return s.Reverse(true)
}

// border returns a rounded border in colour c.
func border(c color.Color) lipgloss.Style {
	s := lipgloss.NewStyle().Border(lipgloss.RoundedBorder())
	if hasColor(c) {
		s = s.BorderForeground(c)
	}
	return s
}

func (p Palette) app() lipgloss.Style {
	return onBackground(fg(p.Text), p.Background)
}

func (p Palette) paneStyles() PaneStyles {
	return PaneStyles{
		Border:        border(p.Subtle),
		BorderFocused: border(p.Primary),
		Title:         fg(p.Muted).Bold(true),
		TitleFocused:  fg(p.Primary).Bold(true),
		Tab:           fg(p.Muted).Padding(0, 1),
		TabActive:     fg(p.Primary).Bold(true).Underline(true).Padding(0, 1),
	}
}

func (p Palette) chatStyles() ChatStyles {
	reasoning := fg(p.Reasoning).Italic(true)
	if !hasColor(p.Reasoning) {
		// Without colour, faint is what dims reasoning; with colour the
		// Reasoning colour does, and faint would hurt low-vision palettes.
		reasoning = reasoning.Faint(true)
	}
	return ChatStyles{
		UserLabel:      fg(p.User).Bold(true),
		User:           fg(p.Text),
		AssistantLabel: fg(p.Assistant).Bold(true),
		Assistant:      fg(p.Text),
		ToolLabel:      fg(p.Tool).Bold(true),
		Tool:           fg(p.Muted),
		Reasoning:      reasoning,
		ReasoningLabel: reasoning.Bold(true),
		System:         fg(p.Muted).Italic(true),
		Error:          fg(p.Error).Bold(true),
		Notice:         fg(p.Info),
		Interrupted:    fg(p.Warning).Italic(true),
		Streaming:      fg(p.Muted).Italic(true),
	}
}

// phaseColor maps phase wire names (state.Phase.String) to palette roles.
func (p Palette) phaseColor(phase string) (color.Color, bool) {
	switch phase {
	case "idle":
		return p.Idle, true
	case "planning":
		return p.Planning, true
	case "executing":
		return p.Executing, true
	case "awaiting_approval":
		return p.Awaiting, true
	case "reflecting":
		return p.Reflecting, true
	case "done":
		return p.Done, true
	case "error":
		return p.Failed, true
	}
	return nil, false
}

func (p Palette) phaseStyles() PhaseStyles {
	unknown := p.badge(p.Muted)
	return PhaseStyles{
		Label:  fg(p.Text).Bold(true),
		Detail: fg(p.Muted),
		Badge: func(phase string) lipgloss.Style {
			if c, ok := p.phaseColor(phase); ok {
				return p.badge(c)
			}
			return unknown
		},
	}
}

func (p Palette) planStyles() PlanStyles {
	return PlanStyles{
		Pending: fg(p.Muted),
		Active:  fg(p.Primary).Bold(true),
		Done:    fg(p.Success),
		Failed:  fg(p.Error).Bold(true),
		Skipped: fg(p.Subtle).Strikethrough(true),
		Marker:  fg(p.Accent),
	}
}

func (p Palette) toolStyles() ToolStyles {
	return ToolStyles{
		Name:        fg(p.Tool).Bold(true),
		Args:        fg(p.Muted),
		Running:     fg(p.Executing),
		OK:          fg(p.Success),
		Failed:      fg(p.Error).Bold(true),
		Waiting:     fg(p.Awaiting).Bold(true),
		Denied:      fg(p.Error).Italic(true),
		Duration:    fg(p.Subtle),
		Selected:    p.selected(),
		DetailTitle: fg(p.Primary).Bold(true),
		DetailBody:  fg(p.Text),
	}
}

func (p Palette) inputStyles() InputStyles {
	return InputStyles{
		Prompt:        fg(p.Primary).Bold(true),
		Text:          fg(p.Text),
		Placeholder:   fg(p.Subtle).Italic(true),
		Border:        border(p.Subtle),
		BorderFocused: border(p.Primary),
		ReadOnly:      fg(p.Muted).Italic(true),
	}
}

func (p Palette) statusStyles() StatusStyles {
	return StatusStyles{
		Bar:        fg(p.Muted),
		Session:    fg(p.Accent),
		Title:      fg(p.Text).Bold(true),
		Version:    fg(p.Primary),
		Branch:     fg(p.Info),
		Model:      fg(p.Muted),
		Tokens:     fg(p.Muted),
		TokensHigh: fg(p.Warning).Bold(true),
		Key:        fg(p.Accent).Bold(true),
		KeyDesc:    fg(p.Subtle),
		Error:      fg(p.Error).Bold(true),
		Demo:       p.badge(p.Warning),
		ReadOnly:   p.badge(p.Info),
	}
}

func (p Palette) dialogStyles() DialogStyles {
	on := func(s lipgloss.Style) lipgloss.Style { return onBackground(s, p.Surface) }
	box := on(border(p.Primary).Padding(0, 1))
	if hasColor(p.Surface) {
		box = box.BorderBackground(p.Surface)
	}
	// The text styles have no background: Surface behind the text alone
	// would show as a block as long as each line, with the pane's own
	// background around it.
	return DialogStyles{
		Box:          box,
		Title:        fg(p.Primary).Bold(true),
		Body:         fg(p.Text),
		Muted:        fg(p.Muted),
		Button:       on(fg(p.Muted)).Padding(0, 1),
		ButtonActive: on(fg(p.Primary)).Bold(true).Reverse(true).Padding(0, 1),
		DiffAdd:      fg(p.DiffAdd),
		DiffDel:      fg(p.DiffDel),
		DiffHunk:     fg(p.Info).Bold(true),
		DiffContext:  fg(p.Muted),
		Warning:      fg(p.Warning).Bold(true),
	}
}

func (p Palette) timelineStyles() TimelineStyles {
	return TimelineStyles{
		Banner:        p.badge(p.Warning),
		Change:        fg(p.Accent),
		Node:          fg(p.Subtle),
		NodeCurrent:   fg(p.Primary).Bold(true),
		NodeHead:      fg(p.Success).Bold(true),
		NodeSelected:  p.selected(),
		Branch:        fg(p.Muted),
		BranchCurrent: fg(p.Primary).Bold(true),
	}
}

func (p Palette) sessionStyles() SessionStyles {
	return SessionStyles{
		Row:      fg(p.Text),
		Selected: p.selected(),
		Busy:     fg(p.Warning).Italic(true),
		Filter:   fg(p.Accent).Bold(true),
		Meta:     fg(p.Subtle),
		Title:    fg(p.Primary).Bold(true),
	}
}

func (p Palette) markdownStyles() MarkdownStyles {
	return MarkdownStyles{
		Text:      fg(p.Text),
		Heading:   fg(p.Primary).Bold(true),
		Bold:      fg(p.Text).Bold(true),
		Italic:    fg(p.Text).Italic(true),
		Code:      fg(p.Info),
		CodeBlock: fg(p.Info),
		Quote:     fg(p.Muted).Italic(true),
		Bullet:    fg(p.Accent),
		Link:      fg(p.Accent).Underline(true),
		Rule:      fg(p.Subtle),
	}
}
