package tui

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"retrace/state"
	"retrace/state/transcript/inerttest"
)

// The inertness matrix: every place the interface draws text that came
// from a model, a tool, the store or the driver, fed every class of
// hostile text (inerttest.Classes). Each path is reached through the
// Model as a person would reach it, and the whole rendered screen is
// checked: nothing a terminal would act on anywhere, and the hostile text
// shown, as its stand-ins, in the part of the screen the path draws.
// That every kind of screen is inert, those this list lacks included, is
// TestInertEveryScreen's to show (inert_screens_test.go).

const (
	matrixW, matrixH = 200, 60
	// tag goes right before the hostile text in the field a path makes
	// hostile, so the stand-ins are seen where that field is drawn.
	tag = "»"
)

// sgr is the styling the interface writes itself: lipgloss emits SGR
// sequences and nothing else. A hostile SGR that leaked raw would be
// stripped with them, and is caught as a missing stand-in instead.
var sgr = regexp.MustCompile("\x1b\\[[0-9;:]*m")

// texts are the fields of a session a path may make hostile; the others
// stay plain.
type texts struct {
	system, user, reply, reasoning, step, callID, callName string
	callArgs, result, toolErr, noteKey, noteValue, failed  string
	always                                                 bool // the call is approved for the session
}

func plainTexts() texts {
	return texts{system: "You are retrace.", user: "fix the build", reply: "Let me look.", step: "look around",
		callID: "c1", callName: "read_file", callArgs: `{"path":"main.go"}`, result: "package main",
		noteKey: "module", noteValue: "greeter"}
}

// events is a session with every field in use: a plan, a gated call
// approved and finished, a note, and a failure if there is one.
func (x texts) events() []state.Event {
	call := &state.ToolCall{ID: x.callID}
	evs := []state.Event{
		{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleSystem, Content: x.system}, {Role: state.RoleUser, Content: x.user}}},
		{Kind: state.PlanSet, Plan: []state.Step{{Text: x.step}}},
		{Kind: state.AssistantMessage, Messages: []state.Message{{Role: state.RoleAssistant, Content: x.reply, Reasoning: x.reasoning,
			ToolCalls: []state.ToolRequest{{ID: x.callID, Name: x.callName, Arguments: x.callArgs}}}}},
		{Kind: state.ApprovalRequested, Tool: call},
		{Kind: state.ApprovalGiven, Tool: call, Always: x.always},
		{Kind: state.ToolStarted, Tool: call},
		{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: x.callID, Result: x.result, Error: x.toolErr, DurationMS: 3}},
		{Kind: state.NoteSet, NoteKey: x.noteKey, NoteValue: x.noteValue},
	}
	if x.failed != "" {
		evs = append(evs, state.Event{Kind: state.Failed, Text: x.failed})
	}
	return evs
}

// session is a fake whose fields are plain but for what set changes.
func session(set func(*texts)) *fakeDriver {
	x := plainTexts()
	set(&x)
	return newFake(x.events()...)
}

// failingDriver is the fake whose calls that can fail do, with err.
type failingDriver struct {
	*fakeDriver
	err error
}

func (f failingDriver) Export(string, string) (string, error) { return "", f.err }
func (f failingDriver) Sessions() ([]SessionInfo, error)      { return nil, f.err }
func (f failingDriver) History(int) (Tree, []Version, error)  { return Tree{}, nil, f.err }

// Where on the screen a path draws. screen is the plain screen's lines.
type region func(m *Model, screen []string) string

// mainRows are the rows the panes (or a dialog) take.
func mainRows(m *Model, screen []string) []string {
	first := 0
	if m.timeline != nil && m.mode != modeTree {
		first = 2 // the timeline's banner
	}
	return screen[first : first+m.lay.mainH]
}

func conversationPane(m *Model, screen []string) string {
	var out []string
	for _, l := range mainRows(m, screen) {
		out = append(out, ansi.Cut(l, 0, m.lay.convW))
	}
	return strings.Join(out, "\n")
}

