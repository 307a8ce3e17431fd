package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"retrace/state"
	"retrace/state/transcript"
)

func (m *Model) handleResize(msg tea.WindowSizeMsg) tea.Cmd {
	m.width, m.height = msg.Width, msg.Height
	m.relayout()
	return nil
}

// relayout recomputes the rectangles: on resize, and when the input or
// the timeline banner changes height.
func (m *Model) relayout() {
	inputH, extra := m.chrome()
	m.lay = computeLayout(m.width, m.height, inputH, len(m.noticeRows()), extra)
}

// chrome is the rows the input takes and the rows over the panes (the
// timeline's banner).
func (m *Model) chrome() (inputH, extra int) {
	if m.timeline == nil {
		return m.input.Lines() + 2, 0
	}
	// Nothing is typed in the timeline: its keys step through the
	// versions, so the input gives its rows to the panes.
	if m.mode != modeTree {
		extra = 3 // the banner: keys, the version's change, its files
	}
	return 0, extra
}

func (m *Model) handleState(msg StateMsg) tea.Cmd {
	grew := msg.State.HistoryLen() > m.head.HistoryLen()
	m.setHead(msg.State)
	m.endPassing()
	if grew {
		m.conv.EndStream()
	}
	return nil
}

func (m *Model) handleDelta(msg DeltaMsg) tea.Cmd {
	m.conv.Stream(msg.Reasoning, msg.Text)
	return nil
}

func (m *Model) handleRetry(msg RetryMsg) tea.Cmd {
	if msg.Restart {
		m.conv.Restart()
	}
	m.notice = fmt.Sprintf("retrying in %s (%d of %d): %s", msg.Wait.Round(100*time.Millisecond), msg.Attempt, msg.Of, msg.Reason)
	m.passing = m.notice
	return nil
}

func (m *Model) handleNotice(msg NoticeMsg) tea.Cmd {
	m.notice, m.passing = msg.Text, ""
	if msg.Passing {
		m.passing = msg.Text
	}
	return nil
}

// endPassing clears a notice that said what the task was doing: a
// checkpoint or the task's end means it is done. Anything said since
// stays.
func (m *Model) endPassing() {
	if m.passing != "" && m.notice == m.passing {
		m.notice = ""
	}
	m.passing = ""
}

// handleError shows what a command's driver call failed with. In the
// sessions dialog it is a refusal to read before typing on.
func (m *Model) handleError(err error) tea.Cmd {
	m.notice = "error: " + err.Error()
	if m.mode == modeSessions && m.sessions != nil {
		m.sessions.refused = true
	}
	return nil
}

func (m *Model) handleTaskDone(msg TaskDoneMsg) tea.Cmd {
	m.running = false
	m.approval = nil
	m.conv.EndStream()
	m.endPassing()
	if msg.Session.ID == m.session.ID || m.session.ID == "" { // "": its first message wrote a new session
		m.session = msg.Session
		m.setHead(msg.Head)
	}
	switch {
	case msg.Err == nil:
		m.errText = ""
	case msg.Interrupted:
		m.notice = "interrupted: what streamed is kept; " + legend(keymap.Chat.Retry) + " carries the task on, or send a message"
	default:
		m.errText = msg.Err.Error()
	}
	if m.quitting {
		return tea.Quit
	}
	return nil
}

func (m *Model) handleSessionChanged(msg SessionChangedMsg) tea.Cmd {
	m.timeline = nil
	m.mode = modeChat
	m.errText, m.notice = "", ""
	m.loadSession(msg.Session, msg.Head)
	m.relayout()
	return m.opened()
}

func (m *Model) handleWheel(msg tea.MouseWheelMsg) tea.Cmd {
	switch msg.Button {
	case tea.MouseWheelUp:
		m.conv.Scroll(3)
	case tea.MouseWheelDown:
		m.conv.Scroll(-3)
	}
	return nil
}

// maxInput bounds a message (state.MaxMessage says why).
const maxInput = state.MaxMessage

func (m *Model) handlePaste(msg tea.PasteMsg) tea.Cmd {
	m.typing() // a key right behind a paste is part of it
	if m.mode != modeChat || m.session.ReadOnly {
		return nil
	}
	// Terminals paste line breaks as carriage returns (tmux and most
	// others turn LF into CR); the message keeps them as line breaks.
	text, cutFrom := strings.ReplaceAll(strings.ReplaceAll(msg.Content, "\r\n", "\n"), "\r", "\n"), 0
	if room := maxInput - len(m.input.Message()); len(text) > room {
		cutFrom, text = len(text), transcript.Head(text, room)
		m.notice = fmt.Sprintf("the paste is %s and a message holds at most %s: only its first %s is in the message",
			transcript.ApproxSize(int64(cutFrom)), transcript.Size(maxInput), transcript.ApproxSize(int64(len(text))))
	}
	m.input.Paste(text, cutFrom)
	// A paste is for the input, as typing is: the focus goes with it, so
	// Enter sends it rather than opening a tool call.
	m.focus = focusInput
	if !m.lay.wide {
		m.tab = 0
	}
	m.relayout()
	return nil
}

