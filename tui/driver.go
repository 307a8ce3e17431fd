package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"retrace/state"

	"retrace/state/transcript"
)

// Driver is what the TUI asks of the session it shows. Methods that may
// take time are called from commands, never from Update. Those that start
// work (Submit, Resume) return at once; what happens then comes from
// Next, which the model calls from one command at a time, the next call
// once the message before it is handled.
type Driver interface {
	// Next waits for the session's next report and returns it: a
	// StateMsg, DeltaMsg, RetryMsg, NoticeMsg, ApprovalMsg or TaskDoneMsg;
	// for a read-only session, FollowedMsg or WriterGoneMsg.
	// It returns nil once the driver is closed.
	Next() tea.Msg
	// Current is the open session and its state at the head.
	Current() (SessionInfo, state.State)

	// Submit starts a task for a message; TaskDoneMsg ends it.
	Submit(text string) error
	// Resume carries on a task the session left unfinished.
	Resume() error
	// Cancel stops the running task; its TaskDoneMsg follows.
	Cancel()
	// Decide answers the pending ApprovalMsg.
	Decide(d Decision)

	// History returns the version tree and the versions from the root to
	// version, each with the event that made it, so the timeline can show
	// any of them.
	History(version int) (Tree, []Version, error)
	// Whole returns a session's state at version with every message: a
	// session is opened with its recent part only (state.State.Window),
	// and the pane reads the rest this way.
	Whole(session string, version int) (state.State, error)
	// Restore moves the head to version and puts the workspace files
	// back as they were there: the next message starts a new branch, and
	// the old branch stays. Files changed outside retrace make it a
	// *FilesChangedError, with nothing changed, unless how says what to
	// do with them.
	Restore(version int, how RestoreHow) (Restored, error)
	// FinishRestore completes the restore a stopped retrace left open at
	// the head (state.State.Restoring), when the user says so: opening a
	// session never writes its files.
	FinishRestore() (Restored, error)

	// FileDiffs reads both sides of each workspace change and diffs them.
	FileDiffs(changes []state.FileChange) ([]FileDiff, error)

	// Sessions lists the sessions, newest first.
	Sessions() ([]SessionInfo, error)
	// Open switches to a session (read-only if another process writes it),
	// in the workspace it recorded.
	Open(id string) error
	// OpenReadOnly switches to a session to look at only: nothing of it
	// runs, and nothing is written or restored.
	OpenReadOnly(id string) error
	// TakeOver makes this process the writer of the read-only session
	// open, after WriterGoneMsg said its writer let it go.
	TakeOver() error
	// New starts a new session and switches to it.
	New() error
	// Delete removes a session other than the open one.
	Delete(id string) error

	// SetModel changes the model for the next requests.
	SetModel(name string) error
	// Export writes the session as "md" or "json" to path (a default path
	// when empty) and returns where it went.
	Export(format, path string) (string, error)
	// Compact summarises the older turns now.
	Compact() error

	// Memories are what the agent remembers across sessions, every
	// project's; Remember keeps one for the open session's project (or
	// every project), and Forget removes one (issue 17).
	Memories() ([]state.Memory, error)
	// Remember returns the memory kept, or with known set the one that
	// already said the same there.
	Remember(text string, everywhere bool) (m state.Memory, known bool, err error)
	Forget(id string) error
	// Settings are the preferences in force, each with where it comes
	// from.
	Settings() []Setting
}

// Setting is one preference in force and where it comes from: a flag, the
// environment, the project's config, the person's config, or the default.
type Setting struct{ Name, Value, From string }

// RestoreHow says what a restore does with files changed outside
// retrace: overwrite them (Force), or leave every file and move only the
// head (KeepFiles). The zero value refuses to overwrite them.
type RestoreHow struct{ Force, KeepFiles bool }

// Restored is what a restore did to the workspace.
type Restored struct {
	Files int // files written back or removed
	// NotRestorable are files whose content at the version was never
	// kept (over the size cap, ignored); Left are files changed outside
	// retrace that were left as they were; Failed could not be written
	// (a directory in the way, a full disk).
	NotRestorable, Left, Failed []string
}

