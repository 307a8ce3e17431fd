package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"retrace/state"
	"retrace/themes"
)

func stripANSI(s string) string { return ansi.Strip(s) }

func newModel(t testing.TB, d Driver, palette string, w, h int) *Model {
	t.Helper()
	p, err := themes.Get(palette)
	if err != nil {
		t.Fatal(err)
	}
	m := New(d, Options{Palette: p, Now: func() time.Time { return t0.Add(42 * time.Second) }})
	m.since = t0
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

func press(m *Model, keys ...string) {
	for _, k := range keys {
		m.Update(keyMsg(k))
	}
}

// keyMsg turns a key name as tea prints it into a key press.
func keyMsg(k string) tea.KeyPressMsg {
	special := map[string]tea.Key{
		"enter": {Code: tea.KeyEnter}, "esc": {Code: tea.KeyEscape}, "tab": {Code: tea.KeyTab},
		"left": {Code: tea.KeyLeft}, "right": {Code: tea.KeyRight}, "up": {Code: tea.KeyUp}, "down": {Code: tea.KeyDown},
		"home": {Code: tea.KeyHome}, "end": {Code: tea.KeyEnd}, "pgup": {Code: tea.KeyPgUp}, "backspace": {Code: tea.KeyBackspace},
		"shift+left": {Code: tea.KeyLeft, Mod: tea.ModShift}, "shift+right": {Code: tea.KeyRight, Mod: tea.ModShift},
		"alt+enter": {Code: tea.KeyEnter, Mod: tea.ModAlt},
		"ctrl+t":    {Code: 't', Mod: tea.ModCtrl}, "ctrl+s": {Code: 's', Mod: tea.ModCtrl}, "ctrl+c": {Code: 'c', Mod: tea.ModCtrl},
	}
	if k, ok := special[k]; ok {
		return tea.KeyPressMsg(k)
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg(tea.Key{Code: r, Text: k})
}

// run feeds a command's message back, as the program would (one level).
func run(m *Model, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	if msg := cmd(); msg != nil {
		if batch, ok := msg.(tea.BatchMsg); ok {
			for _, c := range batch {
				run(m, c)
			}
			return
		}
		_, next := m.Update(msg)
		_ = next
	}
}

// checkScreen fails unless the screen is exactly w×h cells.
func checkScreen(t *testing.T, out string, w, h int) {
	t.Helper()
	ls := lines(out)
	if len(ls) != h {
		t.Fatalf("%d lines, want %d", len(ls), h)
	}
	for i, l := range ls {
		if got := ansi.StringWidth(l); got != w {
			t.Fatalf("line %d is %d cells wide, want %d: %q", i+1, got, w, plain(l))
		}
	}
}

func TestScreenGoldens(t *testing.T) {
	for _, size := range [][2]int{{120, 40}, {80, 24}} {
		for _, palette := range []string{"dark", "light"} {
			t.Run(fmt.Sprintf("%dx%d_%s", size[0], size[1], palette), func(t *testing.T) {
				m := newModel(t, newFake(richSession()...), palette, size[0], size[1])
				out := m.View().Content
				checkScreen(t, out, size[0], size[1])
				golden.RequireEqual(t, []byte(out))
			})
		}
	}
}

func TestPaneGoldens(t *testing.T) {
	m := newModel(t, newFake(richSession()...), "dark", 120, 40)
	s := m.head
	panes := map[string][]string{
		"conversation": m.conv.Render(70, 20),
		"phase":        phaseLines(&m.st, s, "for 42s", 40),
		"plan":         planLines(&m.st, s, 40),
		"tools":        m.tools.lines(&m.st, s.Memory.ToolCalls, 40, 6, true),
		"notes":        noteLines(&m.st, s.Memory.Notes, 40),
		"status":       {m.statusLine()},
		"input":        m.input.Render(120, 3, "", true, ""),
	}
	for name, ls := range panes {
		t.Run(name, func(t *testing.T) { golden.RequireEqual(t, []byte(strings.Join(ls, "\n"))) })
	}
}

// Every size, however small, gives exactly the screen asked for.
func TestResizeNeverGarbles(t *testing.T) {
	m := newModel(t, newFake(richSession()...), "dark", 120, 40)
	for w := 20; w <= 200; w += 7 {
		for h := 8; h <= 60; h += 9 {
			m.Update(tea.WindowSizeMsg{Width: w, Height: h})
			checkScreen(t, m.View().Content, w, h)
		}
	}
}

func TestWideAndNarrowLayouts(t *testing.T) {
	wide := plain(newModel(t, newFake(richSession()...), "dark", 120, 40).View().Content)
	for _, want := range []string{"Conversation", "Phase", "Plan", "Tools (2)", "Notes", "✓ Read main.go", "▸ Run the build", "module greeter", "undefined: greet", "v15/15"} {
		if !strings.Contains(wide, want) {
			t.Errorf("120×40 lacks %q", want)
		}
	}
	m := newModel(t, newFake(richSession()...), "dark", 80, 24)
	narrow := plain(m.View().Content)
	if !strings.Contains(narrow, " Chat ") || !strings.Contains(narrow, " Plan ") || strings.Contains(narrow, "Notes (") {
		t.Errorf("80×24 puts the side panes behind tabs:\n%s", narrow)
	}
	press(m, "tab")
	if s := plain(m.View().Content); !strings.Contains(s, "Read main.go") {
		t.Errorf("Tab shows the plan:\n%s", s)
	}
}

func TestSendCancelAndStream(t *testing.T) {
	f := newFake(richSession()...)
	m := newModel(t, f, "dark", 120, 40)
	f.head.Phase = state.Done // resting, so a message can be sent
	m.setHead(f.head)
	for _, r := range "try again" {
		press(m, string(r))
	}
	press(m, "alt+enter")
	press(m, "x")
	_, cmd := m.Update(keyMsg("enter"))
	run(m, cmd)
	if len(f.submitted) != 1 || f.submitted[0] != "try again\nx" || !m.running {
		t.Fatalf("submitted %q running %v", f.submitted, m.running)
	}
	m.Update(DeltaMsg{Phase: state.Planning, Text: "Working on **it**"})
	if s := plain(m.View().Content); !strings.Contains(s, "Working on it") {
		t.Fatalf("streamed text not shown:\n%s", s)
	}
	press(m, "esc")
	if f.cancelled != 1 {
		t.Fatal("Esc must cancel the running task")
	}
	m.Update(TaskDoneMsg{Err: fmt.Errorf("cancelled"), Interrupted: true})
	if m.running || !strings.Contains(m.notice, "interrupted") {
		t.Fatalf("after the task: running %v notice %q", m.running, m.notice)
	}
}

func TestQuitAsksWhileRunning(t *testing.T) {
	f := newFake(richSession()...)
	m := newModel(t, f, "dark", 120, 40)
	m.running = true
	if _, cmd := m.Update(keyMsg("ctrl+c")); cmd != nil {
		t.Fatal("ctrl+c while running must ask first")
	}
	if !strings.Contains(plain(m.View().Content), "Quit?") {
		t.Fatal("the question is not shown")
	}
	press(m, "y")
	if f.cancelled != 1 || !m.quitting {
		t.Fatal("yes cancels the task and quits after it")
	}
	if _, cmd := m.Update(TaskDoneMsg{}); cmd == nil {
		t.Fatal("the program must quit once the task stopped")
	}
	idle := newModel(t, newFake(), "dark", 120, 40)
	if _, cmd := idle.Update(keyMsg("ctrl+c")); cmd == nil {
		t.Fatal("ctrl+c on an idle prompt quits")
	}
}

func TestApprovalDialog(t *testing.T) {
	f := newFake(richSession()...)
	m := newModel(t, f, "dark", 120, 40)
	m.running = true // an approval comes from a running task
	m.Update(ApprovalMsg{Tool: "write_file", Summary: "write 2 lines to greet.go (new file)", Path: "greet.go",
		Diff: "--- /dev/null\n+++ b/greet.go\n@@ -0,0 +1,2 @@\n+package main\n+func greet() string { return \"hi\" }\n"})
	later(m, approvalGuard) // the question has been read: keys answer it
	out := m.View().Content
	checkScreen(t, out, 120, 40)
	golden.RequireEqual(t, []byte(out))
	for _, want := range []string{"Approve write_file?", "greet.go", "+package main", "a approve", "s approve write_file for this session", "d deny"} {
		if !strings.Contains(plain(out), want) {
			t.Errorf("dialog lacks %q", want)
		}
	}
	_, cmd := m.Update(keyMsg("s"))
	run(m, cmd)
	if len(f.decided) != 1 || !f.decided[0].Approve || !f.decided[0].Always || m.approval != nil {
		t.Fatalf("decided %+v", f.decided)
	}
	m.Update(ApprovalMsg{Tool: "run_command", Command: "rm -rf build"})
	later(m, approvalGuard)
	_, cmd = m.Update(keyMsg("d"))
	run(m, cmd)
	if len(f.decided) != 2 || f.decided[1].Approve {
		t.Fatalf("deny: %+v", f.decided)
	}
}

func TestTimeline(t *testing.T) {
	f := newFake(richSession()...)
	m := newModel(t, f, "dark", 120, 40)
	_, cmd := m.Update(keyMsg("ctrl+t"))
	run(m, cmd)
	if m.timeline == nil || m.timeline.current().Version != 15 {
		t.Fatal("the timeline opens at the head")
	}
	press(m, "left")
	s := plain(m.View().Content)
	if !strings.Contains(s, "Viewing v14 of 15") || !strings.Contains(s, "v14: started: run go build ./... → executing") {
		t.Fatalf("one step back:\n%s", s)
	}
	// v13 approved run_command for the session; v12 only asked.
	press(m, "left")
	if s := plain(m.View().Content); !strings.Contains(s, "v13: you approved: run go build ./..., and every run_command call for the rest of the session") ||
		!strings.Contains(s, "runs without asking: run_command") {
		t.Fatalf("at v13:\n%s", s)
	}
	press(m, "left")
	if s := plain(m.View().Content); strings.Contains(s, "runs without asking") {
		t.Fatalf("at v12 nothing was approved yet:\n%s", s)
	}
	press(m, "right", "right")
	press(m, "shift+left")
	if v := m.timeline.current().Version; v != 1 {
		t.Fatalf("one turn back lands on the user message, v1; got v%d", v)
	}
	press(m, "right", "right", "right")
	if got := m.timeline.current(); got.Version != 4 || len(got.History) != 3 || got.Memory.Plan[0].Status != state.StepActive {
		t.Fatalf("v4 shows v4's state: %+v", got)
	}
	s = plain(m.View().Content)
	if strings.Contains(s, "undefined: greet") || !strings.Contains(s, "Let me read it.") {
		t.Fatalf("at v4 the panes show what was known at v4:\n%s", s)
	}
	_, cmd = m.Update(keyMsg("enter"))
	run(m, cmd)
	if len(f.restored) != 1 || f.restored[0] != 4 || m.timeline != nil {
		t.Fatalf("restore: %v, timeline still open: %v", f.restored, m.timeline != nil)
	}
	if m.running || !strings.Contains(m.notice, "restored v4") {
		t.Fatalf("a restore never runs the task by itself: running %v, notice %q", m.running, m.notice)
	}
	_, cmd = m.Update(keyMsg("ctrl+t"))
	run(m, cmd)
	press(m, "home")
	if m.timeline.current().Version != 0 {
		t.Fatal("Home goes to v0")
	}
	press(m, "esc")
	if m.timeline != nil || m.mode != modeChat {
		t.Fatal("Esc returns to the head")
	}
}

// The branches list says which message started each branch, whatever
// the width.
func TestTimelineBranches(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		f := newFake(richSession()...)
		f.tree.Branches[0].Opening = "Why does `go build` fail?"
		f.tree.Branches = append(f.tree.Branches, Branch{ID: 2, Fork: 4, First: 16, Tip: 17, Versions: 2, Opening: "try\nthe vendor dir"})
		f.tree.Branches[0].Current = true
		m := newModel(t, f, "dark", size[0], size[1])
		_, cmd := m.Update(keyMsg("ctrl+t"))
		run(m, cmd)
		press(m, "b")
		s := plain(m.View().Content)
		checkScreen(t, m.View().Content, size[0], size[1])
		if !strings.Contains(s, "branch 1") || !strings.Contains(s, "branch 2   v16..v17   from v4") {
			t.Fatalf("%v: tree:\n%s", size, s)
		}
		if !strings.Contains(s, "“Why does `go build`") || !strings.Contains(s, "“try the vendor dir”") {
			t.Fatalf("%v: the branches do not say which message started them:\n%s", size, s)
		}
	}
}

func TestSessionsDialog(t *testing.T) {
	f := newFake(richSession()...)
	m := newModel(t, f, "dark", 120, 40)
	_, cmd := m.Update(keyMsg("ctrl+s"))
	run(m, cmd)
	s := plain(m.View().Content)
	if !strings.Contains(s, "other work") || !strings.Contains(s, "in use elsewhere") {
		t.Fatalf("sessions:\n%s", s)
	}
	press(m, "o", "t", "h")
	if vis := m.sessions.visible(); len(vis) != 1 || vis[0].Title != "other work" {
		t.Fatalf("filter: %+v", vis)
	}
	_, cmd = m.Update(keyMsg("enter"))
	run(m, cmd)
	if len(f.opened) != 1 || f.opened[0] != "9b8c7d6e5f4a3b2c" {
		t.Fatalf("opened %v", f.opened)
	}
}

func TestSlashCommands(t *testing.T) {
	f := newFake(richSession()...)
	m := newModel(t, f, "dark", 120, 40)
	type_ := func(s string) {
		for _, r := range s {
			press(m, string(r))
		}
	}
	type_("/ti")
	if !strings.Contains(m.notice, "/timeline") {
		t.Fatalf("completion hint %q", m.notice)
	}
	press(m, "tab", "backspace") // completes /timeline (and a space)
	if m.input.Value() != "/timeline" {
		t.Fatalf("Tab completion gave %q", m.input.Value())
	}
	_, cmd := m.Update(keyMsg("enter"))
	run(m, cmd)
	if m.timeline == nil {
		t.Fatal("/timeline opens the timeline")
	}
	press(m, "esc")
	var saved []string
	m.opts.SaveTheme = func(name string) error { saved = append(saved, name); return nil }
	type_("/theme light")
	_, cmd = m.Update(keyMsg("enter"))
	run(m, cmd)
	if m.palette.Name != "light" || len(saved) != 1 || saved[0] != "light" {
		t.Fatalf("theme %q, saved %q", m.palette.Name, saved)
	}
	type_("/rollback 99")
	_, cmd = m.Update(keyMsg("enter"))
	run(m, cmd)
	if !strings.Contains(m.notice, "not a version") || len(f.restored) != 0 {
		t.Fatalf("bad rollback: %q %v", m.notice, f.restored)
	}
}

// Text from the model or a tool can never drive the terminal.
func TestControlSequencesAreInert(t *testing.T) {
	evil := "\x1b[2J\x1b]0;pwned\x07\x1b]52;c;ZWNobyBoaQ==\x07\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\"
	f := newFake(
		state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "hi " + evil}}},
		state.Event{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: "answer " + evil}}},
	)
	m := newModel(t, f, "dark", 120, 40)
	m.Update(DeltaMsg{Phase: state.Planning, Text: evil})
	out := m.View().Content
	for _, seq := range []string{"\x1b[2J", "\x1b]0;", "\x1b]52;", "\x1b]8;", "\x07"} {
		if strings.Contains(out, seq) {
			t.Fatalf("the screen carries %q from model text", seq)
		}
	}
	if !strings.Contains(plain(out), "^[[2J") {
		t.Fatal("the sequence is shown as text")
	}
}

