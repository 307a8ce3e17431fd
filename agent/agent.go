package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"retrace/agent/llm"
	"retrace/agent/tokens"
	"retrace/agent/tools"
	"retrace/state"
)

// Checkpointer keeps the session's events; storage.Cursor is one.
type Checkpointer interface {
	State() state.State
	Commit(ctx context.Context, ev state.Event) (state.State, error)
}

// Model streams replies; *llm.Client is one.
type Model interface {
	Stream(ctx context.Context, req llm.Request, obs llm.Observer) (llm.Turn, error)
	Model() string
}

// Toolbox runs tools; *tools.Registry is one.
type Toolbox interface {
	Defs() []tools.Def
	Def(name string) (tools.Def, bool)
	Run(ctx context.Context, name, args string) (string, error)
}

// Approver decides whether a gated tool call may run.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (Decision, error)
}

// ApprovalRequest is a gated call waiting for a decision.
type ApprovalRequest struct {
	Call state.ToolRequest
	Def  tools.Def
	// Why says why a call that does not always ask does now (a cap
	// reached), for the user and, on a denial, the model; "" otherwise.
	Why string
}

// Decision answers an ApprovalRequest.
type Decision struct {
	Approved bool
	Always   bool   // approve this tool for the rest of the session
	Reason   string // told to the model on a denial
}

// Observer is told what happens. State is called after every checkpoint
// and must not be dropped; Delta (streamed text) may be coalesced. Every
// method is called from the agent's goroutine and must not block for long.
type Observer interface {
	State(s state.State)
	Delta(phase state.Phase, kind llm.DeltaKind, text string)
	Retry(r llm.Retry)
	Notice(text string)
	// Working says what the task does now, until its next checkpoint
	// (summarising older turns): a screen drops the line then, where a
	// Notice stays.
	Working(text string)
}

// Options tune the agent.
type Options struct {
	// MaxIterations bounds the model calls of one task. Default 20.
	MaxIterations int
	// ContextWindow is the model's window in tokens; 0 asks tokens.Window.
	ContextWindow int
	// Workspace is named in the system prompt.
	Workspace string
	// Allowed lists gated tools that run without asking, from the
	// configuration. Tools the person allows for the session are kept in
	// the state instead.
	Allowed []string
	// RestartOK lets a model call that fails after output began start over
	// (the caller can take back text it showed).
	RestartOK bool
	// Endpoint is the model the agent talks to, as the session records
	// it: a task that begins with another one records it first.
	Endpoint state.Endpoint
	// Files records what each tool call changes in the workspace, for its
	// checkpoint to carry; nil records nothing.
	Files Recorder
	// Secret scrubs the API key from tools' results: a result that quotes
	// it (read_file of a .env) is kept with the key replaced, so it reaches
	// neither the store nor the model.
	Secret llm.Scrub
	// Briefer tells each task the project's instructions and what the
	// person asked to be remembered; nil tells nothing.
	Briefer Briefer
	// Foreign reports a session recorded elsewhere that arrived by an
	// import or a copy: its conversation, the system prompt too, may be
	// someone else's words, which must not plant lasting instructions in
	// this user's project, so its remember calls ask, as those for every
	// project do. It is asked only when the model calls remember; nil
	// reports none.
	Foreign func() bool
}

// Recorder finds what a tool call changed in the workspace. Start is
// called just before the call runs; the function it returns, called just
// after, gives every file the call created, changed or deleted, and the
// contents those changes refer to. It returns an error wrapping
// ErrContentsNotKept when it listed every change but left some contents
// out (a command that changed more than its budget of files or bytes).
type Recorder interface {
	Start(ctx context.Context, name, args string) (func(context.Context) ([]state.FileChange, []state.Blob, error), error)
}

// ErrContentsNotKept is what a Recorder's changes wrap when every change
// is listed but not every content kept: the changes are recorded, and the
// tool result and a notice say what a rollback cannot put back.
var ErrContentsNotKept = errors.New("contents not kept")

