package session

import (
	"errors"

	"retrace/agent"
	"retrace/agent/llm"
	"retrace/agent/tools"
	"retrace/state"
)

// Event is one report of what happened in the open session. The types are
// StateChanged, Delta, Retrying, Notice, ApprovalNeeded and TaskDone, and
// for a read-only session Followed and WriterGone (follow.go).
type Event interface{ event() }

// StateChanged carries the state after a checkpoint. It is always
// delivered, in order.
type StateChanged struct{ State state.State }

// Delta carries streamed text. Deltas next to each other in the queue, of
// one phase and kind, are delivered as one.
type Delta struct {
	Phase state.Phase
	Kind  llm.DeltaKind
	Text  string
}

// Retrying says a model call is tried again, and why.
type Retrying struct{ llm.Retry }

// Notice is something worth telling the person. A Passing one says what
// the task does now, and is over at the task's next checkpoint.
type Notice struct {
	Text    string
	Passing bool
}

// ApprovalNeeded asks about a gated tool call. The task waits until
// Decide answers it or the task is cancelled.
type ApprovalNeeded struct {
	Call state.ToolRequest
	// Preview is what the call would do; PreviewErr says why there is
	// none (the arguments make no sense), and the call is shown raw.
	Preview    tools.Preview
	PreviewErr error
	// Why says why a call that does not always ask does now (the
	// memory's caps, agent.ApprovalRequest); "" otherwise.
	Why string
}

// TaskDone says the running task ended. Err is nil when it is done, wraps
// agent.ErrInterrupted when it was cancelled, is an *agent.TaskError when
// it ended in the error phase, or says what kept it from checkpointing.
// State and Info are the session as the task left it.
type TaskDone struct {
	State state.State
	Info  Info
	Err   error
}

// Interrupted reports a task the person cancelled.
func (d TaskDone) Interrupted() bool { return errors.Is(d.Err, agent.ErrInterrupted) }

func (StateChanged) event()   {}
func (Delta) event()          {}
func (Retrying) event()       {}
func (Notice) event()         {}
func (ApprovalNeeded) event() {}
func (TaskDone) event()       {}
