package state

import (
	"fmt"
	"time"
)

// Roles of a message in the conversation, as OpenAI-compatible APIs name them.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// State is everything the agent knows in a session at one version. It is a
// value: Apply returns a new State and never changes the one it was given.
type State struct {
	SessionID     string `json:"session_id"`
	Version       int    `json:"version"`
	ParentVersion int    `json:"parent_version"`
	Phase         Phase  `json:"phase"`
	// History is the conversation. A state loaded for going on with a long
	// session (Window, a store's Recent) holds only its recent part:
	// History[i] is then message HistoryFrom+i, and the HistoryFrom
	// messages before it are left out. Every position a State or an Event
	// names (SummaryThrough, Through) counts from the session's first
	// message all the same.
	History     []Message     `json:"history"`
	HistoryFrom int           `json:"history_from,omitempty"`
	Memory      WorkingMemory `json:"memory"`
	// Iteration counts the model's replies in the current task: a user
	// message resets it to 0 and every assistant message adds one. The
	// agent's iteration limit is checked against it, so it bounds a task
	// however it loops (a step calling tool after tool, or plan after plan).
	Iteration    int    `json:"iteration"`
	FinalAnswer  string `json:"final_answer"`
	ErrorMessage string `json:"error_message"`
	Usage        Usage  `json:"usage"`
	// Summary stands in, when talking to the model, for History[:SummaryThrough]:
	// the older turns that no longer fit the context window. History itself
	// is never shortened: every version shows what was said.
	Summary        string `json:"summary"`
	SummaryThrough int    `json:"summary_through"`
	// Endpoint is the model the session talks to, as its last
	// endpoint_set recorded it: a resumed session goes on with it.
	Endpoint Endpoint `json:"endpoint,omitzero"`
	// Files is the workspace manifest: every path the session touched on
	// the way to this version, keyed by path, with what it holds here and
	// what it held before the session first touched it.
	Files map[string]FileEntry `json:"files"`
	// Restoring is the restore under way: set by restore_started and
	// cleared by files_restored. A session found with one open was
	// stopped in the middle of putting files back.
	Restoring *Restore `json:"restoring,omitempty"`
	// Briefing is what the session was told besides the conversation:
	// the instruction files its system prompt holds, and the memories the
	// latest task was given.
	Briefing Briefing `json:"briefing,omitzero"`
	// Arrival tells the versions recorded here from those recorded
	// elsewhere: the number the imported event that brought the session
	// here gave its arrival, kept by every version after it. A version
	// whose Arrival is not the head's was recorded by someone else (or
	// before another arrival), and going back to it closes it the way an
	// import does. 0 for a session that never arrived from elsewhere.
	Arrival int `json:"arrival,omitempty"`

	// prompt is the session's system prompt when History leaves out the
	// message that holds it (see SystemPrompt).
	prompt string
	// open says where the calls still open are, so that finding them
	// costs the same at the last call of a reply as at the first (see
	// exchange).
	open exchange
}

// Restore is a restore of the workspace under way.
type Restore struct {
	From  int          `json:"from"`
	Files []FileChange `json:"files"`
}

// Endpoint names a model and where it is served. It never holds a key:
// only the name of the environment variable the key is read from.
type Endpoint struct {
	Model   string `json:"model"`
	BaseURL string `json:"base_url,omitempty"`
	KeyEnv  string `json:"key_env,omitempty"`
}

// Unfinished reports a task that was interrupted and never taken up
// again: the session rests with a goal, and neither an answer nor an
// error. A resumed event carries it on.
func (s State) Unfinished() bool {
	return s.Phase == Idle && s.Memory.CurrentGoal != "" && s.FinalAnswer == "" && s.ErrorMessage == ""
}

