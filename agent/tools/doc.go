// Package tools implements the tools the model calls: reading, listing and
// searching files, writing and editing them, and running shell commands,
// all confined to one workspace directory.
//
// # Basics
//
// A Workspace is the directory tools may touch. Every path the model sends
// goes through Workspace.Resolve, which refuses anything that would land
// outside it: absolute paths elsewhere, ".." escapes, and symlinks (at any
// depth, followed through chains) whose target is outside. The file is
// then opened, created, renamed or walked through an os.Root held on the
// workspace, which refuses any step out at the moment it is taken; so a
// directory replaced by a symlink to outside after Resolve looked (a
// time-of-check-to-time-of-use race) makes the call fail, never escape.
//
// A Registry holds the nine tools. Defs describes them to the model (name,
// description, JSON Schema of the arguments) and to the approval UI (Gated).
// Run executes one call with the arguments exactly as the model sent them;
// Preview says what a call would do (for a write or an edit, as a unified
// diff) without doing it, so a person can approve it.
//
// note, remember and set_plan are described here so the model sees one
// list of tools, but they change the agent's working memory or the
// person's memories, not the workspace: the agent handles them with
// ParseNote, ParseRemember and ParsePlan, and Run refuses them.
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
// A listing or a search shows one path a line. A file name may hold a
// newline, so a path that holds a control or other non-printing character,
// a double quote or a backslash is shown Go-quoted; the tool descriptions
// tell the model so.
//
// # Caveats
//
// os.Root stops symlinks, not what the kernel itself joins to the tree:
// bind mounts, /proc's magic links and device files are taken as they are.
// It holds the directory, not its name: should the workspace be moved,
// the file tools follow it and run_command, run in the path, does not.
//
// A hard link is an ordinary file to it. read_file reads a file hard-linked
// from outside, since package managers (pnpm's node_modules, uv's .venv)
// fill projects with hard links to a shared store and the model must read
// them; and where the kernel protects hard links (fs.protected_hardlinks,
// on in the common distributions), whoever could make such a link could
// as well have copied the file in. A write or an edit renames a new file
// over the name, so the other links keep the old content: a store outside
// is never changed.
//
// run_command runs its command through package sandbox: on Linux with
// Landlock it may write only in the workspace, a private $TMPDIR and its
// workspace's own caches, read the system and the home directory less its
// secret places, and (in workspace-no-network mode) open no TCP
// connection; nothing it starts outlives it. Options.Reach adds places to
// close or open, and lets the person's agents through. Where the kernel
// has no Landlock, or the sandbox is off, it can touch anything the user
// can; Registry.Sandbox says which. Either way it is gated, and it never
// sees the variables Options.HideEnv names (the API key's).
//
// This package needs, besides the standard library, doublestar for globs
// and package sandbox (go-landlock) for commands; it runs commands with
// sh, so it needs a Unix-like system.
package tools
