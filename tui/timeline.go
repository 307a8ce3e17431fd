package tui

import (
	"errors"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"retrace/state"
	"retrace/state/transcript"
	"retrace/themes"
)

// snapEvery is how far apart the timeline keeps whole states: showing any
// version replays at most this many events from the nearest one, so a step
// costs the same at version 10,000 as at version 10.
const snapEvery = 32

// timeline is the path of versions from the root to a branch's tip, one
// of which the panes show.
type timeline struct {
	session  string
	versions []Version
	snaps    []state.State // snaps[k] is the state at position k*snapEvery
	pos      int           // position: 0 is version 0, i is versions[i-1]
	branch   int
	tree     Tree
	treeSel  int
	memoPos  int
	memo     state.State
	// diffs holds each version's file changes once read, by version.
	diffs map[int][]FileDiff
}

// newTimeline folds the path once, keeping a state every snapEvery events.
func newTimeline(session string, versions []Version, branch int) (*timeline, error) {
	t := &timeline{session: session, versions: versions, branch: branch, memoPos: -1, diffs: map[int][]FileDiff{}}
	b := state.NewBuilder(state.New(session))
	t.snaps = append(t.snaps, b.State())
	for i, v := range versions {
		if err := b.Apply(v.Event); err != nil {
			return nil, fmt.Errorf("version %d does not replay: %w", v.Version, err)
		}
		b.SetVersion(v.Version, v.Parent)
		if (i+1)%snapEvery == 0 {
			t.snaps = append(t.snaps, b.State())
		}
	}
	t.pos = len(versions)
	return t, nil
}

// current is the state at the selected position.
func (t *timeline) current() state.State {
	if t.memoPos == t.pos {
		return t.memo
	}
	k := t.pos / snapEvery
	s := t.snaps[k]
	if rest := t.versions[k*snapEvery : t.pos]; len(rest) > 0 {
		b := state.NewBuilder(s)
		for _, v := range rest {
			_ = b.Apply(v.Event) // every event replayed when the timeline was built
			b.SetVersion(v.Version, v.Parent)
		}
		s = b.State()
	}
	t.memoPos, t.memo = t.pos, s
	return s
}

// step moves by n positions.
func (t *timeline) step(n int) { t.pos = min(max(t.pos+n, 0), len(t.versions)) }

// turn moves to the previous (dir<0) or next user message.
func (t *timeline) turn(dir int) {
	for p := t.pos + dir; p >= 0 && p <= len(t.versions); p += dir {
		if p == 0 || t.versions[p-1].Event.Kind == state.UserMessage {
			t.pos = p
			return
		}
	}
	if dir > 0 {
		t.pos = len(t.versions)
	}
}

func (m *Model) openTimeline() tea.Cmd {
	m.notice = "loading the timeline…"
	return m.loadHistory(m.head.Version)
}

// loadHistory reads the version tree and the path to version, off the
// UI's goroutine.
func (m *Model) loadHistory(version int) tea.Cmd {
	return func() tea.Msg {
		tree, vs, err := m.d.History(version)
		return historyMsg{tree: tree, versions: vs, select_: version, err: err}
	}
}

func (m *Model) handleHistory(msg historyMsg) tea.Cmd {
	if msg.err != nil {
		m.notice = "timeline: " + msg.err.Error()
		return nil
	}
	branch := 0
	if m.timeline != nil {
		branch = m.timeline.branch
	}
	t, err := newTimeline(m.session.ID, msg.versions, branch)
	if err != nil {
		m.notice = "timeline: " + err.Error()
		return nil
	}
	m.timeline, m.mode, m.notice = t, modeTimeline, ""
	for i, v := range t.versions {
		if v.Version == msg.select_ {
			t.pos = i + 1
		}
	}
	m.relayout()
	m.showState(t.current())
	load := m.loadFileDiffs()
	t.tree = msg.tree
	if t.branch == 0 {
		for _, b := range msg.tree.Branches {
			if b.Current {
				t.branch = b.ID
			}
		}
	}
	for i, b := range msg.tree.Branches {
		if b.ID == t.branch {
			t.treeSel = i
		}
	}
	return load
}