func TestModelCommandUpdatesTheStatusLine(t *testing.T) {
	m := newModel(t, newFake(richSession()...), "dark", 120, 40)
	for _, r := range "/model gpt-other" {
		press(m, string(r))
	}
	_, cmd := m.Update(keyMsg("enter"))
	run(m, cmd)
	if s := plain(m.statusLine()); !strings.Contains(s, "gpt-other") {
		t.Fatalf("the status line still names the old model: %q", s)
	}
}

// Under --demo, /model says the scripted model cannot be switched, and
// the status line keeps saying "demo model".
func TestModelCommandUnderTheDemo(t *testing.T) {
	for _, size := range sizes {
		f := newFake(richSession()...)
		f.info.Demo = true
		m := newModel(t, f, "dark", size[0], size[1])
		for _, r := range "/model gpt-other" {
			press(m, string(r))
		}
		_, cmd := m.Update(keyMsg("enter"))
		run(m, cmd)
		if !strings.HasPrefix(m.notice, "the demo model cannot be switched") || strings.Contains(plain(m.statusLine()), "gpt-other") {
			t.Fatalf("%v: notice %q, status %q", size, m.notice, plain(m.statusLine()))
		}
		if got := statusText(m); !strings.Contains(got, m.notice) {
			t.Fatalf("%v: the notice is not shown whole: %q", size, got)
		}
	}
}