// Message is one entry of the conversation.
type Message struct {
	Role       string        `json:"role"`
	Content    string        `json:"content"`
	ToolCalls  []ToolRequest `json:"tool_calls,omitempty"`
	ToolCallID string        `json:"tool_call_id,omitempty"`
	Name       string        `json:"name,omitempty"`
	// Reasoning is the thinking a model streamed before its reply
	// (reasoning_content, reasoning), kept to be shown; it is never sent
	// back to a model.
	Reasoning string `json:"reasoning,omitempty"`
}

// ToolRequest is a tool call as the assistant asked for it.
type ToolRequest struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// WorkingMemory is what the agent keeps beside the conversation.
type WorkingMemory struct {
	CurrentGoal string            `json:"current_goal"`
	Plan        []Step            `json:"plan"`
	Notes       map[string]string `json:"notes"`
	ToolCalls   []ToolCall        `json:"tool_calls"`
	// ToolCallsFrom counts the calls a windowed state leaves out of
	// ToolCalls, the log's oldest (see State.Window).
	ToolCallsFrom int `json:"tool_calls_from,omitempty"`
	// AllowedTools are the gated tools the person approved for the rest of
	// the session, sorted. They live in the state, not in the process, so a
	// resumed session keeps them and a rollback to before the approval
	// takes them back.
	AllowedTools []string `json:"allowed_tools,omitempty"`
}

// Step is one step of the plan.
type Step struct {
	Text   string    `json:"text"`
	Status StepState `json:"status"`
}

// StepState is how far a plan step has come.
type StepState string

// The statuses of a plan step.
const (
	StepPending StepState = "pending"
	StepActive  StepState = "active"
	StepDone    StepState = "done"
	StepFailed  StepState = "failed"
	StepSkipped StepState = "skipped"
)

// Valid reports whether s is one of the known statuses.
func (s StepState) Valid() bool {
	switch s {
	case StepPending, StepActive, StepDone, StepFailed, StepSkipped:
		return true
	}
	return false
}

// ToolCall is one entry of the tool log: a call, and once it finished, its
// outcome. A call with a zero FinishedAt is still running (or was, when the
// process stopped).
type ToolCall struct {
	ID         string    `json:"id"`
	Name       string    `json:"name,omitempty"`
	Arguments  string    `json:"arguments,omitempty"`
	Result     string    `json:"result,omitempty"`
	Error      string    `json:"error,omitempty"`
	DurationMS int64     `json:"duration_ms,omitempty"`
	StartedAt  time.Time `json:"started_at,omitzero"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	// Approval is set only for calls that needed the person's decision.
	Approval ApprovalStatus `json:"approval,omitempty"`
}

// ApprovalStatus is where a gated tool call stands with the person.
type ApprovalStatus string

// The approval statuses of a gated call.
const (
	AwaitingDecision ApprovalStatus = "requested"
	Approved         ApprovalStatus = "approved"
	Denied           ApprovalStatus = "denied"
)

// Finished reports whether the call has an outcome.
func (c ToolCall) Finished() bool { return !c.FinishedAt.IsZero() }

// Usage counts tokens.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Add returns the sum of two usages.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		PromptTokens:     u.PromptTokens + v.PromptTokens,
		CompletionTokens: u.CompletionTokens + v.CompletionTokens,
	}
}

// Total is prompt plus completion tokens.
func (u Usage) Total() int { return u.PromptTokens + u.CompletionTokens }

// New returns the empty state of a session: idle, nothing said.
func New(sessionID string) State {
	return State{SessionID: sessionID}
}

// String gives a one-line description for logs and error messages.
func (s State) String() string {
	return fmt.Sprintf("session %s v%d (%s, %d messages)", s.SessionID, s.Version, s.Phase, s.HistoryLen())
}

// MaxMessage is the longest message a person may send, in bytes: a paste
// of a whole log must not freeze the input, and far more than this would
// not fit a model's window anyway. The interface cuts a paste to it and
// says so; Send and `retrace run` refuse a longer message.
const MaxMessage = 256 << 10
