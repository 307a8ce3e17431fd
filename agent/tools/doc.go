// Package tools implements the tools the model calls: reading, listing and
// searching files, writing and editing them, and running shell commands,
// all confined to one workspace directory.
//
// # Basics
//
// A Workspace is the directory tools may touch. Every path the model sends
// goes through Workspace.Resolve, which refuses anything that would land
// outside it: absolute paths elsewhere, ".." escapes, and symlinks (at any
// depth, followed through chains) whose target is outside.
//
// A Registry holds the eight tools. Defs describes them to the model (name,
// description, JSON Schema of the arguments) and to the approval UI (Gated).
// Run executes one call with the arguments exactly as the model sent them;
// Preview says what a call would do (for a write or an edit, as a unified
// diff) without doing it, so a person can approve it.
//
// note and set_plan are described here so the model sees one list of tools,
// but they change the agent's working memory, not the workspace: the agent
// handles them with ParseNote and ParsePlan, and Run refuses them.
//
// # Errors and results
//
// Everything the model sends is untrusted. A failed call returns an error
// whose message is written for the model to read and act on (and for a
// person to read in the tool log); the sentinels in errors.go let the agent
// tell the kinds apart. A command that exits non-zero is not a failed call:
// its result says the exit code.
//
// Every result is bounded (Options): a long file, listing, search or
// command output is cut, and the result says what was cut and how to ask
// for the rest.
//
// # Caveats
//
// Confinement is checked when a path is resolved; a process that changes
// the workspace between that check and the use of the path (replacing a
// directory with a symlink) is outside what this package defends against.
// run_command is not confined at all: a command can touch anything the
// user can, which is why it is gated.
//
// This package imports nothing but the standard library and runs commands
// with sh, so it needs a Unix-like system.
package tools