func sidePanes(m *Model, screen []string) string {
	var out []string
	for _, l := range mainRows(m, screen) {
		out = append(out, ansi.Cut(l, m.lay.convW, m.width))
	}
	return strings.Join(out, "\n")
}

func mainArea(m *Model, screen []string) string { return strings.Join(mainRows(m, screen), "\n") }

func statusLine(_ *Model, screen []string) string { return screen[len(screen)-1] }

func timelineChange(_ *Model, screen []string) string { return screen[1] }

// matrixPath is one place the interface draws outside text.
type matrixPath struct {
	name string
	// open builds the model with h in the path's field and brings the
	// path onto the screen.
	open  func(t *testing.T, h string) *Model
	where region
	// room is how many cells of the field the path shows (it clips to
	// one line); 0 is all of it, -1 none that can be required (an id
	// shown by its first 8 bytes).
	room int
}

func openModel(t *testing.T, d Driver) *Model {
	return newModel(t, d, "dark", matrixW, matrixH)
}

func typeLine(m *Model, line string) {
	for _, r := range line {
		press(m, string(r))
	}
	_, cmd := m.Update(keyMsg("enter"))
	run(m, cmd)
}

func ctrl(r rune) tea.KeyPressMsg { return tea.KeyPressMsg(tea.Key{Code: r, Mod: tea.ModCtrl}) }

// inSession opens the chat on a session built by set.
func inSession(set func(x *texts, h string)) func(*testing.T, string) *Model {
	return func(t *testing.T, h string) *Model {
		return openModel(t, session(func(x *texts) { set(x, h) }))
	}
}

// detailOf opens the tool detail view of the session's call.
func detailOf(set func(x *texts, h string)) func(*testing.T, string) *Model {
	return func(t *testing.T, h string) *Model {
		m := inSession(set)(t, h)
		press(m, "tab", "enter")
		if m.mode != modeToolDetail {
			t.Fatal("tab, enter did not open the tool detail")
		}
		return m
	}
}

// timelineAt opens the timeline on a session that ends with the first n
// events, so the change line describes the n-th.
func timelineAt(n int, set func(x *texts, h string)) func(*testing.T, string) *Model {
	return func(t *testing.T, h string) *Model {
		x := plainTexts()
		set(&x, h)
		m := openModel(t, newFake(x.events()[:n]...))
		_, cmd := m.Update(ctrl('t'))
		run(m, cmd)
		if m.timeline == nil {
			t.Fatalf("the timeline did not open: %q", m.notice)
		}
		return m
	}
}

// thinkingAt opens the timeline on the version of the model's reply, an
// older one than the head, with its thinking unfolded or not.
func thinkingAt(unfold bool) func(*testing.T, string) *Model {
	return func(t *testing.T, h string) *Model {
		m := inSession(func(x *texts, h string) { x.reasoning = h })(t, h)
		_, cmd := m.Update(ctrl('t'))
		run(m, cmd)
		for m.timeline != nil && m.timeline.current().Version > 3 {
			press(m, "left")
		}
		if m.timeline == nil || m.timeline.current().Version != 3 {
			t.Fatalf("the timeline does not show v3: %q", m.notice)
		}
		if unfold {
			unfoldThinking(t, m)
		}
		return m
	}
}

// unfoldThinking presses Ctrl+O, and fails unless the thinking unfolds.
func unfoldThinking(t *testing.T, m *Model) {
	t.Helper()
	m.Update(ctrl('o'))
	if !strings.Contains(plain(m.View().Content), "▾ thinking") {
		t.Fatal("Ctrl+O did not unfold the thinking")
	}
}

// withInfo opens a session whose info (title, model, id) set changes.
func withInfo(set func(info *SessionInfo, h string)) func(*testing.T, string) *Model {
	return func(t *testing.T, h string) *Model {
		f := newFake(richSession()...)
		set(&f.info, h)
		return openModel(t, f)
	}
}

// inSessionsList opens the sessions dialog with a second session whose
// info set changes.
func inSessionsList(set func(info *SessionInfo, h string)) func(*testing.T, string) *Model {
	return func(t *testing.T, h string) *Model {
		f := newFake(richSession()...)
		set(&f.sessions[1], h)
		m := openModel(t, f)
		_, cmd := m.Update(ctrl('s'))
		run(m, cmd)
		if m.mode != modeSessions {
			t.Fatal("ctrl+s did not open the sessions")
		}
		return m
	}
}

