package tui

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"retrace/state"
	"retrace/state/transcript"
	"retrace/themes"
)

// The side panes draw parts of one state. They hold nothing but their
// selection; the root passes the state to show (the head, or a version
// from the timeline).

// phaseLines shows the phase: a badge, the iteration, its timing (how
// long it has lasted, or that nothing runs it), and for an error what
// happened and what to do.
func phaseLines(st *themes.Styles, s state.State, timing string, width int) []string {
	p := st.Phase
	badge := p.Badge(s.Phase.String()).Render(phaseLabel(s.Phase))
	line := badge
	if s.Phase.Active() || s.Iteration > 0 {
		line += " " + p.Detail.Render(fmt.Sprintf("iteration %d", s.Iteration))
	}
	out := []string{line}
	if timing != "" {
		out = append(out, p.Detail.Render(clip(timing, width)))
	}
	if s.Phase == state.Error && s.ErrorMessage != "" {
		for _, l := range wrap(inert(s.ErrorMessage), width) {
			out = append(out, st.Chat.Error.Render(l))
		}
		out = append(out, p.Detail.Render(legend(keymap.Chat.Retry)+" retries the last message"))
	}
	if len(s.Memory.AllowedTools) > 0 {
		// Last, so a small pane cuts this before the error and its remedy.
		out = append(out, p.Detail.Render(clip(inert("runs without asking: "+strings.Join(s.Memory.AllowedTools, ", ")), width)))
	}
	return out
}

func roundDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return "<1s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// planLines shows the goal and each step with its status.
func planLines(st *themes.Styles, s state.State, width int) []string {
	p := st.Plan
	if len(s.Memory.Plan) == 0 {
		if s.Memory.CurrentGoal == "" {
			return []string{p.Pending.Render("no plan yet")}
		}
		return []string{p.Pending.Render("no plan: " + clip(inert(s.Memory.CurrentGoal), width-9))}
	}
	var out []string
	for _, step := range s.Memory.Plan {
		mark, style := "·", p.Pending
		switch step.Status {
		case state.StepActive:
			mark, style = "▸", p.Active
		case state.StepDone:
			mark, style = "✓", p.Done
		case state.StepFailed:
			mark, style = "✗", p.Failed
		case state.StepSkipped:
			mark, style = "–", p.Skipped
		}
		for i, l := range wrap(inert(step.Text), width-2) {
			prefix := "  "
			if i == 0 {
				prefix = p.Marker.Render(mark) + " "
			}
			out = append(out, prefix+style.Render(l))
		}
	}
	return out
}

// toolList is the tool log pane: one line per call, newest last, with a
// selection when focused.
type toolList struct {
	selected int // index into the log; -1 follows the newest
}

func (t *toolList) lines(st *themes.Styles, log []state.ToolCall, width, height int, focused bool) []string {
	if len(log) == 0 {
		return []string{st.Tools.Args.Render("no tool calls yet")}
	}
	sel := t.selected
	if sel < 0 || sel >= len(log) {
		sel = len(log) - 1
	}
	first := max(0, len(log)-height)
	if sel < first {
		first = sel
	} else if sel >= first+height {
		first = sel - height + 1
	}
	var out []string
	for i := first; i < len(log) && len(out) < height; i++ {
		line := toolLine(st, log[i], width)
		if focused && i == sel {
			line = st.Tools.Selected.Render(fit(ansi.Strip(line), width)) // the selection's colours, whole
		}
		out = append(out, line)
	}
	return out
}

// Move changes the selection by n within a log of size len.
func (t *toolList) Move(n, size int) {
	if size == 0 {
		return
	}
	if t.selected < 0 || t.selected >= size {
		t.selected = size - 1
	}
	t.selected = min(max(t.selected+n, 0), size-1)
}

