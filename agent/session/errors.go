package session

import "errors"

var (
	// ErrRunning: a task (or a compaction) has the session; it must end,
	// or be cancelled, first.
	ErrRunning = errors.New("a task is running; cancel it first")
	// ErrReadOnly: another retrace process writes the session, so this one
	// can only look.
	ErrReadOnly = errors.New("read-only: another retrace process writes this session")
	// ErrNoSession: no session is open yet.
	ErrNoSession = errors.New("no session is open")
	// ErrDraft: the open session is new and holds no version yet; its
	// first message writes it.
	ErrDraft = errors.New("the new session has no versions yet: send its first message")
	// ErrOpenSession: the session to delete is the open one.
	ErrOpenSession = errors.New("this session is open; open another one first")
	// ErrEmptyMessage: there is nothing to send.
	ErrEmptyMessage = errors.New("the message is empty")
	// ErrNoKey: the session's endpoint needs an API key and none is set;
	// the error says which variable to set.
	ErrNoKey = errors.New("no API key")
	// ErrNoWorkspace: the session's recorded workspace is not a directory
	// on this machine, so nothing of it can run or be restored here; it
	// can still be opened read-only, to look.
	ErrNoWorkspace = errors.New("the session's workspace cannot be opened")
	// ErrClosed: the controller was closed.
	ErrClosed = errors.New("the session controller is closed")
)