// approval shows an approval whose fields set fills.
func approval(set func(a *ApprovalMsg, h string)) func(*testing.T, string) *Model {
	return func(t *testing.T, h string) *Model {
		m := openModel(t, newFake(richSession()...))
		a := ApprovalMsg{Tool: "write_file", Summary: "write 1 line to a.go", Path: "a.go", Diff: "+package a\n"}
		set(&a, h)
		m.Update(a)
		return m
	}
}

// afterMsg shows what the driver reported.
func afterMsg(msg func(f *fakeDriver, h string) tea.Msg) func(*testing.T, string) *Model {
	return func(t *testing.T, h string) *Model {
		f := newFake(richSession()...)
		m := openModel(t, f)
		m.Update(msg(f, h))
		return m
	}
}

// failing opens the chat on a driver whose calls fail with h, then makes
// one fail with do.
func failing(do func(m *Model)) func(*testing.T, string) *Model {
	return func(t *testing.T, h string) *Model {
		m := openModel(t, failingDriver{newFake(richSession()...), errors.New(h)})
		do(m)
		return m
	}
}

func matrixPaths() []matrixPath {
	return []matrixPath{
		// The conversation.
		// The system prompt is not drawn (show and the export have it).
		{"conversation: system prompt", inSession(func(x *texts, h string) { x.system = h }), conversationPane, -1},
		{"conversation: user message", inSession(func(x *texts, h string) { x.user = h }), conversationPane, 0},
		{"conversation: assistant reply", inSession(func(x *texts, h string) { x.reply = h }), conversationPane, 0},
		{"conversation: tool call name", inSession(func(x *texts, h string) { x.callName = h }), conversationPane, 40},
		{"conversation: tool call arguments", inSession(func(x *texts, h string) { x.callArgs = h }), conversationPane, 100},
		{"conversation: tool call summary, from arguments in JSON", inSession(func(x *texts, h string) { x.callArgs = jsonArgs(h) }), conversationPane, 0},
		{"conversation: tool result", inSession(func(x *texts, h string) { x.result = h }), conversationPane, 0},
		{"conversation: tool error", inSession(func(x *texts, h string) { x.toolErr = h }), conversationPane, 0},
		{"conversation: task error", inSession(func(x *texts, h string) { x.failed = h }), conversationPane, 0},
		{"conversation: streamed reply", afterMsg(func(_ *fakeDriver, h string) tea.Msg {
			return DeltaMsg{Phase: state.Planning, Text: h}
		}), conversationPane, 0},
		{"conversation: streamed thinking, folded", afterMsg(func(_ *fakeDriver, h string) tea.Msg {
			return DeltaMsg{Phase: state.Planning, Reasoning: true, Text: h}
		}), conversationPane, 100},
		{"conversation: streamed thinking, unfolded", func(t *testing.T, h string) *Model {
			m := openModel(t, newFake(richSession()...))
			m.Update(DeltaMsg{Phase: state.Planning, Reasoning: true, Text: h})
			m.Update(ctrl('o'))
			return m
		}, conversationPane, 0},

		{"conversation: kept thinking, folded", inSession(func(x *texts, h string) { x.reasoning = h }), conversationPane, 60},
		{"conversation: kept thinking, unfolded", func(t *testing.T, h string) *Model {
			m := inSession(func(x *texts, h string) { x.reasoning = h })(t, h)
			unfoldThinking(t, m)
			return m
		}, conversationPane, 0},
		{"conversation at a version: kept thinking, folded", thinkingAt(false), conversationPane, 60},
		{"conversation at a version: kept thinking, unfolded", thinkingAt(true), conversationPane, 0},

		// The side panes.
		{"plan: step", inSession(func(x *texts, h string) { x.step = h }), sidePanes, 0},
		{"plan: goal without a plan", func(t *testing.T, h string) *Model {
			return openModel(t, newFake(state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: h}}}))
		}, sidePanes, 40},
		{"tool log: name", inSession(func(x *texts, h string) { x.callName = h }), sidePanes, 40},
		{"tool log: the call, by its arguments", inSession(func(x *texts, h string) { x.callArgs = jsonArgs(h) }), sidePanes, 30},
		{"notes: key", inSession(func(x *texts, h string) { x.noteKey = h }), sidePanes, 25},
		{"notes: value", inSession(func(x *texts, h string) { x.noteValue = h }), sidePanes, 40},
		{"phase: error", inSession(func(x *texts, h string) { x.failed = h }), sidePanes, 0},
		{"phase: tools approved for the session", inSession(func(x *texts, h string) { x.callName, x.always = h, true }), sidePanes, 30},

		// The tool detail view.
		{"tool detail: title, tool name", detailOf(func(x *texts, h string) { x.callName = h }), mainArea, 0},
		{"tool detail: title, call id", detailOf(func(x *texts, h string) { x.callID = h }), mainArea, 0},
		{"tool detail: arguments", detailOf(func(x *texts, h string) { x.callArgs = h }), mainArea, 0},
		{"tool detail: arguments in JSON", detailOf(func(x *texts, h string) { x.callArgs = jsonArgs(h) }), mainArea, -1},
		{"tool detail: result", detailOf(func(x *texts, h string) { x.result = h }), mainArea, 0},
		{"tool detail: error", detailOf(func(x *texts, h string) { x.toolErr = h }), mainArea, 0},

		// The approval dialog.
		{"approval: tool", approval(func(a *ApprovalMsg, h string) { a.Tool = h }), conversationPane, 0},
		{"approval: summary", approval(func(a *ApprovalMsg, h string) { a.Summary = h }), conversationPane, 0},
		{"approval: command", approval(func(a *ApprovalMsg, h string) { a.Command, a.Diff = h, "" }), conversationPane, 0},
		{"approval: path", approval(func(a *ApprovalMsg, h string) { a.Path = h }), conversationPane, 0},
		{"approval: diff", approval(func(a *ApprovalMsg, h string) { a.Diff = h }), conversationPane, 0},
		{"approval: arguments", approval(func(a *ApprovalMsg, h string) { a.Diff, a.Args = "", h }), conversationPane, 0},
		{"approval: arguments in JSON", approval(func(a *ApprovalMsg, h string) { a.Diff, a.Args = "", jsonArgs(h) }), conversationPane, -1},

		// The status line.
		{"status line: session title", withInfo(func(i *SessionInfo, h string) { i.Title = h }), statusLine, 24},
		{"status line: model", withInfo(func(i *SessionInfo, h string) { i.Model = h }), statusLine, 24},
		{"status line: session id", withInfo(func(i *SessionInfo, h string) { i.ID = h + "0123456789" }), statusLine, -1},
		{"status line: notice", afterMsg(func(_ *fakeDriver, h string) tea.Msg { return NoticeMsg{Text: h} }), statusLine, 90},
		{"status line: retry reason", afterMsg(func(_ *fakeDriver, h string) tea.Msg { return RetryMsg{Attempt: 1, Of: 3, Reason: h} }), statusLine, 60},
		{"status line: task error", afterMsg(func(f *fakeDriver, h string) tea.Msg {
			return TaskDoneMsg{Err: errors.New(h), Session: f.info, Head: f.head}
		}), statusLine, 90},
		{"status line: a driver call's error", failing(func(m *Model) { typeLine(m, "/export md") }), statusLine, 90},
		{"status line: the sessions' error", failing(func(m *Model) { _, cmd := m.Update(ctrl('s')); run(m, cmd) }), statusLine, 90},
		{"status line: the timeline's error", failing(func(m *Model) { _, cmd := m.Update(ctrl('t')); run(m, cmd) }), statusLine, 90},
		{"status line: the model set", func(t *testing.T, h string) *Model {
			m := openModel(t, newFake(richSession()...))
			m.Update(modelMsg{name: h})
			return m
		}, statusLine, 24},
		{"status line: question to delete a session", func(t *testing.T, h string) *Model {
			m := inSessionsList(func(i *SessionInfo, h string) { i.Title = h })(t, h)
			press(m, "down", "d")
			if m.confirm == nil {
				t.Fatal("d did not ask")
			}
			return m
		}, statusLine, 28},
		{"status line: question to delete a session, id", func(t *testing.T, h string) *Model {
			m := inSessionsList(func(i *SessionInfo, h string) { i.ID = h + "0123456789" })(t, h)
			press(m, "down", "d")
			if m.confirm == nil {
				t.Fatal("d did not ask")
			}
			return m
		}, statusLine, -1},

		// The sessions dialog.
		{"sessions: title", inSessionsList(func(i *SessionInfo, h string) { i.Title = h }), mainArea, 0},
		{"sessions: id", inSessionsList(func(i *SessionInfo, h string) { i.ID = h + "0123456789" }), mainArea, -1},
		// A workspace shows its end, where the hostile text is.
		{"sessions: workspace", inSessionsList(func(i *SessionInfo, h string) { i.Workspace = "/w/" + h }), mainArea, -1},
		{"sessions: chosen session's workspace", func(t *testing.T, h string) *Model {
			m := inSessionsList(func(i *SessionInfo, h string) { i.Workspace = "/w/" + h })(t, h)
			press(m, "down")
			return m
		}, mainArea, -1},
		{"question to open a session of another workspace", func(t *testing.T, h string) *Model {
			m := inSessionsList(func(i *SessionInfo, h string) { i.Workspace = "/w/" + h })(t, h)
			press(m, "down", "enter")
			if m.confirm == nil {
				t.Fatal("enter did not ask")
			}
			return m
		}, statusLine, -1},
		{"conversation: the title's workspace", withInfo(func(i *SessionInfo, h string) { i.Workspace = "/w/" + h }), conversationPane, -1},

		// The timeline: the change line under the banner says what each
		// kind of event changed.
		{"timeline: you said", timelineAt(1, func(x *texts, h string) { x.user = h }), timelineChange, 0},
		{"timeline: calling tools", timelineAt(3, func(x *texts, h string) { x.callName = h }), timelineChange, 40},
		{"timeline: the call asked about, by its arguments", timelineAt(4, func(x *texts, h string) { x.callArgs = jsonArgs(h) }), timelineChange, 0},
		{"timeline: tool error", timelineAt(7, func(x *texts, h string) { x.toolErr = h }), timelineChange, 0},
		{"timeline: note key", timelineAt(8, func(x *texts, h string) { x.noteKey = h }), timelineChange, 0},
		{"timeline: note value", timelineAt(8, func(x *texts, h string) { x.noteValue = h }), timelineChange, 0},
		{"timeline: failed", timelineAt(9, func(x *texts, h string) { x.failed = h }), timelineChange, 0},
	}
}

