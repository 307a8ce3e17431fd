package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
)

// keyMap is every key the TUI takes, by mode. The handlers match against
// these bindings and the help screen, the status line and the panes'
// legends are drawn from them: a key is spelled here once, so what the
// screen says cannot drift from what works.
type keyMap struct {
	Chat     chatKeys
	Timeline timelineKeys
	Tree     treeKeys
	Approval approvalKeys
	Sessions sessionsKeys
	Detail   detailKeys
	Memories memoriesKeys
	Confirm  confirmKeys
	Help     helpKeys
}

// keymap is the one set of keys; nothing changes it.
var keymap = keyMap{
	Chat: chatKeys{
		Send:       bind("send the message (or run a /command); in the tool log, read the call in full", "enter"),
		Newline:    bind("new line in the message", "alt+enter", "shift+enter", "ctrl+j"),
		Editor:     bind("write the message in $EDITOR", "ctrl+e"),
		Cancel:     bind("cancel the running step (what streamed is kept); leave the tool log", "esc"),
		Retry:      bind("carry on the task here that failed, was interrupted or was restored mid-way", "ctrl+r"),
		ScrollUp:   bind("scroll the conversation up (so does the mouse wheel)", "pgup"),
		ScrollDown: bind("scroll the conversation down", "pgdown"),
		Top:        bind("the conversation's first message (Home: while it is scrolled up)", "home", "ctrl+home"),
		Follow:     bind("follow the conversation again, to its end (End: while it is scrolled up)", "end", "ctrl+end"),
		Reasoning:  bind("fold or unfold the model's thinking", "ctrl+o"),
		NextPane:   bind("complete a /command and its argument; with no /command, the tool log (narrow screens: the next tab)", "tab"),
		PrevPane:   bind("the other pane (narrow screens: the previous tab)", "shift+tab"),
		ToolUp:     bind("in the tool log: the call above", "up"),
		ToolDown:   bind("in the tool log: the call below", "down"),
		Timeline:   bind("timeline: step through the versions", "ctrl+t"),
		Sessions:   bind("sessions: resume, start, delete", "ctrl+s"),
		Help:       bind("this help (? while the message is empty)", "?", "f1"),
		Quit:       bind("clear the message being written; with none, quit from any screen (asks first while a task runs)", "ctrl+c"),
	},
	Timeline: timelineKeys{
		Back:        bind("one version back", "left", "h"),
		Forward:     bind("one version forward", "right", "l"),
		TurnBack:    bind("one user turn back", "shift+left", "H"),
		TurnForward: bind("one user turn forward", "shift+right", "L"),
		First:       bind("version 0, the empty session", "home", "g"),
		Last:        bind("the branch's last version", "end", "G"),
		Branches:    bind("the branches; Enter opens one", "b"),
		ScrollUp:    bind("scroll the conversation up (so does the mouse wheel)", "pgup"),
		ScrollDown:  bind("scroll the conversation down", "pgdown"),
		NextPane:    bind("the tool log and back (narrow screens: the next tab)", "tab"),
		PrevPane:    bind("the other pane (narrow screens: the previous tab)", "shift+tab"),
		ToolUp:      bind("in the tool log: the call above", "up"),
		ToolDown:    bind("in the tool log: the call below", "down"),
		Reasoning:   bind("fold or unfold the model's thinking", "ctrl+o"),
		Files:       bind("the workspace files this version changed, with their diffs", "d"),
		Restore:     bind("restore this version and its files: the next message starts a new branch (in the tool log: read the call)", "enter"),
		Close:       bind("back to the head", "esc", "q", "ctrl+t"),
		Help:        bind("this help", "?", "f1"),
	},
	Tree: treeKeys{
		Up:    bind("the branch above", "up", "k"),
		Down:  bind("the branch below", "down", "j"),
		Open:  bind("open the branch in the timeline", "enter"),
		Close: bind("back to the timeline", "esc", "b", "q"),
	},
	Approval: approvalKeys{
		Approve:  bind("approve this call (keys typed as the question opens, or pasted, answer nothing: they go to your message)", "a", "y"),
		Always:   bind("approve this tool for the rest of the session", "s"),
		Project:  bind("approve this tool in every session of this project (kept in your config)", "p"),
		Deny:     bind("deny (the model is told)", "d", "n"),
		Cancel:   bind("cancel the task", "esc"),
		Up:       bind("scroll what the call will do up a line", "up", "k"),
		Down:     bind("scroll it down a line", "down", "j"),
		PageUp:   bind("scroll it up a page", "pgup"),
		PageDown: bind("scroll it down a page", "pgdown", "space"),
	},
	Sessions: sessionsKeys{
		Up:     bind("the session above", "up"),
		Down:   bind("the session below", "down"),
		Open:   bind("open the session (one in use elsewhere opens read-only)", "enter"),
		New:    bind("start a new session (n while the filter is empty)", "n", "ctrl+n"),
		Delete: bind("delete the session, after a question (d while the filter is empty)", "d", "ctrl+d"),
		Erase:  bind("erase the filter's last letter", "backspace"),
		Close:  bind("back to the chat", "esc"),
	},
	Detail: detailKeys{
		Up:       bind("scroll up a line", "up", "k"),
		Down:     bind("scroll down a line", "down", "j"),
		PageUp:   bind("scroll up a page", "pgup"),
		PageDown: bind("scroll down a page", "pgdown", "space"),
		Top:      bind("the top", "home", "g"),
		Close:    bind("back to the chat", "esc", "q", "enter"),
	},
	Memories: memoriesKeys{
		Up:     bind("the memory above", "up", "k"),
		Down:   bind("the memory below", "down", "j"),
		Delete: bind("remove the memory, after a question", "d"),
		Close:  bind("back to the chat", "esc", "q"),
	},
	Confirm: confirmKeys{
		Yes:  bind("yes", "y", "Y"),
		Keep: bind("(restoring over changed files) keep the files, move only the head", "k"),
		Look: bind("(a session of another workspace) open it read-only, to look", "r"),
		No:   bind("no (so does any other key)", "n", "esc"),
	},
	Help: helpKeys{
		Up:       bind("scroll up a line", "up", "k"),
		Down:     bind("scroll down a line", "down", "j"),
		PageUp:   bind("scroll up a page", "pgup"),
		PageDown: bind("scroll down a page", "pgdown", "space"),
		Top:      bind("the top", "home", "g"),
		Bottom:   bind("the end", "end", "G"),
		Close:    bind("close this help", "esc", "q", "?", "f1"),
	},
}

