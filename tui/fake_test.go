package tui

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"retrace/state"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// fakeDriver is a session in memory: a path of events, and a record of
// what the TUI asked for.
type fakeDriver struct {
	mu        sync.Mutex
	info      SessionInfo
	versions  []Version
	head      state.State
	submitted []string
	decided   []Decision
	restored  []int
	opened    []string
	looked    []string // sessions opened read-only, to look
	cancelled int
	sessions  []SessionInfo
	tree      Tree
	reports   chan tea.Msg
	whole     func(session string, version int) (state.State, error) // Whole's answer, when set

	resumed    int
	created    int
	takenOver  int
	takeErr    error // what TakeOver returns
	deleted    []string
	compacted  int
	compactErr error // what Compact returns
	memories   []state.Memory
	forgotten  []string
	settings   []Setting
	submitErr  error       // what Submit returns: no task starts
	openErr    error       // what Open returns
	deleteErr  error       // what Delete returns
	exported   [][2]string // format, path
	// paths are the versions of other branches, by tip: History of a
	// version in none of them is the head's path cut there.
	paths map[int][]Version
	// changedOutside are the files a restore finds changed outside
	// retrace: a restore that neither forces nor keeps the files is
	// refused for them.
	changedOutside []string
	hows           []RestoreHow // how each restore was asked for
	diffed         [][]state.FileChange
	finished       int // restores left open that FinishRestore finished
}

// newFake builds a session from events; its head is the last.
func newFake(events ...state.Event) *fakeDriver {
	f := &fakeDriver{info: SessionInfo{ID: "3f2a9c1b0d4e5f67", Title: "fix the build", Model: "gpt-test", Window: 128000}}
	b := state.NewBuilder(state.New(f.info.ID))
	for i, ev := range events {
		if ev.At.IsZero() {
			ev.At = t0.Add(time.Duration(i) * time.Second)
		}
		if err := b.Apply(ev); err != nil {
			panic(err)
		}
		b.SetVersion(i+1, i)
		f.versions = append(f.versions, Version{Version: i + 1, Parent: i, Event: ev, Phase: b.Phase()})
	}
	f.head = b.State()
	f.info.Head, f.info.Versions, f.info.Phase = f.head.Version, f.head.Version, f.head.Phase
	f.tree = Tree{Head: f.head.Version, Branches: []Branch{{ID: 1, First: 1, Tip: f.head.Version, Versions: f.head.Version, Current: true}}}
	f.sessions = []SessionInfo{f.info, {ID: "9b8c7d6e5f4a3b2c", Title: "other work", Phase: state.Done, Versions: 4, Updated: t0, Busy: true}}
	return f
}

// Next hands out what a test put in reports; without them it reports
// nothing, and tests give the model the driver's messages themselves.
func (f *fakeDriver) Next() tea.Msg {
	if f.reports == nil {
		return nil
	}
	return <-f.reports
}
func (f *fakeDriver) Current() (SessionInfo, state.State) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.info, f.head
}
func (f *fakeDriver) Resume() error                    { f.mu.Lock(); f.resumed++; f.mu.Unlock(); return nil }
func (f *fakeDriver) Cancel()                          { f.mu.Lock(); f.cancelled++; f.mu.Unlock() }
func (f *fakeDriver) SetModel(string) error            { return nil }
func (f *fakeDriver) New() error                       { f.mu.Lock(); f.created++; f.mu.Unlock(); return nil }
func (f *fakeDriver) Sessions() ([]SessionInfo, error) { return f.sessions, nil }

func (f *fakeDriver) Export(format, path string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.exported = append(f.exported, [2]string{format, path})
	return "/tmp/x." + format, nil
}

func (f *fakeDriver) Compact() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.compacted++
	return f.compactErr
}

func (f *fakeDriver) Memories() ([]state.Memory, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.memories), nil
}

func (f *fakeDriver) Remember(text string, everywhere bool) (state.Memory, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := state.Memory{ID: fmt.Sprintf("mem%d", len(f.memories)+1), Text: text, CreatedAt: t0, UpdatedAt: t0}
	if !everywhere {
		m.Project = f.info.Project
	}
	if same, ok := (state.Memories{List: f.memories}).Holding(m); ok {
		return same, true, nil
	}
	f.memories = append(f.memories, m)
	return m, false, nil
}

func (f *fakeDriver) Forget(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := slices.IndexFunc(f.memories, func(m state.Memory) bool { return m.ID == id })
	if i < 0 {
		return fmt.Errorf("no memory %q", id)
	}
	f.memories = slices.Delete(f.memories, i, i+1)
	f.forgotten = append(f.forgotten, id)
	return nil
}

func (f *fakeDriver) Settings() []Setting { return f.settings }

func (f *fakeDriver) Delete(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted = append(f.deleted, id)
	return f.deleteErr
}

func (f *fakeDriver) Submit(text string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.submitted = append(f.submitted, text)
	return f.submitErr
}

func (f *fakeDriver) Decide(d Decision) { f.mu.Lock(); f.decided = append(f.decided, d); f.mu.Unlock() }

func (f *fakeDriver) Whole(session string, version int) (state.State, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.whole != nil {
		return f.whole(session, version)
	}
	return f.head, nil
}

