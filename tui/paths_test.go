package tui

import (
	"errors"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"retrace/state"
)

// The interface's half of paths that only the end-to-end test in tmux
// reached: what each key asks of the driver, and what the screen says.
// The root package's tui_session_test.go runs the same paths against the
// real session controller.

// pressKeys presses each named key and runs what it returns, as the program
// would (one level).
func pressKeys(t *testing.T, m *Model, names ...string) {
	t.Helper()
	for _, n := range names {
		_, cmd := m.Update(keyPress(t, n))
		run(m, cmd)
	}
}

// typed types text into the input and sends it with Enter.
func typed(t *testing.T, m *Model, text string) {
	t.Helper()
	for _, r := range text {
		m.Update(keyMsg(string(r)))
	}
	pressKeys(t, m, "enter")
}

func screenOf(m *Model) string { return plain(m.View().Content) }

// statusText is what the status line says, with the lines above it that
// a message too long for it takes, joined as one text.
func statusText(m *Model) string {
	var parts []string
	for _, r := range m.noticeRows() {
		parts = append(parts, strings.TrimRight(plain(r), " "))
	}
	return strings.Join(append(parts, plain(m.statusLine())), " ")
}

// failedSession is richSession ended in the error phase.
func failedSession() []state.Event {
	return append(richSession(), state.Event{Kind: state.Failed, Text: "the server kept failing"})
}

// answeredSession is a finished question and answer.
func answeredSession() []state.Event {
	return []state.Event{
		{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "hello"}}},
		{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: "Hello!"}}},
	}
}

// Ctrl+R carries on a task the head left mid-way, and after a failure
// sends the last message again: the one sent in this run, or after a
// restart the goal the session remembers. Otherwise it does nothing.
func TestRetryResumesOrResends(t *testing.T) {
	t.Run("mid-task: resume", func(t *testing.T) {
		f := newFake(richSession()...) // ends executing
		m := newModel(t, f, "dark", 120, 40)
		pressKeys(t, m, "ctrl+r")
		if f.resumed != 1 || len(f.submitted) != 0 || !m.running {
			t.Fatalf("resumed %d, submitted %q, running %v", f.resumed, f.submitted, m.running)
		}
		pressKeys(t, m, "ctrl+r")
		if f.resumed != 1 {
			t.Fatal("Ctrl+R while the task runs started it again")
		}
	})
	t.Run("after a failure: the message sent", func(t *testing.T) {
		f := newFake(answeredSession()...)
		m := newModel(t, f, "dark", 120, 40)
		typed(t, m, "fix the build")
		failed := newFake(append(answeredSession(),
			state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "fix the build"}}},
			state.Event{Kind: state.Failed, Text: "server error (500) after 4 tries"})...)
		m.Update(TaskDoneMsg{Err: errors.New("server error (500) after 4 tries"), Session: failed.info, Head: failed.head})
		if s := statusText(m); m.running || !strings.Contains(s, "server error (500) after 4 tries") {
			t.Fatalf("after the failure: running %v, status %q", m.running, s)
		}
		if s := screenOf(m); !strings.Contains(s, "Ctrl+R retries the last message") {
			t.Fatalf("the phase pane does not say how to retry:\n%s", s)
		}
		pressKeys(t, m, "ctrl+r")
		if len(f.submitted) != 2 || f.submitted[1] != "fix the build" || f.resumed != 0 || !m.running {
			t.Fatalf("submitted %q, resumed %d, running %v", f.submitted, f.resumed, m.running)
		}
		if s := statusText(m); strings.Contains(s, "server error") {
			t.Fatalf("the old error still shows: %q", s)
		}
	})
	t.Run("after a failure, after a restart: the goal", func(t *testing.T) {
		f := newFake(failedSession()...)
		m := newModel(t, f, "dark", 120, 40)
		pressKeys(t, m, "ctrl+r")
		if len(f.submitted) != 1 || f.submitted[0] != "Why does `go build` fail?" || f.resumed != 0 {
			t.Fatalf("submitted %q, resumed %d", f.submitted, f.resumed)
		}
	})
	t.Run("at rest with nothing to retry", func(t *testing.T) {
		f := newFake()
		m := newModel(t, f, "dark", 120, 40)
		pressKeys(t, m, "ctrl+r")
		if len(f.submitted) != 0 || f.resumed != 0 || m.running {
			t.Fatalf("submitted %q, resumed %d, running %v", f.submitted, f.resumed, m.running)
		}
	})
}