// Agent runs the tasks of one session.
type Agent struct {
	cp      Checkpointer
	model   Model
	tools   Toolbox
	approve Approver
	obs     Observer
	opts    Options
	allowed map[string]bool
	count   *tokens.Counter
	// counts are the token counts of History[i], filled as needed. An
	// agent works on one session's line of states, which only grow, so
	// the window they start at stays where it is.
	counts []int
	window int
	// here is what this process saw of the task's calls (see askAgain).
	here consent
}

// ErrInterrupted is returned when a task was cancelled; the session is idle
// and its state says so.
var ErrInterrupted = errors.New("interrupted")

// ErrBusy is returned by Send while a task is under way.
var ErrBusy = errors.New("a task is under way")

// ErrEmptyMessage is returned by Send for a message that is empty or only
// white space: there is nothing to work on, and strict servers refuse a
// user message without content, so every later request of the session
// would fail too.
var ErrEmptyMessage = errors.New("the message is empty")

// ErrMessageTooLong is returned by Send for a message over
// state.MaxMessage.
var ErrMessageTooLong = fmt.Errorf("the message is over %d KiB, the most retrace sends; put the text in a file in the workspace and ask for it to be read", state.MaxMessage>>10)

// New returns an agent for the session cp holds.
func New(cp Checkpointer, model Model, tb Toolbox, approve Approver, obs Observer, opts Options) *Agent {
	if opts.MaxIterations <= 0 {
		opts.MaxIterations = 20
	}
	a := &Agent{cp: cp, model: model, tools: tb, approve: approve, obs: obs, opts: opts,
		allowed: map[string]bool{}, count: tokens.NewCounter(model.Model())}
	for _, name := range opts.Allowed {
		a.allowed[name] = true
	}
	a.window = tokens.Window(model.Model(), opts.ContextWindow)
	return a
}

// State is the session's current state.
func (a *Agent) State() state.State { return a.cp.State() }

// Send starts a task for a person's message and runs it to done, error or
// interruption. It returns the final state; the error is nil for done,
// a *TaskError for the error phase, ErrInterrupted, or whatever stopped
// the agent from keeping a checkpoint.
func (a *Agent) Send(ctx context.Context, text string) (state.State, error) {
	s := a.cp.State()
	if s.Phase.Active() {
		return s, fmt.Errorf("%w (phase %s): resume it or cancel it first", ErrBusy, s.Phase)
	}
	if strings.TrimSpace(text) == "" {
		return s, ErrEmptyMessage
	}
	if len(text) > state.MaxMessage {
		return s, ErrMessageTooLong
	}
	a.here = consent{}
	first := s.HistoryLen() == 0
	brief, instructions, err := a.briefing(ctx, first)
	if err != nil {
		return s, err
	}
	msgs := []state.Message{{Role: state.RoleUser, Content: text}}
	if first {
		prompt := systemPrompt(a.opts.Workspace)
		if instructions != "" {
			prompt += "\n\n" + instructions
		}
		msgs = append([]state.Message{{Role: state.RoleSystem, Content: prompt}}, msgs...)
	}
	ev := state.Event{Kind: state.UserMessage, Messages: msgs, Briefing: brief}
	if ep := a.opts.Endpoint; ep.Model != "" && ep != s.Endpoint {
		ev.Endpoint = &ep // the task talks to another model: the session records it
	}
	if _, err := a.commit(ctx, ev); err != nil {
		return a.cp.State(), err
	}
	return a.loop(ctx)
}

// Resume carries on a task that stopped midway: after a crash or a quit
// (its phase is still active), or after it was interrupted (a resumed
// event takes it up again, and the model is asked to go on). A tool call
// that was running at a crash is recorded as interrupted and not run
// again; one approved before the stop, or a remember call left open, is
// asked about again. Resuming a session at rest, with no task left
// unfinished, does nothing.
func (a *Agent) Resume(ctx context.Context) (state.State, error) {
	a.here = inheriting(a.cp.State())
	if a.cp.State().Unfinished() {
		if _, err := a.commit(ctx, state.Event{Kind: state.Resumed}); err != nil {
			var ce *commitError
			if errors.As(err, &ce) {
				return a.cp.State(), ce.err
			}
			return a.cp.State(), err
		}
	}
	return a.loop(ctx)
}

// TaskError is a task that ended in the error phase.
type TaskError struct{ Message string }

