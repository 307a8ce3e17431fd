package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"retrace/state"
	"retrace/themes"

	"retrace/state/transcript"
)

// sessionList is the sessions dialog: type to filter, Enter resumes, d
// deletes (after a question), n starts a new session.
type sessionList struct {
	all    []SessionInfo
	filter string
	sel    int
	// refused is set while the status line says why the last action was
	// refused: the next key puts that away, and a letter typed to do so
	// must not land in the filter.
	refused bool
	// reading is set until the list comes: the dialog opens at once, so
	// what is typed after Ctrl+S filters it rather than landing in the
	// message (and being sent with the Enter that was meant to open);
	// an Enter typed meanwhile opens the first match once it comes.
	reading, openWhenRead bool
}

func (l *sessionList) visible() []SessionInfo {
	if l.filter == "" {
		return l.all
	}
	f := strings.ToLower(l.filter)
	var out []SessionInfo
	for _, s := range l.all {
		if strings.Contains(strings.ToLower(s.Title), f) || strings.HasPrefix(s.ID, f) {
			out = append(out, s)
		}
	}
	return out
}

func (l *sessionList) selected() (SessionInfo, bool) {
	v := l.visible()
	if l.sel < 0 || l.sel >= len(v) {
		return SessionInfo{}, false
	}
	return v[l.sel], true
}

func (m *Model) openSessions() tea.Cmd {
	if m.mode != modeSessions {
		m.sessions, m.mode = &sessionList{reading: true}, modeSessions
	}
	return func() tea.Msg {
		list, err := m.d.Sessions()
		return sessionsMsg{list: list, err: err}
	}
}

func (m *Model) handleSessions(msg sessionsMsg) tea.Cmd {
	if m.mode != modeSessions || m.sessions == nil {
		// Closed (Esc, or n started a session) before the list came: it
		// must not open the dialog again over what the person went on to.
		return nil
	}
	if msg.err != nil {
		m.notice = "sessions: " + msg.err.Error()
		if m.sessions.reading {
			m.sessions, m.mode = nil, modeChat
		}
		return nil
	}
	open := m.sessions.openWhenRead
	m.sessions = &sessionList{all: msg.list, filter: m.sessions.filter}
	if s, ok := m.sessions.selected(); ok && open {
		return m.resume(s)
	}
	return nil
}

// sessionsKey drives the dialog. Printable keys type into the filter:
// while there is one, n and d are letters of it, and only Ctrl+N, Ctrl+D
// start or delete.
func (m *Model) sessionsKey(k tea.KeyPressMsg) tea.Cmd {
	l, keys := m.sessions, keymap.Sessions
	if l.refused {
		l.refused, m.notice = false, ""
		if k.Text != "" {
			return nil
		}
	}
	acts := l.filter == "" || k.Text == ""
	switch {
	case key.Matches(k, keys.Close):
		m.mode = modeChat
	case key.Matches(k, keys.Up):
		l.sel = max(l.sel-1, 0)
	case key.Matches(k, keys.Down):
		l.sel = min(l.sel+1, max(len(l.visible())-1, 0))
	case key.Matches(k, keys.Open):
		if s, ok := l.selected(); ok {
			return m.resume(s)
		}
		l.openWhenRead = l.reading
	case key.Matches(k, keys.New) && acts:
		return m.newSession()
	case key.Matches(k, keys.Delete) && acts:
		return m.askDelete()
	case key.Matches(k, keys.Erase):
		if l.filter != "" {
			l.filter = l.filter[:len(l.filter)-1]
			l.sel = 0
		}
	case len(k.Text) > 0:
		l.filter += k.Text
		l.sel = 0
	}
	return nil
}

// sessionName names the open session in few cells: its short id, or
// "new" for one its first message has not written yet.
func (m *Model) sessionName() string {
	if m.session.ID == "" {
		return "new"
	}
	return inert(short(m.session.ID))
}

func (m *Model) openSession(id string) tea.Cmd {
	return m.switchSession(busyNotice("before you switch"), func() error { return m.d.Open(id) })
}

// lookAt opens a session read-only, to look.
func (m *Model) lookAt(id string) tea.Cmd {
	return m.switchSession(busyNotice("before you switch"), func() error { return m.d.OpenReadOnly(id) })
}