// A restore never starts the task by itself, even mid-task; the notice
// says Ctrl+R carries it on, and it does.
func TestRestoredMidTaskWaitsForCtrlR(t *testing.T) {
	f := newFake(richSession()...)
	f.head.Phase = state.Done // resting, so the timeline can restore
	f.info.Phase = state.Done
	m := newModel(t, f, "dark", 120, 40)
	pressKeys(t, m, "ctrl+t", "home", "right", "right", "right", "enter")
	if len(f.restored) != 1 || f.restored[0] != 3 {
		t.Fatalf("restored %v, want [3]", f.restored)
	}
	want := "restored v3, in the middle of a task (executing): Ctrl+R carries it on; a new message interrupts it"
	if m.notice != want || m.running || f.resumed != 0 {
		t.Fatalf("after the restore: notice %q, running %v, resumed %d", m.notice, m.running, f.resumed)
	}
	pressKeys(t, m, "ctrl+r")
	if f.resumed != 1 || len(f.submitted) != 0 {
		t.Fatalf("Ctrl+R on a restored mid-task version: resumed %d, submitted %q", f.resumed, f.submitted)
	}
}

// A session another process writes is shown, but nothing can be typed,
// sent, retried or restored, and its unfinished task is not carried on.
func TestReadOnlySessionTakesNoInput(t *testing.T) {
	f := newFake(richSession()...) // mid-task
	f.info.ReadOnly = true
	m := newModel(t, f, "dark", 120, 40)
	run(m, m.Init())
	if m.running || f.resumed != 0 {
		t.Fatalf("a read-only session's task was carried on: running %v, resumed %d", m.running, f.resumed)
	}
	s := screenOf(m)
	if !strings.Contains(s, "read-only: another retrace process is writing this session") || !strings.Contains(statusText(m), "read-only") {
		t.Fatalf("the screen does not say read-only:\n%s", s)
	}
	typed(t, m, "hello")
	m.Update(tea.PasteMsg{Content: "pasted"})
	pressKeys(t, m, "enter", "ctrl+r")
	if m.input.Value() != "" || len(f.submitted) != 0 || f.resumed != 0 || m.running {
		t.Fatalf("input %q, submitted %q, resumed %d", m.input.Value(), f.submitted, f.resumed)
	}
	pressKeys(t, m, "ctrl+t", "left", "enter")
	if len(f.restored) != 0 || !strings.Contains(m.notice, "read-only") {
		t.Fatalf("restore on a read-only session: %v, notice %q", f.restored, m.notice)
	}
}

// Esc at an approval cancels the task; the question stays until the task
// has ended, and then no key answers it.
func TestEscAtAnApproval(t *testing.T) {
	f := newFake(richSession()...)
	m := newModel(t, f, "dark", 120, 40)
	m.running = true
	m.Update(ApprovalMsg{Tool: "write_file", Summary: "write 1 line to out.txt", Path: "out.txt"})
	later(m, approvalGuard)
	pressKeys(t, m, "esc")
	if f.cancelled != 1 || len(f.decided) != 0 {
		t.Fatalf("Esc at the question: cancelled %d, decided %+v", f.cancelled, f.decided)
	}
	interrupted := f.head
	interrupted.Version++
	interrupted.Phase = state.Idle
	m.Update(TaskDoneMsg{Err: errors.New("interrupted"), Interrupted: true, Session: f.info, Head: interrupted})
	if s := screenOf(m); strings.Contains(s, "Approve write_file?") || !strings.Contains(s, "interrupted: what streamed is kept") {
		t.Fatalf("after the task ended:\n%s", s)
	}
	later(m, approvalGuard)
	pressKeys(t, m, "a")
	if len(f.decided) != 0 || m.running {
		t.Fatalf("a key after the task ended answered: %+v", f.decided)
	}
}