func (m *Model) closeTimeline() {
	m.timeline = nil
	m.mode, m.focus = modeChat, focusInput
	m.relayout()
	m.showState(m.head)
}

func (m *Model) timelineKey(k tea.KeyPressMsg) tea.Cmd {
	t, keys := m.timeline, keymap.Timeline
	page := max(m.lay.mainH-4, 1)
	switch {
	case key.Matches(k, keys.ScrollUp):
		m.conv.Scroll(page)
		return nil
	case key.Matches(k, keys.ScrollDown):
		m.conv.Scroll(-page)
		return nil
	case key.Matches(k, keys.NextPane):
		return m.nextPane(1)
	case key.Matches(k, keys.PrevPane):
		return m.nextPane(-1)
	case key.Matches(k, keys.ToolUp, keys.ToolDown) && m.focus == focusTools:
		m.moveTool(key.Matches(k, keys.ToolUp))
		return nil
	case key.Matches(k, keys.Restore) && m.focus == focusTools:
		return m.openToolDetail()
	case key.Matches(k, keys.Back):
		t.step(-1)
	case key.Matches(k, keys.Forward):
		t.step(1)
	case key.Matches(k, keys.TurnBack):
		t.turn(-1)
	case key.Matches(k, keys.TurnForward):
		t.turn(1)
	case key.Matches(k, keys.First):
		t.pos = 0
	case key.Matches(k, keys.Last):
		t.pos = len(t.versions)
	case key.Matches(k, keys.Branches):
		m.mode = modeTree
		m.relayout()
		return nil
	case key.Matches(k, keys.Reasoning):
		m.conv.ToggleReasoning()
		return nil
	case key.Matches(k, keys.Files):
		return m.openFileDiffs()
	case key.Matches(k, keys.Restore):
		return m.restore(t.current().Version, RestoreHow{})
	case key.Matches(k, keys.Close):
		m.closeTimeline()
		return nil
	case key.Matches(k, keys.Help):
		m.openHelp()
		return nil
	default:
		return nil
	}
	m.showState(t.current())
	return m.loadFileDiffs()
}

// changedFiles is the file changes of the version the timeline shows.
func (t *timeline) changedFiles() (int, []state.FileChange) {
	if t.pos == 0 {
		return 0, nil
	}
	v := t.versions[t.pos-1]
	return v.Version, v.Event.Files
}

// loadFileDiffs reads the shown version's file changes, once, off the
// UI's goroutine: the banner shows their +/− lines when they come.
func (m *Model) loadFileDiffs() tea.Cmd {
	v, files := m.timeline.changedFiles()
	if len(files) == 0 || m.timeline.diffs[v] != nil {
		return nil
	}
	return func() tea.Msg {
		diffs, err := m.d.FileDiffs(files)
		return fileDiffsMsg{version: v, diffs: diffs, err: err}
	}
}

type fileDiffsMsg struct {
	version int
	diffs   []FileDiff
	err     error
	open    bool // show them in the detail view
}

func (m *Model) handleFileDiffs(msg fileDiffsMsg) tea.Cmd {
	if msg.err != nil {
		m.notice = "files: " + msg.err.Error()
		return nil
	}
	if m.timeline == nil {
		return nil
	}
	m.timeline.diffs[msg.version] = msg.diffs
	if msg.open {
		m.showFileDiffs(msg.version, msg.diffs)
	}
	return nil
}

// openFileDiffs shows the shown version's file changes with their diffs.
func (m *Model) openFileDiffs() tea.Cmd {
	v, files := m.timeline.changedFiles()
	if len(files) == 0 {
		m.notice = fmt.Sprintf("v%d changed no workspace file", v)
		return nil
	}
	if diffs := m.timeline.diffs[v]; diffs != nil {
		m.showFileDiffs(v, diffs)
		return nil
	}
	return func() tea.Msg {
		diffs, err := m.d.FileDiffs(files)
		return fileDiffsMsg{version: v, diffs: diffs, err: err, open: true}
	}
}