// resume opens s, chosen in the list. A session works in the workspace it
// recorded, so one of another workspace than the open session's asks
// first: its tools, commands and restores would act there. One whose
// workspace is not a directory here can only be looked at.
func (m *Model) resume(s SessionInfo) tea.Cmd {
	name, where := inert(short(s.ID)), first(inert(s.Workspace), "no directory it recorded")
	switch {
	case s.NoWorkspace:
		m.confirm = &confirmation{
			question: fmt.Sprintf("Session %s works in %s, which is not a directory here. Open it read-only, to look? (y/n)", name, where),
			yes:      func() tea.Cmd { return m.lookAt(s.ID) },
		}
	case s.Workspace != m.session.Workspace:
		m.confirm = &confirmation{
			question: fmt.Sprintf("Session %s works in %s, not in %s: its tools and restores act there. Open it there (y), read-only to look (r), or not (n)?",
				name, where, inert(m.session.Workspace)),
			yes:  func() tea.Cmd { return m.openSession(s.ID) },
			look: func() tea.Cmd { return m.lookAt(s.ID) },
		}
	default:
		return m.openSession(s.ID)
	}
	return nil
}

func (m *Model) newSession() tea.Cmd {
	return m.switchSession(busyNotice("before a new session"), m.d.New)
}

// switchSession makes the driver open another session, off the UI's
// goroutine, and shows it when it is open. While a task runs it only says
// busy.
func (m *Model) switchSession(busy string, change func() error) tea.Cmd {
	if m.running {
		m.notice = busy
		return nil
	}
	return func() tea.Msg {
		if err := change(); err != nil {
			return errMsg{err}
		}
		info, head := m.d.Current()
		return SessionChangedMsg{Session: info, Head: head}
	}
}

func (m *Model) askDelete() tea.Cmd {
	s, ok := m.sessions.selected()
	if !ok {
		return nil
	}
	if s.ID == m.session.ID {
		m.notice = "this session is open; open another one before deleting it"
		m.sessions.refused = true
		return nil
	}
	m.confirm = &confirmation{
		question: fmt.Sprintf("Delete session %s \"%s\" and all its %d versions? (y/n)", inert(short(s.ID)), clip(inert(s.Title), 30), s.Versions),
		yes: func() tea.Cmd {
			return func() tea.Msg {
				if err := m.d.Delete(s.ID); err != nil {
					return errMsg{err}
				}
				list, err := m.d.Sessions()
				return sessionsMsg{list: list, err: err}
			}
		},
	}
	return nil
}

// lines renders the list in width×height.
func (l *sessionList) lines(st *themes.Styles, width, height int) []string {
	s := st.Sessions
	filter := "type to filter"
	if l.filter != "" {
		filter = "filter: " + inert(l.filter)
	}
	k := keymap.Sessions
	out := []string{s.Filter.Render(filter) + s.Meta.Render(fmt.Sprintf("  ·  %s open · %s new · %s delete · %s back",
		legend(k.Open), legend(k.New), legend(k.Delete), legend(k.Close))), ""}
	vis := l.visible()
	switch {
	case l.reading:
		return append(out, s.Meta.Render("reading the sessions…"))
	case len(vis) == 0:
		return append(out, s.Meta.Render("no sessions match"))
	}
	cols := columnsFor(vis, width)
	if cols.busy > 0 {
		out[1] = s.Busy.Render(busyWord) + s.Meta.Render(" elsewhere (opens read-only): another retrace process has it open")
	}
	// The last line names the chosen session's workspace in full, or as
	// much of its end as fits.
	footer := ""
	if x, ok := l.selected(); ok && height > len(out)+1 {
		footer = s.Meta.Render(clipStart("works in "+workspaceLabel(x), width))
		if x.Workspace == "" {
			footer = s.Meta.Render("records no workspace")
		}
		height--
	}
	room := max(height-len(out), 1)
	top := min(max(l.sel-room/2, 0), max(len(vis)-room, 0))
	for i := top; i < len(vis) && len(out) < height; i++ {
		if i == l.sel {
			// The selection is a bar across the pane, in its own colours.
			out = append(out, s.Selected.Render(fit(ansi.Strip(cols.row(st, vis[i], s.Selected, "▸ ")), width)))
			continue
		}
		out = append(out, cols.row(st, vis[i], s.Row, "  "))
	}
	if footer == "" {
		return out
	}
	for len(out) < height {
		out = append(out, "")
	}
	return append(out, footer)
}

// busyWord marks a session another process has open.
const busyWord = "in use"

// sessionColumns are the widths, in cells, of the list's columns: one set
// for every row, so the columns line up whatever the titles hold.
type sessionColumns struct {
	title, workspace, phase, versions, busy int
	date                                    string // the layout of the date column
}