// d in the sessions dialog asks first; only y deletes. The open session
// is never offered for deletion; with a filter typed, n and d are letters
// and Ctrl+N, Ctrl+D act.
func TestSessionsDialogNewAndDelete(t *testing.T) {
	f := newFake(answeredSession()...) // at rest: opening it starts nothing
	m := newModel(t, f, "dark", 120, 40)
	pressKeys(t, m, "ctrl+s", "d")
	if m.confirm != nil || len(f.deleted) != 0 || m.notice != "this session is open; open another one before deleting it" {
		t.Fatalf("d on the open session: question %v, deleted %v, notice %q", m.confirm != nil, f.deleted, m.notice)
	}
	pressKeys(t, m, "down", "d")
	question := `Delete session 9b8c7d6e "other work" and all its 4 versions? (y/n)`
	if s := statusText(m); !strings.Contains(s, question) {
		t.Fatalf("the status line does not ask %q: %q", question, s)
	}
	pressKeys(t, m, "n")
	if len(f.deleted) != 0 || m.confirm != nil || m.mode != modeSessions {
		t.Fatalf("n deleted %v (question left %v, mode %v)", f.deleted, m.confirm != nil, m.mode)
	}
	pressKeys(t, m, "d", "y")
	if len(f.deleted) != 1 || f.deleted[0] != "9b8c7d6e5f4a3b2c" || m.mode != modeSessions {
		t.Fatalf("y deleted %v, mode %v", f.deleted, m.mode)
	}

	pressKeys(t, m, "o", "t", "h", "d", "n")
	if l := m.sessions; l.filter != "othdn" || len(f.deleted) != 1 || f.created != 0 || m.confirm != nil {
		t.Fatalf("with a filter, d and n are letters: filter %q, deleted %v, created %d", l.filter, f.deleted, f.created)
	}
	pressKeys(t, m, "backspace", "backspace", "ctrl+d")
	if m.confirm == nil {
		t.Fatal("Ctrl+D with a filter does not ask")
	}
	pressKeys(t, m, "esc", "ctrl+n")
	if f.created != 1 || len(f.deleted) != 1 || m.mode != modeChat {
		t.Fatalf("Ctrl+N: created %d, deleted %v, mode %v", f.created, f.deleted, m.mode)
	}
	pressKeys(t, m, "ctrl+s", "n")
	if f.created != 2 {
		t.Fatalf("n with no filter: created %d", f.created)
	}
}

// A yes/no question is what the status line shows, whatever notice was
// there before it was asked: an unseen question would be answered by the
// next key by chance.
func TestQuestionShowsOverANotice(t *testing.T) {
	f := newFake(richSession()...)
	m := newModel(t, f, "dark", 120, 40)
	typed(t, m, "/sessions") // typing a command leaves its completion as the notice
	pressKeys(t, m, "down", "d")
	if s := statusText(m); !strings.Contains(s, "Delete session 9b8c7d6e") {
		t.Fatalf("the question is hidden: %q", s)
	}
	pressKeys(t, m, "esc", "esc")
	m.running = true
	m.Update(RetryMsg{Attempt: 2, Of: 4, Reason: "server error (500)"})
	m.Update(keyPress(t, "ctrl+c"))
	if s := statusText(m); !strings.Contains(s, "Quit?") {
		t.Fatalf("the quit question is hidden: %q", s)
	}
	m.errText = "server error (500) after 4 tries"
	if s := statusText(m); !strings.Contains(s, "Quit?") {
		t.Fatalf("the quit question is hidden by an error: %q", s)
	}
}