func (f *fakeDriver) History(version int) (Tree, []Version, error) {
	if p, ok := f.paths[version]; ok {
		return f.tree, p, nil
	}
	if version > len(f.versions) {
		return Tree{}, nil, errors.New("no such version")
	}
	return f.tree, f.versions[:version], nil
}

// Restore moves the head to version v of the head's path, as a store
// would: Current then shows that version.
func (f *fakeDriver) Restore(v int, how RestoreHow) (Restored, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hows = append(f.hows, how)
	if len(f.changedOutside) > 0 && !how.Force && !how.KeepFiles {
		return Restored{}, &FilesChangedError{Version: v, Paths: f.changedOutside}
	}
	f.restored = append(f.restored, v)
	if v > len(f.versions) {
		return Restored{}, nil
	}
	b := state.NewBuilder(state.New(f.info.ID))
	for _, ver := range f.versions[:v] {
		if err := b.Apply(ver.Event); err != nil {
			return Restored{}, err
		}
		b.SetVersion(ver.Version, ver.Parent)
	}
	f.head = b.State()
	f.info.Head, f.info.Phase = f.head.Version, f.head.Phase
	if how.KeepFiles {
		return Restored{}, nil
	}
	return Restored{Files: len(f.changedOutside)}, nil
}

// FinishRestore closes the restore open at the head, as the real driver
// does once it has written its files.
func (f *fakeDriver) FinishRestore() (Restored, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.finished++
	if r := f.head.Restoring; r != nil {
		f.head.Restoring = nil
		return Restored{Files: len(r.Files)}, nil
	}
	return Restored{}, nil
}

// FileDiffs describes each change by its kind and path, with a diff
// that names them, as the real driver's would read.
func (f *fakeDriver) FileDiffs(changes []state.FileChange) ([]FileDiff, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.diffed = append(f.diffed, changes)
	out := make([]FileDiff, len(changes))
	for i, c := range changes {
		out[i] = FileDiff{Stat: changeKind(c) + " " + c.Path + " (+1 −1)",
			Unified: "--- a/" + c.Path + "\n+++ b/" + c.Path + "\n@@ -1 +1 @@\n-old\n+new\n"}
	}
	return out, nil
}

// TakeOver makes the session writable, unless takeErr says no.
func (f *fakeDriver) TakeOver() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.takenOver++
	if f.takeErr != nil {
		return f.takeErr
	}
	f.info.ReadOnly = false
	return nil
}

func (f *fakeDriver) OpenReadOnly(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.looked = append(f.looked, id)
	return f.openErr
}

func (f *fakeDriver) Open(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opened = append(f.opened, id)
	return f.openErr
}

// A session that has everything to show: a plan half done, tool calls
// finished, failed and running, notes, and an answer with a code block.
func richSession() []state.Event {
	user := func(s string) []state.Message { return []state.Message{{Role: state.RoleUser, Content: s}} }
	asst := func(s string, calls ...state.ToolRequest) []state.Message {
		return []state.Message{{Role: state.RoleAssistant, Content: s, ToolCalls: calls}}
	}
	call := func(id, name, args string) state.ToolRequest {
		return state.ToolRequest{ID: id, Name: name, Arguments: args}
	}
	done := func(id, result string, ms int64) state.Event {
		return state.Event{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: id, Result: result, DurationMS: ms}}
	}
	return []state.Event{
		{Kind: state.UserMessage, Messages: append([]state.Message{{Role: state.RoleSystem, Content: "You are retrace."}}, user("Why does `go build` fail?")...)},
		{Kind: state.PlanSet, Plan: []state.Step{{Text: "Read main.go"}, {Text: "Run the build"}, {Text: "Fix the import"}}},
		{Kind: state.StepStatus, Step: 0, Status: state.StepActive},
		{Kind: state.AssistantMessage, Messages: asst("Let me read it.", call("c1", "read_file", `{"path":"main.go"}`))},
		{Kind: state.ToolStarted, Tool: &state.ToolCall{ID: "c1"}},
		done("c1", "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(greet())\n}\n", 3),
		{Kind: state.NoteSet, NoteKey: "module", NoteValue: "greeter"},
		{Kind: state.StepCompleted, Step: 0, Messages: asst("main.go calls `greet`, which is **not defined**:\n\n```go\nfmt.Println(greet())\n```")},
		{Kind: state.Continue},
		{Kind: state.StepStatus, Step: 1, Status: state.StepActive},
		{Kind: state.AssistantMessage, Messages: asst("", call("c2", "run_command", `{"command":"go build ./..."}`))},
		{Kind: state.ApprovalRequested, Tool: &state.ToolCall{ID: "c2"}},
		{Kind: state.ApprovalGiven, Tool: &state.ToolCall{ID: "c2"}, Always: true},
		{Kind: state.ToolStarted, Tool: &state.ToolCall{ID: "c2"}},
		{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: "c2", Result: "./main.go:6:14: undefined: greet\n", Error: "exit status 1", DurationMS: 412}},
	}
}

// plain strips styling, for assertions on what a person reads.
func plain(s string) string { return stripANSI(s) }

func lines(s string) []string { return strings.Split(s, "\n") }
