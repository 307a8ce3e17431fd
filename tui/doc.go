// Package tui is retrace's terminal interface: one Bubble Tea model that
// shows, side by side, the conversation, the agent's phase, its plan, its
// tool log and its notes, and lets a person step through every version of
// a session and restore any of them.
//
// # Shape
//
// Model is the only tea.Model. Its Update is a routing table that hands
// each message to one handler; panes (conversation, phase, plan, tool log,
// notes, input, status) are plain structs with setters and a
// Render(width, height) method; dialogs (approval, sessions, help) and the
// timeline are modes of the root model. Layout is computed on resize, not
// every frame, and rendered messages are cached per width.
//
// # What it may touch
//
// The TUI never imports the agent, the store, bbolt or go-openai. It calls
// the Driver it declares (submit, cancel, decide, restore, open...) and
// receives state.State values and events as messages. Anything slow (the
// store, the model) happens in commands or in the driver's goroutines,
// never in Update.
package tui