// /export names a format and maybe a path, and says where it wrote;
// /compact waits for the task, and says when it is done or why not.
func TestExportAndCompactCommands(t *testing.T) {
	f := newFake(answeredSession()...)
	m := newModel(t, f, "dark", 120, 40)
	typed(t, m, "/export md")
	typed(t, m, "/export json /tmp/all.json")
	if len(f.exported) != 2 || f.exported[0] != [2]string{"md", ""} || f.exported[1] != [2]string{"json", "/tmp/all.json"} {
		t.Fatalf("exported %q", f.exported)
	}
	if m.notice != "exported to /tmp/x.json" {
		t.Fatalf("notice %q, want where the driver wrote", m.notice)
	}
	for _, bad := range []string{"/export", "/export pdf", "/export md a b"} {
		typed(t, m, bad)
		if len(f.exported) != 2 || m.notice != "usage: /export md|json [PATH]" {
			t.Fatalf("%s: exported %q, notice %q", bad, f.exported, m.notice)
		}
	}

	m.running = true
	typed(t, m, "/compact")
	if f.compacted != 0 || m.notice != "the agent is working; /compact after it is done" {
		t.Fatalf("/compact while running: compacted %d, notice %q", f.compacted, m.notice)
	}
	m.running = false
	typed(t, m, "/compact")
	if f.compacted != 1 || m.notice != "older turns summarised" {
		t.Fatalf("/compact: compacted %d, notice %q", f.compacted, m.notice)
	}
	f.compactErr = errors.New("nothing to summarise yet")
	typed(t, m, "/compact")
	if f.compacted != 2 || m.notice != "error: nothing to summarise yet" {
		t.Fatalf("/compact that fails: notice %q", m.notice)
	}
}

// A plan replaced mid-task replaces the plan pane; the timeline still
// shows the old plan at the versions before.
func TestPlanPaneFollowsARevisedPlan(t *testing.T) {
	f := newFake(richSession()...)
	m := newModel(t, f, "dark", 120, 40)
	revised := newFake(append(richSession(), state.Event{Kind: state.PlanSet,
		Plan: []state.Step{{Text: "Write greet.go"}, {Text: "Build again"}}})...)
	f.versions, f.head, f.info = revised.versions, revised.head, revised.info
	m.Update(StateMsg{State: revised.head})
	s := screenOf(m)
	for _, gone := range []string{"Read main.go", "Run the build", "Fix the import"} {
		if strings.Contains(s, gone) {
			t.Errorf("the plan pane still shows %q", gone)
		}
	}
	if !strings.Contains(s, "· Write greet.go") || !strings.Contains(s, "· Build again") {
		t.Fatalf("the plan pane lacks the revised plan:\n%s", s)
	}
	pressKeys(t, m, "ctrl+t", "left")
	if s := screenOf(m); !strings.Contains(s, "✓ Read main.go") || strings.Contains(s, "Write greet.go") {
		t.Fatalf("the timeline at v15 shows the plan of then:\n%s", s)
	}
}

// In the branches, ↓ and Enter open another branch's path in the
// timeline, and Enter there restores its version.
func TestTimelineOpensTheChosenBranch(t *testing.T) {
	f := newFake(richSession()...)
	path := append([]Version{}, f.versions[:4]...)
	for i, ev := range []state.Event{
		{Kind: state.Interrupted, Text: "cancelled by the user"},
		{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "try another way"}}},
		{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: "Another way works."}}},
	} {
		parent := 4
		if i > 0 {
			parent = 15 + i
		}
		phase := []state.Phase{state.Idle, state.Planning, state.Done}[i]
		path = append(path, Version{Version: 16 + i, Parent: parent, Event: ev, Phase: phase})
	}
	f.paths = map[int][]Version{18: path}
	f.tree.Branches = append(f.tree.Branches, Branch{ID: 2, Fork: 4, First: 16, Tip: 18, Versions: 3})
	f.info.Versions = 18
	m := newModel(t, f, "dark", 120, 40)
	pressKeys(t, m, "ctrl+t", "b", "down", "enter")
	s := screenOf(m)
	if !strings.Contains(s, "Viewing v18 of 18 · branch 2") || !strings.Contains(s, "Another way works.") || strings.Contains(s, "undefined: greet") {
		t.Fatalf("the second branch's path is not what shows:\n%s", s)
	}
	pressKeys(t, m, "enter")
	if len(f.restored) != 1 || f.restored[0] != 18 {
		t.Fatalf("restored %v, want [18]", f.restored)
	}
}