// The model hears the driver through one listening command at a time: a
// report is handled, and only then is the next one asked for.
func TestReportsComeThroughListen(t *testing.T) {
	f := newFake(richSession()...)
	f.reports = make(chan tea.Msg, 2)
	m := newModel(t, f, "dark", 120, 40)
	next := f.head
	next.Version++
	next.Phase = state.Done
	f.reports <- StateMsg{State: next}
	f.reports <- NoticeMsg{Text: "second report"}

	msg := m.listen()()
	if _, ok := msg.(reportMsg); !ok {
		t.Fatalf("listen returned %T", msg)
	}
	_, cmd := m.Update(msg)
	if m.head.Version != next.Version || m.head.Phase != state.Done {
		t.Fatalf("the report was not handled: head v%d %s", m.head.Version, m.head.Phase)
	}
	if m.notice == "second report" {
		t.Fatal("the second report was read before the first was handled")
	}
	if cmd == nil {
		t.Fatal("after a report the model must listen again")
	}
	run(m, cmd)
	if m.notice != "second report" {
		t.Fatalf("the next report did not come: notice %q", m.notice)
	}
	f.reports = nil // closed: Next returns nil and listening stops
	if msg := m.listen()(); msg != nil {
		t.Fatalf("a closed driver's listen returned %T", msg)
	}
}