func toolLine(st *themes.Styles, c state.ToolCall, width int) string {
	s := st.Tools
	icon, style, dur := "…", s.Running, ""
	failure := "" // an error, or a command that ran and exited non-zero
	if c.Finished() {
		failure = transcript.Failure(c)
	}
	switch {
	case c.Approval == state.AwaitingDecision && c.Finished():
		// Never answered: the task was cancelled while it asked.
		icon, style = "⊘", s.Denied
	case c.Approval == state.AwaitingDecision:
		icon, style = "?", s.Waiting
	case c.Approval == state.Denied:
		icon, style = "⊘", s.Denied
	case failure != "":
		icon, style = "✗", s.Failed
	case c.Finished():
		icon, style = "✓", s.OK
	}
	switch {
	case c.Finished() && c.Approval == state.AwaitingDecision:
		dur = " " + s.Duration.Render("cancelled")
	case failure != "" && c.Error == "" && c.Approval != state.Denied:
		dur = " " + s.Duration.Render(fmt.Sprintf("%s, %dms", failure, c.DurationMS))
	case c.Finished() && c.Approval != state.Denied:
		dur = " " + s.Duration.Render(fmt.Sprintf("%dms", c.DurationMS))
	}
	// What the call does, as the conversation says it; the detail view
	// (Enter) has its arguments whole.
	room := width - 2 - visibleWidth(dur)
	return style.Render(icon) + " " + s.Name.Render(callLine(transcript.CallSummary(c.Name, c.Arguments), max(room, 1))) + dur
}

// noteLines shows the notes, sorted by key.
func noteLines(st *themes.Styles, notes map[string]string, width int) []string {
	if len(notes) == 0 {
		return []string{st.Notes.Value.Render("no notes")}
	}
	keys := make([]string, 0, len(notes))
	for k := range notes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		out = append(out, st.Notes.Key.Render(clip(inert(k), width/2))+" "+st.Notes.Value.Render(clip(inert(notes[k]), width-visibleWidth(k)-1)))
	}
	return out
}

// briefingLines say what the session was told besides the conversation:
// the instruction files, by their directory's name, and how many
// memories the latest task was given.
func briefingLines(st *themes.Styles, b state.Briefing, width int) []string {
	var out []string
	if len(b.Instructions) > 0 {
		names := make([]string, len(b.Instructions))
		for i, f := range b.Instructions {
			names[i] = filepath.Join(filepath.Base(filepath.Dir(f.Path)), filepath.Base(f.Path))
			if f.Truncated {
				names[i] += " (cut)"
			}
		}
		out = append(out, st.Notes.Key.Render("read")+" "+st.Notes.Value.Render(clip(inert(strings.Join(names, ", ")), width-5)))
	}
	if n := len(b.Memories); n > 0 {
		out = append(out, st.Notes.Key.Render("remembers")+" "+st.Notes.Value.Render(clip(fmt.Sprintf("%d (/memory)", n), width-10)))
	}
	return out
}

// phaseTiming is the phase pane's line under the badge. At the head: how
// long the running phase has lasted (it ticks), or, for a task nothing
// runs, that it waits and what carries it on. In the timeline: how long
// the version's phase had lasted when the version was written, from the
// path's own times; the head's clock says nothing about a past version.
func (m *Model) phaseTiming() string {
	if m.timeline != nil {
		return m.timeline.phaseTiming()
	}
	s, retry := m.head, legend(keymap.Chat.Retry)
	switch {
	case !s.Phase.Active() && !s.Unfinished():
		return ""
	case m.session.Looking:
		return "not carried on: opened to look"
	case m.session.ReadOnly:
		return "run by the writing process"
	case m.running:
		return "for " + roundDuration(m.opts.Now().Sub(m.since))
	case s.Unfinished():
		return "interrupted: " + retry + " carries it on"
	}
	return "paused: " + retry + " carries it on"
}

// phaseTiming says how long the shown version's phase had lasted at it:
// from the version that entered the phase to the shown one.
func (t *timeline) phaseTiming() string {
	if t.pos == 0 {
		return ""
	}
	shown := t.versions[t.pos-1]
	if !shown.Phase.Active() {
		return ""
	}
	first := t.pos - 1
	for first > 0 && t.versions[first-1].Phase == shown.Phase {
		first--
	}
	entered := t.versions[first].Event.At
	if entered.IsZero() || shown.Event.At.IsZero() {
		return ""
	}
	return fmt.Sprintf("for %s at v%d", roundDuration(shown.Event.At.Sub(entered)), shown.Version)
}
