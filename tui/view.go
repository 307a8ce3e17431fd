package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"retrace/state/transcript"
)

// View draws the whole screen.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	if m.mouseOff {
		v.MouseMode = tea.MouseModeNone
	}
	v.WindowTitle = inert("retrace " + m.sessionName())
	return v
}

// Render is the screen as text, exactly width×height cells.
func (m *Model) Render() string {
	if m.width <= 0 || m.height <= 0 {
		return "starting retrace…"
	}
	var lines []string
	if m.timeline != nil && m.mode != modeTree {
		lines = append(lines, m.timelineBanner()...)
	}
	notice := m.noticeRows()
	if len(notice) != m.lay.noticeH {
		m.relayout() // a message came or went: the panes give or take its rows
	}
	lines = append(lines, m.mainLines()...)
	if m.lay.inputH > 0 {
		lines = append(lines, m.input.Render(m.width, m.lay.inputH, m.inputTitle(), m.focus == focusInput && m.mode == modeChat && m.approval == nil,
			m.readOnlyWhy(true))...)
	}
	lines = append(lines, notice...)
	lines = append(lines, m.statusLine())
	return paintInert(strings.Join(block(lines, m.width, m.height), "\n"), m.st.App)
}

// paintInert is where the screen leaves the interface: every pane's text
// goes through it, so one that forgot to make outside text inert still
// shows it, never obeys it. Only the styling the panes wrote (SGR) stays.
func paintInert(frame string, app lipgloss.Style) string {
	return paint(transcript.InertStyled(frame), app)
}

// mainLines is the area above the input: the panes, or what a mode puts
// in their place.
func (m *Model) mainLines() []string {
	h, w := m.lay.mainH, m.width
	switch {
	case m.mode == modeHelp:
		return m.helpBox(w, h)
	case m.mode == modeSessions && m.sessions != nil:
		return frame("Sessions", m.sessions.lines(&m.st, w-2, h-2), w, h, m.st.Pane.BorderFocused, m.st.Pane.TitleFocused)
	case m.mode == modeTree && m.timeline != nil:
		return frame("Version tree", m.timeline.treeLines(&m.st, w-2, h-2), w, h, m.st.Pane.BorderFocused, m.st.Pane.TitleFocused)
	case m.mode == modeToolDetail:
		return frame(m.detail.title, m.detail.lines(&m.st, w-2, h-2), w, h, m.st.Pane.BorderFocused, m.st.Pane.TitleFocused)
	case m.mode == modeMemories && m.memories != nil:
		return frame(fmt.Sprintf("Memories (%d)", len(m.memories.list)), m.memories.lines(&m.st, w-2, h-2), w, h, m.st.Pane.BorderFocused, m.st.Pane.TitleFocused)
	case m.approval != nil && !m.lay.wide:
		return m.approvalBox(w, h)
	}
	if !m.lay.wide {
		return m.narrowLines(w, h)
	}
	left := m.conversationBox(m.lay.convW, h)
	if m.approval != nil {
		left = m.approvalBox(m.lay.convW, h)
	}
	return joinColumns(left, m.sideColumn(m.lay.sideW))
}

func (m *Model) conversationBox(w, h int) []string {
	title := "Conversation"
	if m.timeline != nil {
		title = fmt.Sprintf("Conversation at v%d", m.timeline.current().Version)
	} else if m.conv.offset > 0 {
		title = "Conversation (scrolled up; " + legend(keymap.Chat.Follow) + " follows)"
	}
	body := m.conv.Render(w-2, h-2)
	if m.welcoming() {
		body = m.welcome(w - 2) // which names the workspace itself
	} else {
		title = m.withWorkspace(title, w-4)
	}
	return frame(title, body, w, h, m.st.Pane.Border, m.st.Pane.Title)
}