func (m *Model) handleTick() tea.Cmd {
	if !m.running {
		return nil
	}
	return tick()
}

// tick is a running task's clock, once a second. (A variable: the tests
// that walk every screen stop it, so that no step waits for a second.)
var tick = func() tea.Cmd {
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return tickMsg{} })
}

// submit sends the input as a message, or runs it as a slash command.
func (m *Model) submit() tea.Cmd {
	draft := strings.TrimSpace(m.input.Value())
	switch {
	case draft == "":
		return nil
	case strings.HasPrefix(draft, "/"):
		m.input.Reset()
		m.relayout()
		return m.command(draft)
	case m.session.ReadOnly:
		m.notice = m.readOnlyWhy(false)
		return nil
	case m.running:
		m.notice = busyNotice("")
		return nil
	}
	text := strings.TrimSpace(m.input.Message())
	if why := m.unsendable(text); why != "" {
		m.notice = why // the draft stays, for the person to cut
		return nil
	}
	m.input.Reset()
	m.relayout()
	return m.send(text)
}

// unsendable says why a message cannot be sent, before anything is
// written: over the cap a message may hold, or over the model's window
// (sent, it would fail at the server after its checkpoint).
func (m *Model) unsendable(text string) string {
	if len(text) > maxInput {
		return fmt.Sprintf("not sent: the message is %s and a message holds at most %s; "+
			"put the text in a file in the workspace and ask for it to be read", transcript.ApproxSize(int64(len(text))), transcript.Size(maxInput))
	}
	if tokens := len(text) / 4; m.session.Window > 0 && tokens > m.session.Window {
		return fmt.Sprintf("not sent: the message is about %s tokens, more than the model's window of %s; "+
			"put the text in a file in the workspace and ask for it to be read", kilo(tokens), kilo(m.session.Window))
	}
	return ""
}

// send starts a task. A message the driver refuses to start (no key, say)
// goes back into the input, so nothing typed is lost.
func (m *Model) send(text string) tea.Cmd {
	if m.timeline != nil {
		m.closeTimeline()
	}
	m.errText, m.notice = "", ""
	m.conv.Bottom()
	return m.startTask(func() error { return m.d.Submit(text) }, text)
}

// startTask runs a driver call that starts a task, with the clock the
// phase pane's "for Ns" ticks by: every way a task starts goes through
// here, so none leaves the pane frozen.
// A message whose task does not start comes back as unsent.
func (m *Model) startTask(fn func() error, unsent string) tea.Cmd {
	m.running = true
	start := func() tea.Msg {
		if err := fn(); err != nil {
			return startFailedMsg{err: err, unsent: unsent}
		}
		return nil
	}
	return tea.Batch(start, tick())
}

// startFailedMsg says a task never started (no key, a draft that could
// not be written): no TaskDoneMsg will come to end it. unsent is the
// message it was to carry, if any, for the input.
type startFailedMsg struct {
	err    error
	unsent string
}

func (m *Model) handleStartFailed(msg startFailedMsg) tea.Cmd {
	m.running = false
	m.errText = msg.err.Error()
	if msg.unsent != "" && m.input.Value() == "" {
		m.input.SetValue(msg.unsent)
		m.relayout()
	}
	if m.head.Restoring != nil && !m.session.ReadOnly {
		return m.askOpenRestore() // what stops every task until it is answered
	}
	return nil
}

// retry acts on the head's own task, and only on it: one left mid-way
// (after a restore or an interruption) goes on, and one that failed is
// sent again from the goal the head records. A message typed in another
// session, or on a branch left by a restore, is not the head's, so it is
// never what Ctrl+R sends.
func (m *Model) retry() tea.Cmd {
	switch {
	case m.running:
		return nil
	case m.session.ReadOnly:
		m.notice = m.readOnlyWhy(false)
		return nil
	case m.head.Phase.Active() || m.head.Unfinished():
		m.notice, m.errText = "", ""
		return m.startTask(m.d.Resume, "")
	case m.head.Phase == state.Error && m.head.Memory.CurrentGoal != "":
		return m.send(m.head.Memory.CurrentGoal)
	}
	m.notice = "nothing to retry: " + legend(keymap.Chat.Retry) + " carries on a task that failed or was interrupted here"
	return nil
}

// decide answers the pending approval.
func (m *Model) decide(d Decision) tea.Cmd {
	if m.approval == nil {
		return nil
	}
	tool, save := m.approval.Tool, m.opts.SaveProjectTool
	m.approval = nil
	m.detail = detailView{}
	return func() tea.Msg {
		m.d.Decide(d)
		if !d.Project {
			return nil
		}
		if err := save(tool); err != nil {
			return NoticeMsg{Text: "approved for this session; not kept for the project: " + err.Error()}
		}
		return NoticeMsg{Text: tool + " runs without asking in every session of this project (kept in your config; /memory lists it)"}
	}
}
