package tools

import (
	"fmt"
	"slices"
)

// The argument lists of the tools. Each is the single source of a tool's
// JSON Schema and of the checks its arguments get.
var (
	readParams = []param{
		{"path", "string", "File to read, relative to the workspace root (or absolute inside it).", true},
		{"start_line", "integer", "First line to return, counting from 1. Default 1.", false},
		{"end_line", "integer", "Last line to return, inclusive. Default the end of the file.", false},
	}
	listParams = []param{
		{"pattern", "string", "Glob relative to path: * and ? match within a name, [...] a set, {a,b} either, ** any number of directories; end it with / for directories only. Default ** (everything).", false},
		{"path", "string", "Directory to list, relative to the workspace root. Default the root.", false},
	}
	searchParams = []param{
		{"pattern", "string", "Go RE2 regular expression, matched against each line (e.g. `func \\w+Handler` or `(?i)todo`).", true},
		{"path", "string", "File or directory to search, relative to the workspace root. Default the root.", false},
		{"glob", "string", "Only search files matching this glob: without a / it matches file names at any depth (*.go, *.{ts,tsx}); with one, paths relative to path (cmd/**/*.go).", false},
	}
	writeParams = []param{
		{"path", "string", "File to write, relative to the workspace root. Missing parent directories are created.", true},
		{"content", "string", "The complete new content of the file.", true},
	}
	editParams = []param{
		{"path", "string", "File to edit, relative to the workspace root.", true},
		{"old_text", "string", "Exact text to replace, including whitespace and indentation; it must occur exactly once in the file.", true},
		{"new_text", "string", "Text to put in its place (empty to delete it).", true},
	}
	commandParams = []param{
		{"command", "string", "Shell command, run with sh -c in the workspace root.", true},
		{"timeout_seconds", "number", "Kill the command after this many seconds.", false},
	}
	noteParams = []param{
		{"key", "string", "Short name of the note, e.g. \"test command\".", true},
		{"value", "string", "What to remember; an empty value deletes the note.", true},
	}
	rememberParams = []param{
		{"text", "string", "The fact or preference, in one or two sentences that make sense on their own, in a later session.", true},
		{"everywhere", "boolean", "True when it holds for every project (the developer's name, how they like answers); false (the default) keeps it for this project only.", false},
	}
	planParams = []param{
		{"goal", "string", "What the whole plan achieves, in one sentence.", false},
		{"steps", "array", "The steps in order, each one short sentence.", true},
		{"done", "integer", "How many of the steps, from the first, are finished; the next one is being worked on. Default 0. Call set_plan again with the same steps and a higher done as you finish them.", false},
	}
)

// commandReach tells the model, when commands are sandboxed, where they
// may write, so that it does not try elsewhere.
func (r *Registry) commandReach() string {
	if r.Sandbox().Unconfined() {
		return ""
	}
	return "It may write only in the workspace and $TMPDIR. "
}

// toolList builds the nine tools, in the order Defs lists them. The
// descriptions state the registry's actual caps, so the model knows when
// to ask for less.
func (r *Registry) toolList() []*tool {
	o := r.opts
	return []*tool{
		{def: Def{Name: "read_file", Description: fmt.Sprintf(
			"Read a text file in the workspace. Returns at most %s; for a longer file ask for a range with start_line and end_line.",
			sizeString(o.MaxReadBytes))},
			params: readParams, run: bind("read_file", readParams, r.readFile), preview: bindPreview("read_file", readParams, r.previewRead)},
		{def: Def{Name: "list_files", Description: fmt.Sprintf(
			"List files and directories matching a glob, sorted, directories ending in /, paths relative to the workspace root; .git is skipped. A path holding a control or other non-printing character, a double quote or a backslash is shown Go-quoted (\"a\\nb.txt\"), so every entry is one line; unquote it before passing it on. Returns at most %d entries.",
			o.MaxEntries)},
			params: listParams, run: bind("list_files", listParams, r.listFiles), preview: bindPreview("list_files", listParams, r.previewList)},
		{def: Def{Name: "search_text", Description: fmt.Sprintf(
			"Search text files for a regular expression and return each matching line as path:line: text, the path quoted as list_files quotes it. Binary files and .git are skipped; at most %d matches are returned.",
			o.MaxMatches)},
			params: searchParams, run: bind("search_text", searchParams, r.searchText), preview: bindPreview("search_text", searchParams, r.previewSearch)},
		{def: Def{Name: "write_file", Gated: true, Description: "Create a file or replace its whole content. Needs the person's approval; to change part of an existing file use edit_file."},
			params: writeParams, run: bind("write_file", writeParams, r.writeFile), preview: bindPreview("write_file", writeParams, r.previewWrite)},
		{def: Def{Name: "edit_file", Gated: true, Description: "Replace one exact occurrence of old_text with new_text in a file. Needs the person's approval; old_text must match exactly once, so include enough surrounding lines."},
			params: editParams, run: bind("edit_file", editParams, r.editFile), preview: bindPreview("edit_file", editParams, r.previewEdit)},
		{def: Def{Name: "run_command", Gated: true, Description: fmt.Sprintf(
			"Run a shell command in the workspace root with empty stdin and return its output and exit code; background processes do not outlive it. %sNeeds the person's approval; the timeout is %s unless you ask for another (at most %s), and output over %s is cut in the middle.",
			r.commandReach(), o.CommandTimeout, o.MaxCommandTimeout, sizeString(o.MaxOutputBytes))},
			params: commandParams, run: bind("run_command", commandParams, r.runCommand), preview: bindPreview("run_command", commandParams, r.previewCommand)},
		{def: Def{Name: "note", Description: "Remember a fact in working memory under a key, to keep it across steps; an empty value deletes the note."},
			params: noteParams, preview: bindPreview("note", noteParams, previewNote)},
		{def: Def{Name: "remember", AsksSometimes: true, Description: "Keep a fact or preference about the developer or this project for later sessions, when they ask you to remember it or state a lasting preference. Not for what only this task needs (use note). One for every project needs the person's approval."},
			params: rememberParams, preview: bindPreview("remember", rememberParams, previewRemember)},
		{def: Def{Name: "set_plan", Description: "Set or replace the plan: the ordered steps that reach the goal. Call it before starting work and again whenever the plan changes."},
			params: planParams, preview: bindPreview("set_plan", planParams, previewPlan)},
	}
}

// Gated names the tools that ask the person before they run, or before
// some of their calls do, in the order Defs lists them: what
// configuration and flags may allow.
func Gated() []string {
	var names []string
	for _, t := range (&Registry{opts: Options{}.withDefaults()}).toolList() {
		if t.def.Gated || t.def.AsksSometimes {
			names = append(names, t.def.Name)
		}
	}
	return names
}

// Asks reports whether a call of def with args waits for the person's
// approval: every call of a gated tool, and a memory kept for every
// project. A project's instructions come from whoever wrote the
// repository, and could otherwise have the model plant lasting
// instructions in every other project's prompt.
func Asks(def Def, args string) bool {
	if def.Name == "remember" {
		_, everywhere, err := ParseRemember(args)
		return err == nil && everywhere
	}
	return def.Gated
}

// IsGated reports whether name is a tool that asks first.
func IsGated(name string) bool { return slices.Contains(Gated(), name) }