func (m *Model) sideColumn(w int) []string {
	s := m.shown()
	p := m.st.Pane
	toolBorder, toolTitle := p.Border, p.Title
	if m.focus == focusTools {
		toolBorder, toolTitle = p.BorderFocused, p.TitleFocused
	}
	var out []string
	out = append(out, frame("Phase", phaseLines(&m.st, s, m.phaseTiming(), w-2), w, m.lay.phaseH, p.Border, p.Title)...)
	out = append(out, frame("Plan", planLines(&m.st, s, w-2), w, m.lay.planH, p.Border, p.Title)...)
	out = append(out, frame(fmt.Sprintf("Tools (%d)", m.callsLeft+len(m.calls)),
		m.tools.lines(&m.st, m.calls, w-2, m.lay.toolsH-2, m.focus == focusTools), w, m.lay.toolsH, toolBorder, toolTitle)...)
	out = append(out, frame("Notes", append(noteLines(&m.st, s.Memory.Notes, w-2), briefingLines(&m.st, s.Briefing, w-2)...), w, m.lay.notesH, p.Border, p.Title)...)
	return out
}

// narrowLines shows one pane at a time behind tabs, with the phase in
// the tab bar.
func (m *Model) narrowLines(w, h int) []string {
	s := m.shown()
	var bar strings.Builder
	for i, t := range tabs {
		style := m.st.Pane.Tab
		if i == m.tab {
			style = m.st.Pane.TabActive
		}
		bar.WriteString(style.Render(" " + t + " "))
	}
	bar.WriteString(" " + m.st.Phase.Badge(s.Phase.String()).Render(phaseLabel(s.Phase)))
	out := []string{fit(bar.String(), w)}
	ph := h - 1
	switch m.tab {
	case 1:
		out = append(out, frame("Plan", planLines(&m.st, s, w-2), w, ph, m.st.Pane.Border, m.st.Pane.Title)...)
	case 2:
		out = append(out, frame(fmt.Sprintf("Tools (%d)", m.callsLeft+len(m.calls)),
			m.tools.lines(&m.st, m.calls, w-2, ph-2, m.focus == focusTools), w, ph, m.st.Pane.BorderFocused, m.st.Pane.TitleFocused)...)
	case 3:
		lines := append(phaseLines(&m.st, s, m.phaseTiming(), w-2), "")
		lines = append(lines, noteLines(&m.st, s.Memory.Notes, w-2)...)
		lines = append(lines, briefingLines(&m.st, s.Briefing, w-2)...)
		out = append(out, frame("Phase and notes", lines, w, ph, m.st.Pane.Border, m.st.Pane.Title)...)
	default:
		out = append(out, m.conversationBox(w, ph)...)
	}
	return out
}

// statusLine: session, version and branch, model, tokens, and the keys
// that matter now (or the last notice). Notices and errors carry text
// from the driver, the model and the server: they are made inert here,
// where every one of them is drawn. When the line is too narrow the
// least needed parts go first: the title, then the model.
func (m *Model) statusLine() string {
	s := m.st.Status
	ver := fmt.Sprintf("v%d/%d", m.head.Version, m.session.Versions)
	if m.timeline != nil {
		ver = fmt.Sprintf("v%d/%d", m.timeline.current().Version, m.session.Versions)
	}
	model := s.Model.Render(clip(inert(m.session.Model), 24))
	if m.session.Demo {
		model = s.Demo.Render("demo model")
	}
	title := ""
	if m.session.Title != "" {
		title = s.Title.Render(clip(inert(m.session.Title), 24))
	}
	right := m.keyHint()
	switch text, style := m.message(); {
	case text == "":
	case m.messageFits(text):
		right = style.Render(text)
	case m.noticeRoom() <= 0:
		// No room above: the status line says what it can.
		right = style.Render(clip(text, max(m.width/2, 10)))
	}
	for _, drop := range []int{0, 1, 2} {
		parts := []string{s.Session.Render(m.sessionName())}
		if drop < 1 && title != "" {
			parts = append(parts, title)
		}
		parts = append(parts, s.Version.Render(ver))
		if b := m.branchLabel(); b != "" {
			parts = append(parts, s.Branch.Render(b))
		}
		if drop < 2 {
			parts = append(parts, model)
		}
		parts = append(parts, m.tokenGauge())
		if m.session.ReadOnly {
			parts = append(parts, s.ReadOnly.Render("read-only"))
		}
		left := strings.Join(parts, " ")
		if gap := m.width - visibleWidth(left) - visibleWidth(right); gap >= 1 || drop == 2 {
			return s.Bar.Render(fit(left+strings.Repeat(" ", max(gap, 1))+right, m.width))
		}
	}
	return ""
}

