// Package agent turns a person's message into a task: a run of state
// transitions (planning, executing with tools, reflecting, done), each one
// checkpointed before the agent acts on it, so a session can always be
// resumed exactly where it stopped.
//
// # The loop
//
// The agent reads the phase of its state and does what that phase calls
// for, one method per phase:
//
//   - planning: ask the model for a plan (the set_plan tool), or let it
//     answer a simple message directly;
//   - executing: work on the active step, running the tools the model
//     calls, until the model replies without a tool call;
//   - awaiting_approval: ask the Approver about a gated tool;
//   - reflecting: go on with the next step, or, when none is left, ask the
//     model for the final answer (it may re-plan instead).
//
// Each model call is one iteration; a task that reaches the iteration limit
// ends in the error phase with the reason.
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