// Before a command is approved, the dialog says how far it can reach: a
// muted line when it is sandboxed, a warning when it is not; a file
// write's dialog says nothing of commands.
func TestApprovalSaysHowCommandsRun(t *testing.T) {
	for _, c := range []struct {
		commands string
		warn     bool
	}{
		{"commands sandboxed (Landlock ABI 7): they write only in the workspace and their temp dir; network allowed", false},
		{`commands run unconfined: the sandbox is off (sandbox = "off")`, true},
	} {
		f := newFake(richSession()...)
		f.info.Commands, f.info.CommandsWarn = c.commands, c.warn
		m := newModel(t, f, "dark", 200, 40)
		m.Update(ApprovalMsg{Tool: "run_command", Command: "make"})
		want := c.commands
		if c.warn {
			want = "⚠ " + want
		}
		if s := plain(m.View().Content); !strings.Contains(s, want) {
			t.Errorf("the command's dialog lacks %q:\n%s", want, s)
		}
		m.Update(keyMsg("d"))
		m.Update(ApprovalMsg{Tool: "write_file", Path: "a.go", Diff: "+x\n"})
		if s := plain(m.View().Content); strings.Contains(s, c.commands) {
			t.Errorf("a write's dialog speaks of commands:\n%s", s)
		}
	}
}

