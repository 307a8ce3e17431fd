// Package agent turns a person's message into a task: a run of state
// transitions (planning, executing with tools, reflecting, done), each one
// checkpointed before the agent acts on it, so a session can always be
// resumed exactly where it stopped.
//
// # The loop
//
// The loop follows the model's turns and adds none of its own. The agent
// reads the phase of its state and does what that phase calls for, one
// method per phase:
//
//   - planning: the task's first reply. An answer ends the task; a plan
//     (the set_plan tool), perhaps with the first calls, starts it;
//   - executing: the calls of the model's last reply run, one checkpoint
//     each; tools_done hands their results back;
//   - awaiting_approval: ask the Approver about a gated tool;
//   - reflecting: the model's reply to the results, with more calls
//     (continue) or the answer.
//
// A task of a plan, N tool rounds and an answer sends N + 2 requests.
// Plan steps move on only through the model's own calls: set_plan again,
// with done counting the finished steps; the answer closes the step the
// model was on. Every request ends with a user or tool message and never
// has two of the model's replies in a row (histories kept by earlier
// versions are joined or closed with a short "go on" to keep it so).
// Each reply is one iteration; a task that reaches the iteration limit
// ends in the error phase with the reason. A reply's thinking is kept
// with it, to be shown, and never sent back to a model.
//
// # Order, for crash safety
//
// tool_started is kept before a tool runs and tool_finished after. A session
// resumed with a started call that never finished records it as interrupted
// and tells the model, instead of running it twice. Cancellation (ctx)
// stops the model call or the tool, keeps what streamed, and checkpoints an
// interrupted event, which also answers every open tool call: the history
// stays one that strict servers accept.
//
// The agent declares what it needs (Checkpointer, Model, Toolbox, Approver,
// Observer); storage, agent/llm and agent/tools provide them, and the TUI or
// `retrace run` observe it.
package agent