// chatKeys drive the conversation and the input. Keys not here (letters,
// Alt+Enter) go to the input.
type chatKeys struct {
	Send, Newline, Editor, Cancel, Retry key.Binding
	ScrollUp, ScrollDown, Top, Follow    key.Binding
	Reasoning                            key.Binding
	NextPane, PrevPane, ToolUp, ToolDown key.Binding
	Timeline, Sessions, Help, Quit       key.Binding
}

func (k chatKeys) bindings() []key.Binding {
	return []key.Binding{k.Send, k.Newline, k.Editor, k.Cancel, k.Retry, k.ScrollUp, k.ScrollDown, k.Top, k.Follow,
		k.Reasoning, k.NextPane, k.PrevPane, k.ToolUp, k.ToolDown, k.Timeline, k.Sessions, k.Help, k.Quit}
}

// timelineKeys step through the versions of a branch.
type timelineKeys struct {
	Back, Forward, TurnBack, TurnForward, First, Last key.Binding
	ScrollUp, ScrollDown, NextPane, PrevPane          key.Binding
	ToolUp, ToolDown                                  key.Binding
	Branches, Reasoning, Files, Restore, Close, Help  key.Binding
}

func (k timelineKeys) bindings() []key.Binding {
	return []key.Binding{k.Back, k.Forward, k.TurnBack, k.TurnForward, k.First, k.Last, k.ScrollUp, k.ScrollDown,
		k.NextPane, k.PrevPane, k.ToolUp, k.ToolDown, k.Branches, k.Reasoning, k.Files, k.Restore, k.Close, k.Help}
}

// treeKeys choose a branch.
type treeKeys struct{ Up, Down, Open, Close key.Binding }

func (k treeKeys) bindings() []key.Binding { return []key.Binding{k.Up, k.Down, k.Open, k.Close} }

// approvalKeys answer a gated tool call; they win over every mode.
type approvalKeys struct {
	Approve, Always, Project, Deny, Cancel key.Binding
	Up, Down, PageUp, PageDown             key.Binding
}