// branchLabel names the branch shown, once there is more than one.
func (m *Model) branchLabel() string {
	switch {
	case m.timeline != nil && m.timeline.branch > 0:
		return fmt.Sprintf("branch %d", m.timeline.branch)
	case m.session.Branches > 1:
		return fmt.Sprintf("branch %d of %d", m.session.Branch, m.session.Branches)
	}
	return ""
}

// tokenGauge estimates the context in use (about four characters a
// token) against the window.
func (m *Model) tokenGauge() string {
	s := m.shown()
	key := gaugeKey{s.SessionID, s.Version}
	if key != m.gauge.key {
		chars := len(s.Summary)
		for _, msg := range s.Since(min(max(s.SummaryThrough, s.HistoryFrom), s.HistoryLen())) {
			chars += len(msg.Content)
			for _, c := range msg.ToolCalls {
				chars += len(c.Arguments)
			}
		}
		m.gauge = gauge{key: key, used: chars / 4}
	}
	used := m.gauge.used
	text := "~" + kilo(used)
	if m.session.Window > 0 {
		text += "/" + kilo(m.session.Window)
		if used*10 > m.session.Window*8 {
			return m.st.Status.TokensHigh.Render(text)
		}
	}
	return m.st.Status.Tokens.Render(text)
}

// gauge keeps the token estimate of a state: counting walks the history,
// which is not work for every frame.
type gauge struct {
	key  gaugeKey
	used int
}

// gaugeKey names a state: a version, once checkpointed, never changes.
type gaugeKey struct {
	session string
	version int
}

func kilo(n int) string {
	if n < 1000 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%.1fk", float64(n)/1000)
}

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// maxNoticeRows bounds the lines a long message takes from the panes.
const maxNoticeRows = 4

// message is what the status line has to say besides the keys: a
// question waiting for its answer first (the next key answers it, so it
// must be seen), then an error, then a notice. Messages carry text from
// the driver, the model and the server: they are made inert here, where
// every one of them is drawn.
func (m *Model) message() (string, lipgloss.Style) {
	s := m.st.Status
	switch {
	case m.confirm != nil:
		return clip(inert(m.confirm.question), m.width*maxNoticeRows), s.Error
	case m.errText != "":
		return clip(inert(m.errText), m.width*maxNoticeRows), s.Error
	}
	return clip(inert(m.notice), m.width*maxNoticeRows), s.KeyDesc
}

// messageFits says whether a message fits the status line's right half;
// one that does not gets lines of its own above it.
func (m *Model) messageFits(text string) bool {
	return visibleWidth(text) <= max(m.width/2, 10)
}

// noticeRoom is how many rows a long message may take: on a short screen
// the panes keep their three rows and the status line its own, and the
// message gets what is left.
func (m *Model) noticeRoom() int {
	inputH, extra := m.chrome()
	return min(maxNoticeRows, m.height-1-inputH-extra-3)
}

// noticeRows are the lines a message too long for the status line
// takes above it, wrapped, so that no notice is cut: at most
// maxNoticeRows, the last one ending in … when even they are too few.
func (m *Model) noticeRows() []string {
	text, style := m.message()
	if text == "" || m.messageFits(text) || m.width <= 0 {
		return nil
	}
	most := m.noticeRoom()
	if most <= 0 {
		return nil
	}
	rows := wrap(text, m.width)
	if len(rows) > most {
		rows = rows[:most]
		rows[most-1] = cut(rows[most-1]+" …", m.width)
	}
	for i, r := range rows {
		rows[i] = style.Render(fit(r, m.width))
	}
	return rows
}
