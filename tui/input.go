package tui

import (
	"strings"
	"unicode/utf8"

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"retrace/themes"
)

// maxInputLines is the tallest the input grows before it scrolls.
const maxInputLines = 6

// input is the message box: multi-line, Enter sends (the root decides),
// Alt+Enter or Shift+Enter breaks the line.
type input struct {
	st *themes.Styles
	ta textarea.Model
	// folded are the long pastes the draft holds as markers.
	folded pastes
}

func newInput(st *themes.Styles) input {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Prompt = ""
	ta.CharLimit = 0 // a pasted log or file is allowed
	ta.MaxHeight = 0
	k := keymap.Chat
	ta.Placeholder = "Message retrace · " + legend(k.Send) + " sends · " + legend(k.Newline) + " new line · / commands · " +
		legend(k.Help) + " help"
	ta.KeyMap.InsertNewline = k.Newline
	in := input{st: st, ta: ta}
	in.restyle()
	return in
}

func (in *input) restyle() {
	if in.st == nil {
		return
	}
	s := in.ta.Styles()
	for _, state := range []*textarea.StyleState{&s.Focused, &s.Blurred} {
		state.Base = in.st.Input.Text
		state.Text = in.st.Input.Text
		state.Placeholder = in.st.Input.Placeholder
		state.CursorLine = in.st.Input.Text
		state.EndOfBuffer = in.st.Input.Placeholder
		state.Prompt = in.st.Input.Prompt
	}
	// A blinking cursor would make every frame differ; it is drawn steady.
	s.Cursor.Blink = false
	in.ta.SetStyles(s)
}

func (in *input) Focus() tea.Cmd { return in.ta.Focus() }

func (in *input) Update(msg tea.Msg) tea.Cmd {
	before := in.ta.Value()
	var cmd tea.Cmd
	in.ta, cmd = in.ta.Update(msg)
	if draft, cursor, ok := in.folded.whole(before, in.ta.Value()); ok {
		in.ta.SetValue(draft) // the cursor at the end
		// Back over what follows the cursor: the textarea has no way to
		// set a cursor across wrapped lines but its own keys.
		if back := utf8.RuneCountInString(draft[cursor:]); back <= maxCursorWalk {
			for range back {
				in.ta, _ = in.ta.Update(tea.KeyPressMsg{Code: tea.KeyLeft})
			}
		}
	}
	return cmd
}

// maxCursorWalk bounds the steps taken to put the cursor back after a
// marker edit; past it the cursor stays at the end.
const maxCursorWalk = 4096

// Value is the draft as the input shows it, folded pastes as markers.
func (in *input) Value() string     { return in.ta.Value() }
func (in *input) SetValue(s string) { in.ta.SetValue(s) }
func (in *input) Insert(s string)   { in.ta.InsertString(s) }

// Message is the draft as it is sent: each folded paste in full.
func (in *input) Message() string { return in.folded.expand(in.ta.Value()) }

// Reset empties the draft, and forgets its pastes with it.
func (in *input) Reset() {
	in.ta.Reset()
	in.folded.reset()
}

// Paste puts a paste in the draft at the cursor: inline when short,
// folded to one marker line when long. cutFrom is its size before the
// message cap cut it, or 0.
func (in *input) Paste(text string, cutFrom int) {
	if folds(text) || cutFrom > 0 {
		text = in.folded.fold(text, cutFrom)
	}
	in.ta.InsertString(text)
}

// Lines is how many lines the text needs, within bounds.
func (in *input) Lines() int {
	return min(max(strings.Count(in.ta.Value(), "\n")+1, 1), maxInputLines)
}

// Render draws the box width×height. A title in its top border says
// what the input waits on; readOnly, when set, says why nothing can be
// typed.
func (in *input) Render(width, height int, title string, focused bool, readOnly string) []string {
	border := in.st.Input.Border
	if focused {
		border = in.st.Input.BorderFocused
	}
	if readOnly != "" {
		return frame(title, []string{in.st.Input.ReadOnly.Render(readOnly)}, width, height, border, in.st.Pane.Title)
	}
	in.ta.SetWidth(max(width-2, 1))
	in.ta.SetHeight(max(height-2, 1))
	if title != "" {
		// The title says what the input waits on; the placeholder's
		// "Enter sends" would say otherwise.
		placeholder := in.ta.Placeholder
		in.ta.Placeholder = ""
		defer func() { in.ta.Placeholder = placeholder }()
	}
	return frame(title, strings.Split(in.ta.View(), "\n"), width, height, border, in.st.Pane.Title)
}
