// Package state holds everything the agent knows in a session as one
// immutable value, and the only way that value changes: Apply, a pure
// function from (State, Event) to the next State.
//
// # The phase machine
//
// Every event is a transition of the phase machine. The table is data
// (Transitions), so the TUI can draw it and tests can enumerate it:
//
//	idle, done, error --user_message--> planning
//	planning, executing --plan_set--> executing
//	planning   --answered-----------> done
//	executing  --tool_started, tool_finished, assistant_message,
//	             note_set, step_status--> executing
//	executing  --approval_requested--> awaiting_approval
//	awaiting_approval --approval_given, approval_denied--> executing
//	executing  --step_completed-----> reflecting
//	executing  --tools_done---------> reflecting
//	reflecting --continue-----------> executing
//	reflecting --replan-------------> planning
//	reflecting --answered-----------> done
//	planning, executing, awaiting_approval, reflecting --failed------> error
//	planning, executing, awaiting_approval, reflecting --interrupted-> idle
//	every phase but awaiting_approval --summarized--> (same phase)
//	idle       --resumed------------> reflecting
//	idle, done, error --endpoint_set--> (same phase)
//	idle, planning, executing, awaiting_approval, reflecting, done, error
//	           --restore_started, files_restored--> (same phase)
//	planning, executing, awaiting_approval, reflecting --imported----> idle
//	idle, done, error --imported----> (same phase)
//
// A rollback that puts workspace files back records restore_started before
// it writes the first file and files_restored after the last, on the
// version it restored. While a restore is open, files_restored is the only
// event that may follow; the manifest (State.Files) is the restored
// version's throughout, since that is what the workspace holds once the
// restore is over.
//
// A session that arrives from elsewhere (an export imported, a database
// copied) is closed by an imported event, which may follow anything, an
// open restore too. It ends what the session was doing where it was
// recorded: an open restore is left (no file is written), every call
// still open is answered as not run, the tools allowed for the session
// are taken back, and a task under way or interrupted ends, so nothing
// carries it on. Nothing of the session acts until the user sends
// something new in it.
//
// A session's endpoint (model, base URL, the name of the key's variable)
// is recorded by the user_message of a task that talks to another model
// than the last, or by endpoint_set.
//
// The agent's loop follows the model's turns: planning is a task's first
// reply (an answer, or a plan with calls), executing runs the calls of a
// reply, tools_done hands their results back, and reflecting is the
// model's reply to them (continue, with its next calls, or answered).
// step_completed and replan are no longer made; they stay legal so that
// sessions kept by earlier versions replay.
//
// # Immutability
//
// Apply never writes into memory that its input shares: a State is a value
// that may be kept, compared and forked. Two states derived from one parent
// never see each other's changes. To do that Apply copies the history it
// appends to; a Builder, which owns the state it builds, appends in place,
// so replaying or advancing a long session stays linear.
//
// # Deltas
//
// An Event carries only what is new (the messages it adds, the plan it sets,
// the tool call it finishes). Anything Apply can derive, it derives: the tool
// message answering a call is built from the call's result, the final answer
// is the content of the answering message. The store keeps events, not
// states, so what an event carries is exactly what a checkpoint costs.
//
// This package imports nothing but the standard library.
package state