// Bounds on the workspace column, in cells: a path's end tells projects
// apart, and the title keeps the room it needs first.
const (
	maxWorkspaceColumn = 32
	minWorkspaceColumn = 12
	minTitleColumn     = 16
)

// workspaceLabel is a session's workspace as the list writes it, before
// it is cut to the column.
func workspaceLabel(x SessionInfo) string {
	ws := strings.Join(strings.Fields(inert(x.Workspace)), " ")
	if x.NoWorkspace {
		return first(ws, "none") + " (gone)"
	}
	return ws
}

// cutWorkspace fits a workspace label in width cells: a path loses its
// start, and a gone one keeps saying so.
func cutWorkspace(x SessionInfo, width int) string {
	label := workspaceLabel(x)
	if !x.NoWorkspace || visibleWidth(label) <= width {
		return fit(clipStart(label, width), width)
	}
	const gone = " (gone)"
	return fit(clipStart(strings.TrimSuffix(label, gone), max(width-len(gone), 1))+gone, width)
}

// columnsFor sizes the columns to the rows shown and gives the title
// what is left of width. When that is little, the date loses its time.
func columnsFor(vis []SessionInfo, width int) sessionColumns {
	c := sessionColumns{date: "2006-01-02 15:04"}
	for _, x := range vis {
		c.workspace = max(c.workspace, min(visibleWidth(workspaceLabel(x)), maxWorkspaceColumn))
		c.phase = max(c.phase, visibleWidth(phaseLabel(x.Phase)))
		c.versions = max(c.versions, visibleWidth(transcript.Count(x.Versions, "version")))
		if x.Busy {
			c.busy = visibleWidth(busyWord)
		}
	}
	// mark, id, and two cells before each column after the id
	fixed := 2 + 8 + 2 + 2 + c.phase + 2 + c.versions + 2
	if c.busy > 0 {
		fixed += 2 + c.busy
	}
	// The workspace takes a fifth of the row at most, and gives its room
	// back to the title first, then the date its time, then goes: the
	// line under the list names the chosen session's.
	c.workspace = min(c.workspace, max(width/5, minWorkspaceColumn))
	room := func() int {
		if c.workspace == 0 {
			return width - fixed - len(c.date)
		}
		return width - fixed - 2 - c.workspace - len(c.date)
	}
	if short := minTitleColumn - room(); short > 0 && c.workspace > minWorkspaceColumn {
		c.workspace -= min(short, c.workspace-minWorkspaceColumn)
	}
	if room() < minTitleColumn {
		c.date = "2006-01-02"
	}
	if room() < minTitleColumn {
		c.workspace = 0
	}
	c.title = room()
	c.title = max(c.title, 8)
	return c
}

// row draws one session in the columns.
func (c sessionColumns) row(st *themes.Styles, x SessionInfo, style lipgloss.Style, mark string) string {
	s := st.Sessions
	left := mark + fit(inert(short(x.ID)), 8) + "  " + fit(clip(inert(x.Title), c.title), c.title)
	meta := "  "
	if c.workspace > 0 {
		meta += cutWorkspace(x, c.workspace) + "  "
	}
	meta += fit(phaseLabel(x.Phase), c.phase) + "  " +
		padLeft(transcript.Count(x.Versions, "version"), c.versions) + "  " + x.Updated.Local().Format(c.date)
	row := style.Render(left) + s.Meta.Render(meta)
	if x.Busy {
		row += s.Busy.Render("  " + busyWord)
	}
	return row
}

// phaseLabel is a phase as the list writes it.
func phaseLabel(p state.Phase) string { return strings.ReplaceAll(p.String(), "_", " ") }

// padLeft fills plain text with spaces before it to width cells (fit
// puts them after). Text already wider is left as it is.
func padLeft(s string, width int) string {
	return strings.Repeat(" ", max(width-visibleWidth(s), 0)) + s
}

// readOnlyWhy says why nothing can be sent or restored in the open
// session, "" when something can: in the input box (box) or as a notice.
func (m *Model) readOnlyWhy(box bool) string {
	switch {
	case !m.session.ReadOnly:
		return ""
	case m.session.Looking:
		return "read-only: opened to look; " + legend(keymap.Chat.Sessions) + " and Enter open it to work in"
	case box:
		return "read-only: another retrace process is writing this session"
	}
	return "read-only: another retrace process writes this session"
}

// first is the first of texts that is set.
func first(texts ...string) string {
	for _, t := range texts {
		if t != "" {
			return t
		}
	}
	return ""
}
