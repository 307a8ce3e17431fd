package themes

import "charm.land/lipgloss/v2"

// Styles is every style the UI uses, built from a palette by
// Palette.Styles and grouped by pane. Styles carry colours, attributes,
// borders and the padding of badges and buttons; widths and heights are the
// TUI's to set.
type Styles struct {
	// App is the whole screen's base: foreground Text, and background
	// Background if the palette has one.
	App      lipgloss.Style
	Pane     PaneStyles
	Chat     ChatStyles
	Phase    PhaseStyles
	Plan     PlanStyles
	Tools    ToolStyles
	Notes    NoteStyles
	Input    InputStyles
	Status   StatusStyles
	Dialog   DialogStyles
	Timeline TimelineStyles
	Sessions SessionStyles
	Help     HelpStyles
	Markdown MarkdownStyles
}

// PaneStyles frame the panes. Border and BorderFocused are rounded borders
// in Subtle and Primary; Tab and TabActive label the panes stacked behind
// tabs on narrow terminals.
type PaneStyles struct {
	Border, BorderFocused lipgloss.Style
	Title, TitleFocused   lipgloss.Style
	Tab, TabActive        lipgloss.Style
}

// ChatStyles style the conversation: a label and a body per role, reasoning
// dimmed and italic, and system lines (errors, notices, an interrupted
// reply, the streaming indicator).
type ChatStyles struct {
	UserLabel, User           lipgloss.Style
	AssistantLabel, Assistant lipgloss.Style
	ToolLabel, Tool           lipgloss.Style
	Reasoning, ReasoningLabel lipgloss.Style
	System, Error, Notice     lipgloss.Style
	Interrupted, Streaming    lipgloss.Style
}

// PhaseStyles style the phase pane.
type PhaseStyles struct {
	// Label names the pane's fields; Detail shows the iteration and the like.
	Label, Detail lipgloss.Style
	// Badge returns the bold, padded, reverse-video badge for a phase wire
	// name ("idle", "planning", "executing", "awaiting_approval",
	// "reflecting", "done", "error"): dark text on the phase's colour.
	// Unknown names get a Muted badge.
	Badge func(phase string) lipgloss.Style
}

// PlanStyles style plan steps by status, and the marker before each step.
type PlanStyles struct {
	Pending, Active, Done, Failed, Skipped, Marker lipgloss.Style
}

// ToolStyles style the tool log: a call's name, arguments, status and
// duration, the selected row, and the expanded detail of a call.
type ToolStyles struct {
	Name, Args                                  lipgloss.Style
	Running, OK, Failed, Waiting, Denied        lipgloss.Style
	Duration, Selected, DetailTitle, DetailBody lipgloss.Style
}

// NoteStyles style the notes pane's key/value lines.
type NoteStyles struct {
	Key, Value lipgloss.Style
}

// InputStyles style the prompt input. ReadOnly replaces Text when a past
// version is shown and nothing can be sent.
type InputStyles struct {
	Prompt, Text, Placeholder lipgloss.Style
	Border, BorderFocused     lipgloss.Style
	ReadOnly                  lipgloss.Style
}

// StatusStyles style the status bar's segments. Demo and ReadOnly are
// badges; TokensHigh replaces Tokens near the context limit.
type StatusStyles struct {
	Bar, Session, Title, Version, Branch, Model lipgloss.Style
	Tokens, TokensHigh, Key, KeyDesc            lipgloss.Style
	Error, Demo, ReadOnly                       lipgloss.Style
}

// DialogStyles style modal dialogs (approval prompt, restore/fork). Box is
// a rounded border in Primary with padding 0 1 on the Surface background.
// The text styles carry no background: dialogs are drawn as panes, on the
// screen's background edge to edge, and Surface behind each span of text
// alone would show as ragged blocks. Button is a chip on Surface;
// ButtonActive is reverse video of Primary.
type DialogStyles struct {
	Box, Title, Body, Muted                 lipgloss.Style
	Button, ButtonActive                    lipgloss.Style
	DiffAdd, DiffDel, DiffHunk, DiffContext lipgloss.Style
	Warning                                 lipgloss.Style
}

// TimelineStyles style the timeline mode. Banner is a bold, Warning
// coloured reverse-video bar, so a past version is unmistakable.
type TimelineStyles struct {
	Banner, Change                            lipgloss.Style
	Node, NodeCurrent, NodeHead, NodeSelected lipgloss.Style
	Branch, BranchCurrent                     lipgloss.Style
}

// SessionStyles style the sessions list. Busy marks a session another
// process has open.
type SessionStyles struct {
	Row, Selected, Busy, Filter, Meta, Title lipgloss.Style
}

// HelpStyles style the help screen.
type HelpStyles struct {
	Section, Key, Desc lipgloss.Style
}

// MarkdownStyles style rendered markdown in the conversation.
type MarkdownStyles struct {
	Text, Heading, Bold, Italic, Code, CodeBlock lipgloss.Style
	Quote, Bullet, Link, Rule                    lipgloss.Style
}