func (m *Model) showFileDiffs(v int, diffs []FileDiff) {
	var body []string
	for _, d := range diffs {
		body = append(body, inert(d.Stat))
		if d.Unified != "" {
			body = append(body, strings.Split(strings.TrimSuffix(inert(d.Unified), "\n"), "\n")...)
		}
		body = append(body, "")
	}
	k := keymap.Detail
	m.detail = detailView{title: fmt.Sprintf("files v%d changed · %s %s scroll · %s back", v,
		legendPair(k.Up, k.Down), legendPair(k.PageUp, k.PageDown), legend(k.Close)), from: modeTimeline}
	m.detail.setBody(body)
	m.mode = modeToolDetail
}

// fileSummary is the banner's line of the shown version's file changes:
// with +/− lines once read, and the kinds of change until then.
func (t *timeline) fileSummary() string {
	v, files := t.changedFiles()
	if len(files) == 0 {
		return "files: no workspace file changed here"
	}
	var parts []string
	if diffs := t.diffs[v]; diffs != nil {
		for _, d := range diffs {
			parts = append(parts, d.Stat)
		}
	} else {
		for _, f := range files {
			parts = append(parts, changeKind(f)+" "+f.Path)
		}
	}
	return "files: " + strings.Join(parts, " · ") + " (" + legend(keymap.Timeline.Files) + " diffs)"
}

// changeKind names what a change did to its path.
func changeKind(c state.FileChange) string {
	switch {
	case !c.Before.Tracked() || !c.After.Tracked():
		return "not tracked"
	case c.Before.Absent:
		return "created"
	case c.After.Absent:
		return "deleted"
	}
	return "changed"
}

// restore moves the head to a version and brings the workspace files
// back with it; the panes follow. Files changed outside retrace turn it
// into a question: overwrite them, keep them (move only the head), or
// stay.
func (m *Model) restore(v int, how RestoreHow) tea.Cmd {
	if m.running {
		m.notice = busyNotice("before a restore")
		return nil
	}
	if m.session.ReadOnly {
		m.notice = m.readOnlyWhy(false)
		return nil
	}
	return func() tea.Msg {
		done, err := m.d.Restore(v, how)
		if err != nil {
			var changed *FilesChangedError
			if errors.As(err, &changed) {
				return filesChangedMsg{version: v, paths: changed.Paths}
			}
			return errMsg{err}
		}
		info, head := m.d.Current()
		return restoredMsg{version: v, session: info, head: head, files: done, kept: how.KeepFiles}
	}
}

// filesChangedMsg says a restore found files changed outside retrace and
// changed nothing.
type filesChangedMsg struct {
	version int
	paths   []string
}

func (m *Model) handleFilesChanged(msg filesChangedMsg) tea.Cmd {
	return m.askGuarded(confirmation{
		question: fmt.Sprintf("%s changed outside retrace: %s. Overwrite with v%d's? y yes · k keep the files, move only the head · n cancel",
			transcript.Count(len(msg.paths), "file"), firstFew(msg.paths, 3), msg.version),
		yes:  func() tea.Cmd { return m.restore(msg.version, RestoreHow{Force: true}) },
		keep: func() tea.Cmd { return m.restore(msg.version, RestoreHow{KeepFiles: true}) },
	})
}

// restoredMsg says the head moved to version. Unlike opening a session, a
// restore never carries on a task by itself: the person went back to
// decide again.
type restoredMsg struct {
	version int
	session SessionInfo
	head    state.State
	files   Restored
	kept    bool // the files were left as they were
}

func (m *Model) handleRestored(msg restoredMsg) tea.Cmd {
	m.timeline = nil
	m.mode = modeChat
	m.errText = ""
	m.loadSession(msg.session, msg.head)
	m.relayout()
	files := ""
	switch f := msg.files; {
	case msg.kept:
		files = " (files left as they were)"
	case len(f.Failed) > 0:
		files = fmt.Sprintf(" and %s; could not restore: %s", transcript.Count(f.Files, "file"), firstFew(f.Failed, 3))
	case len(f.Left) > 0:
		files = fmt.Sprintf(" and %s; left as they were: %s", transcript.Count(f.Files, "file"), firstFew(f.Left, 3))
	case len(f.NotRestorable) > 0:
		files = fmt.Sprintf(" and %s; not restorable: %s", transcript.Count(f.Files, "file"), firstFew(f.NotRestorable, 3))
	case f.Files > 0:
		files = " and " + transcript.Count(f.Files, "file")
	}
	m.notice = fmt.Sprintf("restored v%d%s: the next message starts a new branch; the old one stays in the timeline", msg.version, files)
	if m.head.Phase.Active() {
		m.notice = fmt.Sprintf("restored v%d%s, in the middle of a task (%s): %s carries it on; a new message interrupts it",
			msg.version, files, m.head.Phase, legend(keymap.Chat.Retry))
	}
	return nil
}

