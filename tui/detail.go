package tui

import (
	"encoding/json"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"retrace/state"
	"retrace/state/transcript"
	"retrace/themes"
)

// detailView is a scrollable text view: a tool call's full arguments and
// result, or the diff in an approval.
type detailView struct {
	title  string
	body   []string // plain text lines, inert
	offset int
	// wrapped is body wrapped to wrapWidth: a result may be 100,000 lines,
	// wrapped once, not every frame.
	wrapped   []string
	wrapWidth int
	from      mode   // the mode closing the view returns to
	call      string // the tool call shown, if any
}

func (d *detailView) scroll(n int) { d.offset = max(d.offset+n, 0) }

func (d *detailView) setBody(body []string) {
	d.body, d.wrapped, d.wrapWidth = body, nil, 0
}

// lines is the visible part, in the detail style.
func (d *detailView) lines(st *themes.Styles, width, height int) []string {
	out := d.window(width, height)
	for i, l := range out {
		out[i] = st.Tools.DetailBody.Render(l)
	}
	return out
}

// window is the visible part of the body, plain, wrapped to width.
func (d *detailView) window(width, height int) []string {
	if d.wrapped == nil || d.wrapWidth != width {
		d.wrapped, d.wrapWidth = nil, width
		for _, l := range d.body {
			d.wrapped = append(d.wrapped, wrap(l, width)...)
		}
	}
	all := d.wrapped
	d.offset = min(d.offset, max(len(all)-height, 0))
	end := min(d.offset+height, len(all))
	return append([]string(nil), all[d.offset:end]...)
}

func (m *Model) openToolDetail() tea.Cmd {
	log := m.calls
	if len(log) == 0 {
		return nil
	}
	i := m.tools.selected
	if i < 0 || i >= len(log) {
		i = len(log) - 1
	}
	c := log[i]
	// What the call did first, as the conversation says it; then
	// everything it was given and gave back, in full.
	body := []string{transcript.CallOutcome(c), "tool " + inert(c.Name) + " · call id " + inert(c.ID), "", "arguments:"}
	body = append(body, strings.Split(prettyJSON(c.Arguments), "\n")...)
	switch {
	case c.Approval == "requested" && !c.Finished():
		body = append(body, "", "waiting for approval")
	case !c.Finished():
		body = append(body, "", "running (or stopped while running)")
	default:
		body = append(body, "", fmt.Sprintf("finished in %d ms", c.DurationMS))
		if c.Error != "" {
			body = append(body, "", "error:", inert(c.Error))
		}
		if c.Result != "" {
			body = append(body, "", "result:")
			body = append(body, strings.Split(inert(c.Result), "\n")...)
		}
	}
	k := keymap.Detail
	m.detail = detailView{title: fmt.Sprintf("%s · %s %s scroll · %s back", callLine(transcript.CallSummary(c.Name, c.Arguments), 60), // the keys stay in view
		legendPair(k.Up, k.Down), legendPair(k.PageUp, k.PageDown), legend(k.Close)), from: m.mode, call: c.ID}
	m.detail.setBody(body)
	m.mode = modeToolDetail
	if !c.Finished() {
		return nil
	}
	return m.loadCallFiles(m.shown().Version, c.ID)
}

// loadCallFiles finds the file changes a finished call recorded (its
// tool_finished event, the last with its id on the path to version) and
// their diffs, off the UI's goroutine.
func (m *Model) loadCallFiles(version int, id string) tea.Cmd {
	return func() tea.Msg {
		_, path, err := m.d.History(version)
		if err != nil {
			return callFilesMsg{call: id, err: err}
		}
		for i := len(path) - 1; i >= 0; i-- {
			ev := path[i].Event
			if ev.Kind == state.ToolFinished && ev.Tool != nil && ev.Tool.ID == id {
				if len(ev.Files) == 0 {
					return nil
				}
				diffs, err := m.d.FileDiffs(ev.Files)
				return callFilesMsg{call: id, diffs: diffs, err: err}
			}
		}
		return nil
	}
}

// callFilesMsg carries the file changes of the call the detail view shows.
type callFilesMsg struct {
	call  string
	diffs []FileDiff
	err   error
}

