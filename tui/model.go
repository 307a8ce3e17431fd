package tui

import (
	"errors"
	"time"

	tea "charm.land/bubbletea/v2"

	"retrace/state"
	"retrace/themes"
)

// Options tune the model.
type Options struct {
	// Palette is the starting theme.
	Palette themes.Palette
	// Now is the clock for "time in phase"; tests fix it.
	Now func() time.Time
	// Editor is the command for writing a long prompt ($EDITOR).
	Editor string
	// SaveTheme records the theme chosen with /theme, so the next start
	// uses it; without it /theme says there is nowhere to save.
	SaveTheme func(name string) error
	// SaveProjectTool keeps a tool among those that run without asking
	// in every session of the open session's project, for the approval's
	// "always, in this project".
	SaveProjectTool func(tool string) error
	// Start is what the command line gave: a prompt to send, the shell
	// commands the welcome names.
	Start Start
}

// mode is what the keyboard drives.
type mode int

const (
	modeChat mode = iota
	modeTimeline
	modeTree
	modeSessions
	modeHelp
	modeToolDetail
	modeMemories
)

// focus is which pane of the chat mode takes the arrow keys.
type focus int

const (
	focusInput focus = iota
	focusTools
)

// Model is the TUI: the only tea.Model.
type Model struct {
	d       Driver
	opts    Options
	palette themes.Palette
	st      themes.Styles

	width, height int
	lay           layout

	mode  mode
	focus focus
	tab   int // narrow layouts: which pane the tabs show

	session SessionInfo
	head    state.State
	since   time.Time // when the head's phase began
	running bool

	conv     *conversation
	tools    toolList
	input    input
	approval *ApprovalMsg
	confirm  *confirmation
	timeline *timeline
	sessions *sessionList
	detail   detailView
	notice   string
	// passing is the notice while it says what the task does now (a
	// retry's wait, a summary): the task's next checkpoint or its end
	// clears it, so it cannot outlive what it describes.
	passing  string
	errText  string // the last failure to show in the status line
	quitting bool
	mouseOff bool // the terminal, not retrace, has the mouse
	gauge    gauge

	helpOffset int  // the first line of the help screen shown
	helpFrom   mode // the mode closing the help returns to
	// earlier is the whole state the head's left-out messages are read
	// from (earlier.go); earlierAsked, the last read asked for.
	memories       *memoryView // the /memory view, while it is open
	earlier        state.State
	earlierAsked   earlierKey
	earlierReading bool // a read is under way
	// calls is the tool log the panes show (shownCalls): the shown
	// state's, with the calls its window leaves out once they are read;
	// callsLeft counts those still left out.
	calls     []state.ToolCall
	callsLeft int

	// asked is when the approval or guarded question on screen opened,
	// and lastInput when the last key or paste came: a key answers the
	// question only once both are approvalGuard old (approval.go).
	asked, lastInput time.Time
}

// New returns the model for a driver with a session open.
func New(d Driver, opts Options) *Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.SaveProjectTool == nil {
		opts.SaveProjectTool = func(string) error { return errors.New("there is no config file to keep it in") }
	}
	if opts.SaveTheme == nil {
		opts.SaveTheme = func(string) error { return errors.New("there is no config file to save the theme in") }
	}
	m := &Model{d: d, opts: opts}
	m.setPalette(opts.Palette)
	m.conv = newConversation(&m.st)
	m.input = newInput(&m.st)
	m.input.Focus() // the cursor does not blink, so the command it returns is not needed
	m.tools.selected = -1
	m.loadSession(d.Current())
	return m
}

// setPalette switches the theme, live.
func (m *Model) setPalette(p themes.Palette) {
	m.palette = p
	m.st = p.Styles()
	m.input.restyle()
}

// loadSession shows a session from its head.
func (m *Model) loadSession(info SessionInfo, head state.State) {
	m.session = info
	m.setHead(head)
	m.conv.cache = map[int]rendered{}
	m.conv.Bottom()
	m.tools.selected = -1
}

func (m *Model) setHead(s state.State) {
	if m.session.ID == "" {
		m.session.ID = s.SessionID // a new session's first message wrote it
	}
	if s.Phase != m.head.Phase || s.SessionID != m.head.SessionID {
		m.since = m.opts.Now()
	}
	m.head = s
	m.session.Head, m.session.Phase = s.Version, s.Phase
	m.session.Versions = max(m.session.Versions, s.Version)
	if m.timeline == nil {
		m.showState(s)
	}
}