// The selected branch is a bar across the pane, not a highlight behind
// its text only.
func TestSelectedBranchIsAWholeRow(t *testing.T) {
	f := newFake(richSession()...)
	f.tree.Branches = append(f.tree.Branches, Branch{ID: 2, Fork: 4, First: 16, Tip: 17, Versions: 2, Opening: "other"})
	m := newModel(t, f, "catppuccin", 120, 40)
	tl := &timeline{tree: f.tree}
	for _, l := range tl.treeLines(&m.st, 60, 20)[2:4] {
		if !oneStyleAcross(l, 60) {
			t.Fatalf("the selected row is not one style across the pane: %q", l)
		}
	}
}

// The selected session is a bar across the dialog, like the selected
// branch and the selected tool call.
func TestSelectedSessionIsAWholeRow(t *testing.T) {
	f := newFake(richSession()...)
	m := newModel(t, f, "catppuccin", 120, 40)
	pressKeys(t, m, "ctrl+s")
	var sel string
	for _, l := range m.sessions.lines(&m.st, 80, 20) {
		if strings.Contains(plain(l), "▸ ") {
			sel = l
		}
	}
	if !oneStyleAcross(sel, 80) {
		t.Fatalf("the selected session is not one style across the dialog: %q", sel)
	}
}

// oneStyleAcross says whether a line is one styled span width cells wide:
// one SGR sequence, the text, one reset.
func oneStyleAcross(line string, width int) bool {
	body, ok := strings.CutPrefix(line, "\x1b[")
	if ok {
		_, body, ok = strings.Cut(body, "m")
	}
	body, closed := strings.CutSuffix(body, "\x1b[m")
	return ok && closed && !strings.Contains(body, "\x1b") && ansi.StringWidth(body) == width
}
