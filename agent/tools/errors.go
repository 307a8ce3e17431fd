package tools

import "errors"

// ErrOutsideWorkspace is wrapped by every error for a path that resolves
// outside the workspace. Its text reads as part of the sentence
// `path "../x" is outside the workspace /abs/root`.
var ErrOutsideWorkspace = errors.New("outside the workspace")

// ErrInvalidPath is wrapped by every error for a path that cannot name a
// file at all (empty, or containing a NUL byte).
var ErrInvalidPath = errors.New("invalid path")

// ErrUnknownTool is wrapped by the error for a call to a tool that does not
// exist; the message lists the tools that do, so the model can correct
// itself.
var ErrUnknownTool = errors.New("unknown tool")

// ErrInvalidArguments is wrapped by every error for arguments that are not
// a JSON object of the tool's schema: bad JSON, a missing required field, a
// field of the wrong type or an unknown field.
var ErrInvalidArguments = errors.New("invalid arguments")

// ErrHandledByAgent is returned (wrapped with the tool's name) when Run is
// asked to run note or set_plan, which change the agent's memory and are
// the agent's to handle.
var ErrHandledByAgent = errors.New("handled by the agent")

// ErrInterrupted is wrapped, together with the context's cause, by the
// error of a run_command that was killed because its context ended.
var ErrInterrupted = errors.New("interrupted")

// ErrToolPanic is wrapped by the error Run returns when a tool panicked. It
// should never happen; Run recovers so that one bad call fails that call
// instead of taking the whole session down.
var ErrToolPanic = errors.New("tool panicked")
