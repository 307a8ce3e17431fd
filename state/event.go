package state

import (
	"fmt"
	"time"
)

// EventKind names what happened. Its wire name is what the store keeps and
// what the timeline shows.
type EventKind uint8

// The event kinds. Zero is deliberately not a kind, so a forgotten Kind is an
// error rather than a user message.
const (
	_ EventKind = iota
	UserMessage
	PlanSet
	Answered
	ToolStarted
	ToolFinished
	AssistantMessage
	NoteSet
	StepStatus
	ApprovalRequested
	ApprovalGiven
	ApprovalDenied
	StepCompleted
	Continue
	Replan
	Failed
	Interrupted
	Summarized
	ToolsDone
	Resumed
	EndpointSet
	RestoreStarted
	FilesRestored
	Imported
)

// EventKinds lists every kind, in the order of the constants.
var EventKinds = []EventKind{
	UserMessage, PlanSet, Answered, ToolStarted, ToolFinished, AssistantMessage,
	NoteSet, StepStatus, ApprovalRequested, ApprovalGiven, ApprovalDenied,
	StepCompleted, Continue, Replan, Failed, Interrupted, Summarized,
	ToolsDone, Resumed, EndpointSet, RestoreStarted, FilesRestored, Imported,
}

var eventNames = [...]string{
	UserMessage:       "user_message",
	PlanSet:           "plan_set",
	Answered:          "answered",
	ToolStarted:       "tool_started",
	ToolFinished:      "tool_finished",
	AssistantMessage:  "assistant_message",
	NoteSet:           "note_set",
	StepStatus:        "step_status",
	ApprovalRequested: "approval_requested",
	ApprovalGiven:     "approval_given",
	ApprovalDenied:    "approval_denied",
	StepCompleted:     "step_completed",
	Continue:          "continue",
	Replan:            "replan",
	Failed:            "failed",
	Interrupted:       "interrupted",
	Summarized:        "summarized",
	ToolsDone:         "tools_done",
	Resumed:           "resumed",
	EndpointSet:       "endpoint_set",
	RestoreStarted:    "restore_started",
	FilesRestored:     "files_restored",
	Imported:          "imported",
}

// String returns the kind's wire name.
func (k EventKind) String() string {
	if int(k) < len(eventNames) && eventNames[k] != "" {
		return eventNames[k]
	}
	return fmt.Sprintf("event(%d)", uint8(k))
}

// ParseEventKind returns the kind with the given wire name.
func ParseEventKind(name string) (EventKind, error) {
	for i, n := range eventNames {
		if n != "" && n == name {
			return EventKind(i), nil
		}
	}
	return 0, fmt.Errorf("unknown event kind %q", name)
}

// MarshalText encodes the kind as its wire name.
func (k EventKind) MarshalText() ([]byte, error) {
	if int(k) >= len(eventNames) || eventNames[k] == "" {
		return nil, fmt.Errorf("unknown event kind %d", uint8(k))
	}
	return []byte(k.String()), nil
}

// UnmarshalText decodes a wire name; an unknown name is an error.
func (k *EventKind) UnmarshalText(b []byte) error {
	v, err := ParseEventKind(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// Event is one transition's delta: what is new, nothing that is already
// known. Which fields an event uses depends on its kind:
//
//	user_message       Messages (at least one user message; a system message may precede it), Endpoint (when the task talks to another model), Briefing (the instruction files and memories the task is told)
//	assistant_message  Messages (assistant, optionally with tool calls), Usage
//	plan_set           Plan, Goal (optional), Messages (optional); in executing it revises the plan
//	answered           Messages (ending with the assistant's answer), Usage
//	tool_started       Tool.ID (a call the assistant requested)
//	tool_finished      Tool.ID, Tool.Result or Tool.Error, Tool.DurationMS, Files (what the call changed in the workspace)
//	note_set           NoteKey, NoteValue (empty deletes the note)
//	step_status        Step, Status
//	step_completed     Step (marked done), Messages (optional)
//	approval_*         Tool.ID (the call waiting for approval); Text (reason, optional)
//	approval_given     Always (optional): the call's tool runs without asking for the rest of the session
//	continue           Messages (optional): the model's reply to tool results, with the calls it makes next
//	replan             Messages (optional)
//	failed             Text (what went wrong), Messages (optional)
//	interrupted        Text (why, optional), Messages (what streamed so far)
//	summarized         Text (the new summary), Through (how many history messages it covers)
//	tools_done         nothing: every call of the model's reply has its result
//	resumed            nothing: an interrupted task goes on
//	endpoint_set       Endpoint: the model and where it is served, for this session's next requests
//	restore_started    From (the version whose files the workspace held), Files (each path's content there and here): the workspace is being put back
//	files_restored     Text (what the restore did), Files (the paths it could not restore, optional): the restore is over
//	imported           Text (where the session came from, optional): it came from another database or an export, and is closed (see the package documentation)
//
// Every kind may carry Usage, the tokens spent to produce it.
type Event struct {
	Kind      EventKind    `json:"kind"`
	At        time.Time    `json:"at"`
	Messages  []Message    `json:"messages,omitempty"`
	Goal      string       `json:"goal,omitempty"`
	Plan      []Step       `json:"plan,omitempty"`
	Step      int          `json:"step,omitempty"`
	Status    StepState    `json:"status,omitempty"`
	Tool      *ToolCall    `json:"tool,omitempty"`
	NoteKey   string       `json:"note_key,omitempty"`
	NoteValue string       `json:"note_value,omitempty"`
	Text      string       `json:"text,omitempty"`
	Through   int          `json:"through,omitempty"`
	Always    bool         `json:"always,omitempty"`
	Endpoint  *Endpoint    `json:"endpoint,omitempty"`
	Files     []FileChange `json:"files,omitempty"`
	From      int          `json:"from,omitempty"`
	Usage     Usage        `json:"usage,omitzero"`
	Briefing  *Briefing    `json:"briefing,omitempty"`
	// Arrival is the number an imported event gives the session's
	// arrival here (see State.Arrival).
	Arrival int `json:"arrival,omitempty"`
	// Blobs are the contents Files refer to, on their way to the store,
	// which keeps those it does not have yet in the checkpoint's
	// transaction. They are not part of the event: a stored event never
	// has them.
	Blobs []Blob `json:"-"`
}