// handleCallFiles adds a call's file changes, with their diffs, to the
// detail view, if it still shows that call.
func (m *Model) handleCallFiles(msg callFilesMsg) tea.Cmd {
	if m.mode != modeToolDetail || m.detail.call != msg.call {
		return nil
	}
	body := append([]string(nil), m.detail.body...)
	if msg.err != nil {
		body = append(body, "", "files: "+inert(msg.err.Error()))
	} else {
		body = append(body, "", "files:")
		for _, d := range msg.diffs {
			body = append(body, inert(d.Stat))
			if d.Unified != "" {
				body = append(body, strings.Split(strings.TrimSuffix(inert(d.Unified), "\n"), "\n")...)
			}
		}
	}
	m.detail.setBody(body)
	return nil
}

func (m *Model) detailKey(k tea.KeyPressMsg) tea.Cmd {
	d, page := keymap.Detail, m.lay.mainH-3
	switch {
	case key.Matches(k, d.Up):
		m.detail.scroll(-1)
	case key.Matches(k, d.Down):
		m.detail.scroll(1)
	case key.Matches(k, d.PageUp):
		m.detail.scroll(-page)
	case key.Matches(k, d.PageDown):
		m.detail.scroll(page)
	case key.Matches(k, d.Top):
		m.detail.offset = 0
	case key.Matches(k, d.Close):
		m.mode = m.detail.from
	}
	return nil
}

func prettyJSON(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return inert(s)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return inert(s)
	}
	return inert(string(b))
}

// approvalBox shows a gated call and exactly what it will do.
func (m *Model) approvalBox(width, height int) []string {
	a := m.approval
	d := m.st.Dialog
	inner := width - 2
	tool := inert(a.Tool)
	head := []string{d.Title.Render(clip("Approve "+tool+"?", inner))}
	if a.Summary != "" {
		head = append(head, d.Body.Render(clip(inert(a.Summary), inner)))
	}
	if a.Command != "" {
		for _, l := range wrap("$ "+inert(a.Command), inner) {
			head = append(head, d.Warning.Render(l))
		}
		// Before approving a command, how far it can reach.
		if c := m.session.Commands; c != "" {
			style := d.Muted
			if m.session.CommandsWarn {
				style, c = d.Warning, "⚠ "+c
			}
			for _, l := range wrap(inert(c), inner) {
				head = append(head, style.Render(l))
			}
		}
	}
	if a.Path != "" {
		head = append(head, d.Body.Render(clip("file: "+inert(a.Path), inner)))
	}
	head = append(head, "")
	k := keymap.Approval
	foot := []string{"", d.ButtonActive.Render(" "+legend(k.Approve)+" approve ") + " " +
		d.Button.Render(" "+legend(k.Always)+" approve "+tool+" for this session ") + " " +
		d.Button.Render(" "+legend(k.Deny)+" deny "),
		"  " + d.Muted.Render(legend(k.Project)+" approve "+tool+" in every session of this project · "+legend(k.Cancel)+" cancels the task · "+legendPair(k.Up, k.Down)+" scroll")}
	body := a.Diff
	if body == "" && a.Command == "" {
		body = prettyJSON(a.Args)
	}
	room := max(height-2-len(head)-len(foot), 1)
	var mid []string
	if body != "" {
		if m.detail.body == nil {
			m.detail.setBody(strings.Split(inert(body), "\n"))
		}
		for _, l := range m.detail.window(inner, room) {
			mid = append(mid, diffStyle(d, l))
		}
	}
	content := append(append(head, mid...), block(nil, inner, room-len(mid))...)
	content = append(content, foot...)
	return frame("Approval", content, width, height, m.st.Pane.BorderFocused, m.st.Pane.TitleFocused)
}

// diffStyle colours a unified diff line by its first character.
func diffStyle(d themes.DialogStyles, line string) string {
	switch {
	case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
		return d.Muted.Render(line)
	case strings.HasPrefix(line, "+"):
		return d.DiffAdd.Render(line)
	case strings.HasPrefix(line, "-"):
		return d.DiffDel.Render(line)
	case strings.HasPrefix(line, "@@"):
		return d.DiffHunk.Render(line)
	}
	return d.DiffContext.Render(line)
}