// firstFew lists up to n paths, and how many more there are.
func firstFew(paths []string, n int) string {
	if len(paths) <= n {
		return strings.Join(paths, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(paths[:n], ", "), len(paths)-n)
}

func (m *Model) treeKey(k tea.KeyPressMsg) tea.Cmd {
	t, keys := m.timeline, keymap.Tree
	switch {
	case key.Matches(k, keys.Up):
		t.treeSel = max(t.treeSel-1, 0)
	case key.Matches(k, keys.Down):
		t.treeSel = min(t.treeSel+1, max(len(t.tree.Branches)-1, 0))
	case key.Matches(k, keys.Open):
		if len(t.tree.Branches) == 0 {
			return nil
		}
		b := t.tree.Branches[t.treeSel]
		t.branch = b.ID
		m.mode = modeTimeline
		return m.loadHistory(b.Tip)
	case key.Matches(k, keys.Close):
		m.mode = modeTimeline
		m.relayout()
	}
	return nil
}

// timelineBanner is two lines over the panes: which version is shown,
// and what it changed.
func (m *Model) timelineBanner() []string {
	t := m.timeline
	s := t.current()
	head := ""
	if s.Version == m.head.Version {
		head = " (the head)"
	}
	k := keymap.Timeline
	banner := fmt.Sprintf(" Viewing v%d of %d%s · branch %d · %s version · %s turn · %s branches · %s restore · %s back ",
		s.Version, m.session.Versions, head, t.branch, legendPair(k.Back, k.Forward), legendPair(k.TurnBack, k.TurnForward),
		legend(k.Branches), legend(k.Restore), legend(k.Close))
	change := "v0: the empty session"
	if t.pos > 0 {
		v := t.versions[t.pos-1]
		change = fmt.Sprintf("v%d: %s", v.Version, describe(v, s))
	}
	lines := []string{fit(m.st.Timeline.Banner.Render(banner), m.width), fit(m.st.Timeline.Change.Render(clip(inert(change), m.width)), m.width)}
	return append(lines, fit(m.st.Timeline.Change.Render(clip(inert(t.fileSummary()), m.width)), m.width))
}

// treeLines lists the branches, the selected one marked.
func (t *timeline) treeLines(st *themes.Styles, width, height int) []string {
	s := st.Timeline
	k := keymap.Tree
	out := []string{s.Node.Render(fmt.Sprintf("Branches: %s choose · %s opens it in the timeline · %s back",
		legendPair(k.Up, k.Down), legend(k.Open), legend(k.Close))), ""}
	for i, b := range t.tree.Branches {
		from := "the root"
		if b.Fork > 0 {
			from = fmt.Sprintf("v%d", b.Fork)
		}
		line := fmt.Sprintf("branch %d   v%d..v%d   from %s   %d versions", b.ID, b.First, b.Tip, from, b.Versions)
		style := s.Branch
		if b.Current {
			line += "   (head)"
			style = s.BranchCurrent
		}
		mark := "  "
		if i == t.treeSel {
			mark = "▸ "
			style = s.NodeSelected
		}
		// What the person said first is what tells the branches apart:
		// it gets a line of its own, so a narrow screen still shows it.
		opening := "(no message on it)"
		if b.Opening != "" {
			opening = "“" + clip(inert(transcript.Head(b.Opening, 4*width)), width-7) + "”"
		}
		// Whole rows, so the selection is a bar across the pane.
		out = append(out, style.Render(fit(mark+cut(line, width-2), width)), style.Render(fit("    "+opening, width)))
	}
	if len(out) > height {
		sel := 2 + 2*t.treeSel // the selected branch's first line
		start := min(max(sel+2-height/2, 0), len(out)-height)
		out = out[start : start+height]
	}
	return out
}