// jsonArgs is arguments that are valid JSON holding h: control
// characters are escaped by JSON itself, C1 and bidi are not.
func jsonArgs(h string) string { return `{"path":"` + inerttest.JSONEscape(h) + `"}` }

func TestInertMatrix(t *testing.T) {
	for _, p := range matrixPaths() {
		t.Run(p.name, func(t *testing.T) {
			for _, c := range inerttest.Classes {
				t.Run(c.Name, func(t *testing.T) {
					m := p.open(t, tag+c.Text)
					v := m.View()
					checkScreen(t, v.Content, matrixW, matrixH)
					screen := sgr.ReplaceAllString(v.Content, "")
					if bad := inerttest.Problems(screen, "\n"); len(bad) != 0 {
						t.Fatalf("the screen carries %v:\n%s", bad, screen)
					}
					if bad := inerttest.Problems(v.WindowTitle, ""); len(bad) != 0 {
						t.Fatalf("the window title %q carries %v", v.WindowTitle, bad)
					}
					if p.room < 0 {
						return
					}
					where := p.where(m, lines(screen))
					if miss := inerttest.Missing(where, tag, c, p.room); len(miss) != 0 {
						t.Fatalf("%s does not show %q:\n%s", p.name, miss, where)
					}
				})
			}
		})
	}
}