// showState puts a state in the panes: the head, or a version from the
// timeline.
func (m *Model) showState(s state.State) {
	m.conv.SetHistory(s.History, s.HistoryFrom)
	if s.HistoryFrom > 0 && earlierFits(m.earlier, s) {
		m.conv.SetEarlier(m.earlier.History[:s.HistoryFrom], m.earlier.Memory.ToolCalls[:s.Memory.ToolCallsFrom])
	} else {
		m.conv.SetEarlier(nil, nil)
	}
	m.conv.SetSummary(s.SummaryThrough)
	m.conv.SetCalls(s.Memory.ToolCalls)
	calls, left := m.shownCalls(s)
	if m.tools.selected >= 0 {
		m.tools.selected += m.callsLeft - left // the same call, now with those before it
	}
	m.calls, m.callsLeft = calls, left
	m.conv.SetError("")
	if s.Phase == state.Error {
		m.conv.SetError(s.ErrorMessage)
	}
}

// shown is the state the panes show.
func (m *Model) shown() state.State {
	if m.timeline != nil {
		return m.timeline.current()
	}
	return m.head
}

// Init listens to the driver and says what the session left unfinished;
// nothing of it starts by itself (see opened).
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.opened(), m.listen(), m.start(), m.readEarlier())
}

// Update routes each message to its handler, then reads the head's
// earlier messages if it was opened without them.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	next, cmd := m.update(msg)
	if read := m.readEarlier(); read != nil {
		cmd = tea.Batch(cmd, read)
	}
	return next, cmd
}

func (m *Model) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case earlierMsg:
		return m, m.handleEarlier(msg)
	case memoriesMsg:
		return m, m.handleMemories(msg)
	case rememberedMsg:
		return m, m.handleRemembered(msg)
	case forgottenMsg:
		return m, m.handleForgotten(msg)
	case reportMsg:
		return m, m.handleReport(msg)
	case tea.WindowSizeMsg:
		return m, m.handleResize(msg)
	case tea.KeyPressMsg:
		return m, m.handleKey(msg)
	case tea.PasteMsg:
		return m, m.handlePaste(msg)
	case tea.MouseWheelMsg:
		return m, m.handleWheel(msg)
	case StateMsg:
		return m, m.handleState(msg)
	case DeltaMsg:
		return m, m.handleDelta(msg)
	case RetryMsg:
		return m, m.handleRetry(msg)
	case NoticeMsg:
		return m, m.handleNotice(msg)
	case TaskDoneMsg:
		return m, m.handleTaskDone(msg)
	case ApprovalMsg:
		return m, m.handleApproval(msg)
	case SessionChangedMsg:
		return m, m.handleSessionChanged(msg)
	case FollowedMsg:
		return m, m.handleFollowed(msg)
	case WriterGoneMsg:
		return m, m.handleWriterGone()
	case askTakeOverMsg:
		return m, m.offerTakeOver(msg)
	case restoredMsg:
		return m, m.handleRestored(msg)
	case filesChangedMsg:
		return m, m.handleFilesChanged(msg)
	case fileDiffsMsg:
		return m, m.handleFileDiffs(msg)
	case callFilesMsg:
		return m, m.handleCallFiles(msg)
	case historyMsg:
		return m, m.handleHistory(msg)
	case sessionsMsg:
		return m, m.handleSessions(msg)
	case startFailedMsg:
		return m, m.handleStartFailed(msg)
	case errMsg:
		return m, m.handleError(msg.err)
	case editorMsg:
		return m, m.handleEditor(msg)
	case tickMsg:
		return m, m.handleTick()
	case guardPassedMsg:
		return m, nil // drawn again: the input's title says keys count
	case modelMsg:
		return m, m.handleModel(msg)
	}
	return m, m.input.Update(msg)
}

// Messages the model sends itself.
type (
	historyMsg struct {
		tree     Tree
		versions []Version
		select_  int
		err      error
	}
	sessionsMsg struct {
		list []SessionInfo
		err  error
	}
	errMsg    struct{ err error }
	editorMsg struct {
		text string
		err  error
	}
	tickMsg struct{}
)

// reportMsg is one of the driver's reports, from listen.
type reportMsg struct{ msg tea.Msg }

// listen waits for the driver's next report. One listen is in flight at a
// time, and the next starts once its report is handled, so reports arrive
// in the order the session made them.
func (m *Model) listen() tea.Cmd {
	return func() tea.Msg {
		if msg := m.d.Next(); msg != nil {
			return reportMsg{msg}
		}
		return nil // the driver is closed: nothing more will come
	}
}

func (m *Model) handleReport(r reportMsg) tea.Cmd {
	_, cmd := m.Update(r.msg)
	return tea.Batch(cmd, m.listen())
}