func (e *TaskError) Error() string { return e.Message }

// loop does what each phase calls for until the task rests.
func (a *Agent) loop(ctx context.Context) (state.State, error) {
	for {
		s := a.cp.State()
		var err error
		switch s.Phase {
		case state.Idle, state.Done:
			return s, nil
		case state.Error:
			return s, &TaskError{Message: s.ErrorMessage}
		case state.Planning:
			err = a.plan(ctx)
		case state.Executing:
			err = a.execute(ctx)
		case state.AwaitingApproval:
			err = a.awaitApproval(ctx)
		case state.Reflecting:
			err = a.reflect(ctx)
		}
		if err != nil {
			return a.stop(ctx, err)
		}
	}
}

// stop ends a task that cannot go on: cancelled (interrupted), or failed
// (the error phase, with what went wrong). An error keeping a checkpoint
// ends it as it is: there is nowhere to record anything.
func (a *Agent) stop(ctx context.Context, err error) (state.State, error) {
	var ce *commitError
	if errors.As(err, &ce) && !ce.cancelled {
		return a.cp.State(), ce.err
	}
	// The task's context may be cancelled; the record of why it stopped
	// must still be kept.
	keep := context.WithoutCancel(ctx)
	partial := partialOf(err)
	if ctx.Err() != nil || isCanceled(err) {
		ev := state.Event{Kind: state.Interrupted, Text: "cancelled by the user"}
		if partial != "" {
			ev.Messages = []state.Message{{Role: state.RoleAssistant, Content: partial + "\n\n[interrupted]"}}
		}
		if _, cerr := a.commit(keep, ev); cerr != nil {
			return a.cp.State(), cerr
		}
		return a.cp.State(), ErrInterrupted
	}
	msg := err.Error()
	ev := state.Event{Kind: state.Failed, Text: msg}
	if partial != "" {
		ev.Messages = []state.Message{{Role: state.RoleAssistant, Content: partial + "\n\n[cut off: " + msg + "]"}}
	}
	if _, cerr := a.commit(keep, ev); cerr != nil {
		return a.cp.State(), cerr
	}
	return a.cp.State(), &TaskError{Message: msg}
}

// commitError marks a failure to keep a checkpoint: the task stops without
// trying to record anything else, unless the checkpoint was refused
// because the task was cancelled meanwhile: then the interrupted event is
// kept, with what the model had said in the event that was not.
type commitError struct {
	err       error
	cancelled bool
	partial   string
}

func (e *commitError) Error() string { return e.err.Error() }
func (e *commitError) Unwrap() error { return e.err }

// commit keeps an event and tells the observer.
func (a *Agent) commit(ctx context.Context, ev state.Event) (state.State, error) {
	if ev.At.IsZero() {
		ev.At = time.Now()
	}
	s, err := a.cp.Commit(ctx, ev)
	if err != nil {
		ce := &commitError{err: fmt.Errorf("keep %s checkpoint: %w", ev.Kind, err), cancelled: ctx.Err() != nil}
		for _, m := range ev.Messages {
			if m.Role == state.RoleAssistant {
				ce.partial = m.Content
			}
		}
		return s, ce
	}
	a.obs.State(s)
	return s, nil
}

func isCanceled(err error) bool {
	var le *llm.Error
	return errors.Is(err, context.Canceled) || (errors.As(err, &le) && le.Kind == llm.KindCanceled)
}

// partialOf is the text that streamed before a model call failed, or that
// a checkpoint refused on cancellation would have kept.
func partialOf(err error) string {
	var le *llm.Error
	if errors.As(err, &le) {
		return le.Partial.Content
	}
	var ce *commitError
	if errors.As(err, &ce) {
		return ce.partial
	}
	return ""
}

// Interrupt records that the unfinished task at the head will not go on:
// a person restored a mid-task version and wrote something new instead.
// At rest it does nothing.
func (a *Agent) Interrupt(ctx context.Context, reason string) error {
	if !a.cp.State().Phase.Active() {
		return nil
	}
	_, err := a.commit(ctx, state.Event{Kind: state.Interrupted, Text: reason})
	var ce *commitError
	if errors.As(err, &ce) {
		return ce.err
	}
	return err
}