func (k approvalKeys) bindings() []key.Binding {
	return []key.Binding{k.Approve, k.Always, k.Project, k.Deny, k.Cancel, k.Up, k.Down, k.PageUp, k.PageDown}
}

// sessionsKeys drive the sessions dialog; typed letters filter it.
type sessionsKeys struct{ Up, Down, Open, New, Delete, Erase, Close key.Binding }

func (k sessionsKeys) bindings() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.Open, k.New, k.Delete, k.Erase, k.Close}
}

// detailKeys scroll a tool call read in full.
type detailKeys struct{ Up, Down, PageUp, PageDown, Top, Close key.Binding }

func (k detailKeys) bindings() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Close}
}

// memoriesKeys move through the memories and remove one.
type memoriesKeys struct{ Up, Down, Delete, Close key.Binding }

func (k memoriesKeys) bindings() []key.Binding { return []key.Binding{k.Up, k.Down, k.Delete, k.Close} }

// confirmKeys answer a yes/no question; anything but yes is no.
type confirmKeys struct{ Yes, Keep, Look, No key.Binding }

func (k confirmKeys) bindings() []key.Binding { return []key.Binding{k.Yes, k.Keep, k.Look, k.No} }

// helpKeys scroll and close the help screen.
type helpKeys struct{ Up, Down, PageUp, PageDown, Top, Bottom, Close key.Binding }

func (k helpKeys) bindings() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom, k.Close}
}

// bind declares keys that do one thing. The first key is the one legends
// and the status line name. The help text is made from the keys, so help
// names every key that works and no other.
func bind(desc string, keys ...string) key.Binding {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = keyName(k)
	}
	return key.NewBinding(key.WithKeys(keys...), key.WithHelp(strings.Join(names, ", "), desc))
}

// keyGlyphs name keys whose tea name is not how people write them.
var keyGlyphs = map[string]string{
	"left": "←", "right": "→", "up": "↑", "down": "↓",
	"enter": "Enter", "esc": "Esc", "tab": "Tab", "space": "Space", "backspace": "Backspace",
	"pgup": "PgUp", "pgdown": "PgDn", "home": "Home", "end": "End", "f1": "F1",
}

// keyName is a key as help writes it: "ctrl+t" is Ctrl+T, "left" is ←.
func keyName(k string) string {
	parts := strings.Split(k, "+")
	last := parts[len(parts)-1]
	if g, ok := keyGlyphs[last]; ok {
		last = g
	} else if len(parts) > 1 {
		last = strings.ToUpper(last)
	}
	for i, mod := range parts[:len(parts)-1] {
		parts[i] = strings.ToUpper(mod[:1]) + mod[1:]
	}
	parts[len(parts)-1] = last
	return strings.Join(parts, "+")
}

// legend is how a pane's legend names a binding: by its first key.
func legend(b key.Binding) string { return keyName(b.Keys()[0]) }

// busyNotice says the agent is working and which key cancels it; when
// says what the person wanted to do.
func busyNotice(when string) string {
	s := "the agent is working; " + legend(keymap.Chat.Cancel) + " cancels it"
	if when != "" {
		s += " " + when
	}
	return s
}

// legendPair names two bindings as a/b, the modifier they share written
// once: ↑/↓, Shift+←/→.
func legendPair(a, b key.Binding) string {
	na, nb := legend(a), legend(b)
	if i := strings.LastIndex(na, "+"); i > 0 && strings.HasPrefix(nb, na[:i+1]) {
		nb = nb[i+1:]
	}
	return na + "/" + nb
}

// shortName is a key as the status line writes it, in few cells: ^T,
// esc, ←.
func shortName(k string) string {
	if rest, ok := strings.CutPrefix(k, "ctrl+"); ok && len(rest) == 1 {
		return "^" + strings.ToUpper(rest)
	}
	switch k {
	case "left", "right", "up", "down":
		return keyGlyphs[k]
	}
	return k
}

// hint is a status-line entry for bs: their first keys, short, and a word
// for what they do.
func hint(word string, bs ...key.Binding) key.Binding {
	var keys []string
	var names strings.Builder
	for _, b := range bs {
		keys = append(keys, b.Keys()...)
		names.WriteString(shortName(b.Keys()[0]))
	}
	return key.NewBinding(key.WithKeys(keys...), key.WithHelp(names.String(), word))
}