// FileDiff is one workspace change, for people to read.
type FileDiff struct {
	// Stat is one line: "created notes.md (+12)", "changed a.go (+3 −1)",
	// "deleted old.txt (−40)", "not tracked big.bin (larger than …)".
	Stat string
	// Unified is the unified diff; empty for binary files and contents
	// never kept.
	Unified string
}

// FilesChangedError is a restore refused because files changed outside
// retrace since the session last recorded them. Nothing was changed.
type FilesChangedError struct {
	Version int
	Paths   []string
}

func (e *FilesChangedError) Error() string {
	return fmt.Sprintf("%s changed outside retrace since the session last recorded them: %s",
		transcript.Count(len(e.Paths), "file"), strings.Join(e.Paths, ", "))
}

// SessionInfo describes a session.
type SessionInfo struct {
	ID, Title, Model, Workspace string
	Phase                       state.Phase
	Head, Versions              int
	Branch, Branches            int // the head's branch, and how many the session has
	Updated                     time.Time
	Window                      int  // the model's context window in tokens
	ReadOnly                    bool // another process writes it: nothing can be sent
	Busy                        bool // (in lists) another process has it open
	Demo                        bool // the model is retrace's scripted demo model
	// NoWorkspace (in lists): its workspace is not a directory here, so
	// it opens only read-only.
	NoWorkspace bool
	// Looking: opened read-only by choice, to look (ReadOnly is set too).
	Looking bool
	// Commands says how run_command's commands are confined, in one
	// line; CommandsWarn marks it as a warning (they run less confined
	// than the configuration asks, or not at all).
	Commands     string
	CommandsWarn bool
	// Project is what the session's memories are kept for: its
	// workspace's repository root.
	Project string
}

// Version is one version on a path, with the event that made it.
type Version struct {
	Version, Parent int
	Event           state.Event
	Phase           state.Phase // after the event
}

// Tree is the version tree of the open session, as its branches.
type Tree struct {
	Head     int
	Branches []Branch
}

// Branch is a chain of versions.
type Branch struct {
	ID, Fork, First, Tip, Versions int
	Current                        bool
	Opening                        string // the person's first message on it
}

// Decision answers an approval.
type Decision struct {
	Approve bool
	Always  bool // this tool, for the rest of the session
	// Project: and in every later session of the project, kept in the
	// person's config (Options.SaveProjectTool).
	Project bool
}

// Messages the driver sends.

// StateMsg carries the state after a checkpoint.
type StateMsg struct{ State state.State }

// DeltaMsg carries streamed text.
type DeltaMsg struct {
	Phase     state.Phase
	Reasoning bool
	Text      string
}

// RetryMsg says a model call is retried.
type RetryMsg struct {
	Wait        time.Duration
	Attempt, Of int
	Reason      string
	Restart     bool // the text streamed so far is void
}

// NoticeMsg is something worth telling the person. A Passing one says
// what the task does now, and goes at its next checkpoint or its end.
type NoticeMsg struct {
	Text    string
	Passing bool
}

// TaskDoneMsg says the running task ended; Err is nil when it is done.
// It carries the session as the task left it.
type TaskDoneMsg struct {
	Err         error
	Interrupted bool // the person cancelled it; Err says so too
	Session     SessionInfo
	Head        state.State
}

// ApprovalMsg asks the person about a gated tool call. Answer with
// Driver.Decide.
type ApprovalMsg struct {
	Tool    string
	Summary string // one line: "run: go test ./..."
	Command string // run_command
	Path    string // write_file, edit_file
	Diff    string // write_file, edit_file: unified diff
	Args    string // the raw arguments, when nothing better can be shown
}

// SessionChangedMsg says the open session changed (opened, new), and
// carries it.
type SessionChangedMsg struct {
	Session SessionInfo
	Head    state.State
}

// FollowedMsg carries a read-only session as the process writing it
// moved it on.
type FollowedMsg struct {
	Session SessionInfo
	Head    state.State
}

// WriterGoneMsg says the process writing the read-only session let it
// go: Driver.TakeOver makes this one its writer.
type WriterGoneMsg struct{}
