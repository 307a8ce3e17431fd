package transcript

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"retrace/state"
)

// MaxCallSummary is the most characters a call's summary takes. The
// arguments come from a model and may be megabytes; a summary is one
// line, and whoever draws it cuts it further to the room it has.
const MaxCallSummary = 160

// Bounds on the parts of a summary, so that no one part crowds out the
// others: a long path never hides how the call ended.
const (
	maxName   = 40 // a tool's name
	maxObject = 120
	maxDetail = 60 // an error, a command's exit status
	maxNotes  = MaxCallSummary / 2
)

// CallSummary says in one line what a tool call asks for, from the
// tool's name and its JSON arguments: "read notes.txt, lines 1–100",
// "run go test ./...", "edit main.go (+12 −3)". A tool retrace does not
// know is its name and its first string argument. The text is inert and
// at most MaxCallSummary characters, whatever the model sent.
//
// The argument names are those agent/tools declares; this package reads
// them from the JSON alone, so that whoever shows a call (the interface,
// show, an export) needs nothing from the agent.
func CallSummary(name, arguments string) string {
	p := readCall(name, arguments)
	return p.line(p.verb, p.notes)
}

// CallOutcome says in one line what a tool call did, in the past, with
// how it ended and how long it took: "ran go test ./... (exit 1, 2.1 s)",
// "wrote main.go (12 lines, 3 ms)". A call without an outcome says where
// it stands: waiting for approval, denied, running. Inert and bounded as
// CallSummary is.
func CallOutcome(c state.ToolCall) string {
	p := readCall(c.Name, c.Arguments)
	with := func(note string) []string { return append(p.notes[:len(p.notes):len(p.notes)], note) }
	switch {
	case c.Approval == state.AwaitingDecision && c.Finished():
		// The question was never answered: the task was cancelled or
		// stopped while it waited.
		return p.line(p.verb, with("cancelled before it was approved"))
	case c.Approval == state.AwaitingDecision:
		return p.line(p.verb, with("waiting for approval"))
	case !c.Finished():
		return p.line(p.verb, with("running, or stopped while running"))
	case c.Approval == state.Denied:
		return p.line(p.verb, with("denied"))
	}
	notes := p.notes[:len(p.notes):len(p.notes)]
	status := ""
	if p.tool == "run_command" {
		status = commandStatus(c.Result)
	}
	switch {
	case status != "":
		notes = append(notes, status)
	case c.Error != "":
		notes = append(notes, "failed: "+clean(c.Error, maxDetail))
	}
	return p.line(p.past, append(notes, Duration(c.DurationMS)))
}

// Failure says in a few words how a finished call failed, or "" when it
// did not: a command that ran and exited non-zero, or was killed, failed
// as surely as a call that returned an error ("exit 1", "killed by
// signal 9 (killed)", "failed: no such file"). Inert and bounded.
func Failure(c state.ToolCall) string {
	if readCall(c.Name, c.Arguments).tool == "run_command" {
		if status := commandStatus(c.Result); status != "" && status != "exit 0" {
			return status
		}
	}
	if c.Error != "" {
		return "failed: " + clean(c.Error, maxDetail)
	}
	return ""
}

// Duration says how long a call took: "412 ms", "2.1 s", "1 min 5 s".
func Duration(ms int64) string {
	switch {
	case ms < 0:
		return "0 ms"
	case ms < 1000:
		return fmt.Sprintf("%d ms", ms)
	case ms < 60_000:
		return fmt.Sprintf("%.1f s", float64(ms)/1000)
	}
	return fmt.Sprintf("%d min %d s", ms/60_000, ms%60_000/1000)
}

// commandStatus is how run_command says its command ended, in the last
// line of its result ("exit code: 1", "killed: timed out after 2m0s",
// "killed by signal 9 (killed)"), shortened; "" when it says none.
func commandStatus(result string) string {
	last := strings.TrimRight(result, "\n")
	if i := strings.LastIndexByte(last, '\n'); i >= 0 {
		last = last[i+1:]
	}
	if code, ok := strings.CutPrefix(last, "exit code: "); ok {
		return "exit " + clean(code, maxDetail)
	}
	if how, ok := strings.CutPrefix(last, "killed: "); ok {
		return clean(how, maxDetail)
	}
	if strings.HasPrefix(last, "killed by signal ") {
		return clean(last, maxDetail)
	}
	return ""
}

// phrase is a call in words: the verb now and in the past, what it acts
// on, and what is said of it in parentheses.
type phrase struct {
	tool       string // the known tool it is, or ""
	verb, past string
	object     string // inert, one line
	notes      []string
}

// line is verb, object and notes in one bounded line. The notes are
// bounded first, so that cutting the object never cuts them.
func (p phrase) line(verb string, notes []string) string {
	tail := ""
	if len(notes) > 0 {
		tail = " (" + Clip(strings.Join(notes, ", "), maxNotes) + ")"
	}
	head := verb
	if p.object != "" {
		head += " " + p.object
	}
	return Clip(head, MaxCallSummary-utf8.RuneCountInString(tail)) + tail
}

// readCall reads a call's arguments the way the tool declares them. A
// call to a tool retrace does not know, or whose arguments do not fit
// the tool's declaration, is read as generic.
func readCall(name, arguments string) phrase {
	generic := phrase{verb: "call", past: "called", object: clean(name, maxName)}
	if strings.TrimSpace(arguments) == "" {
		return generic
	}
	a, ok := parseObject(arguments)
	if !ok {
		generic.object += " with arguments that are not a JSON object: " + clean(arguments, maxObject)
		return generic
	}
	if p, ok := known(name, a); ok {
		p.tool = name
		return p
	}
	if s, ok := a.firstString(); ok {
		generic.object += " " + clean(s, maxObject)
	}
	return generic
}

// known reads the arguments of retrace's own tools (agent/tools/defs.go).
func known(name string, a args) (phrase, bool) {
	if read := readers[name]; read != nil {
		return read(a)
	}
	return phrase{}, false
}

// readers read each tool's arguments; false when they do not fit the
// tool's declaration.
var readers = map[string]func(args) (phrase, bool){
	"read_file":   readFile,
	"list_files":  listFiles,
	"search_text": searchText,
	"write_file":  writeFile,
	"edit_file":   editFile,
	"run_command": runCommand,
	"note":        note,
	"set_plan":    setPlan,
}

func readFile(a args) (phrase, bool) {
	path, ok := a.str("path")
	if !ok {
		return phrase{}, false
	}
	p := phrase{verb: "read", past: "read", object: clean(path, maxObject)}
	start, hasStart := a.num("start_line")
	end, hasEnd := a.num("end_line")
	switch {
	case hasStart && hasEnd && start == end:
		p.object += ", line " + start
	case hasEnd:
		if !hasStart {
			start = "1"
		}
		p.object += ", lines " + start + "–" + end
	case hasStart:
		p.object += " from line " + start
	}
	return p, true
}

func listFiles(a args) (phrase, bool) {
	pattern, _ := a.str("pattern")
	dir, _ := a.str("path")
	p := phrase{verb: "list", past: "listed", object: "all files"}
	if pattern != "" && pattern != "**" {
		p.object = "files matching " + clean(pattern, maxObject)
	}
	if dir != "" && dir != "." {
		p.object += " in " + clean(dir, maxObject)
	}
	return p, true
}

func searchText(a args) (phrase, bool) {
	pattern, ok := a.str("pattern")
	if !ok {
		return phrase{}, false
	}
	p := phrase{verb: "search", past: "searched", object: `for "` + clean(pattern, maxObject) + `"`}
	if dir, _ := a.str("path"); dir != "" && dir != "." {
		p.object += " in " + clean(dir, maxObject)
	}
	if glob, _ := a.str("glob"); glob != "" {
		p.object += ", files matching " + clean(glob, maxObject)
	}
	return p, true
}

func writeFile(a args) (phrase, bool) {
	path, ok := a.str("path")
	content, ok2 := a.str("content")
	if !ok || !ok2 {
		return phrase{}, false
	}
	size := "empty"
	if n := CountLines(content); n > 0 {
		size = Count(n, "line")
	}
	return phrase{verb: "write", past: "wrote", object: clean(path, maxObject), notes: []string{size}}, true
}

func editFile(a args) (phrase, bool) {
	path, ok := a.str("path")
	old, ok2 := a.str("old_text")
	repl, ok3 := a.str("new_text")
	if !ok || !ok2 || !ok3 {
		return phrase{}, false
	}
	change := fmt.Sprintf("+%d −%d", CountLines(repl), CountLines(old))
	return phrase{verb: "edit", past: "edited", object: clean(path, maxObject), notes: []string{change}}, true
}

func runCommand(a args) (phrase, bool) {
	command, ok := a.str("command")
	if !ok || strings.TrimSpace(command) == "" {
		return phrase{}, false
	}
	return phrase{verb: "run", past: "ran", object: clean(command, maxObject)}, true
}

func note(a args) (phrase, bool) {
	key, ok := a.str("key")
	if !ok {
		return phrase{}, false
	}
	if value, _ := a.str("value"); value != "" {
		return phrase{verb: "note", past: "noted", object: clean(key, maxName) + ": " + clean(value, maxObject)}, true
	}
	return phrase{verb: "forget", past: "forgot", object: "the note " + clean(key, maxName)}, true
}

func setPlan(a args) (phrase, bool) {
	var steps []json.RawMessage
	if raw, ok := a.get("steps"); !ok || json.Unmarshal(raw, &steps) != nil {
		return phrase{}, false
	}
	object := "the plan: " + Count(len(steps), "step")
	if done, ok := a.num("done"); ok && done != "0" && !strings.HasPrefix(done, "-") {
		object += ", " + done + " done"
	}
	return phrase{verb: "set", past: "set", object: object}, true
}

// clean makes text from a model one inert line of at most n characters.
// Only the start of a long text is looked at: a model's argument may be
// megabytes, and a line shows a few hundred characters of it.
func clean(s string, n int) string {
	more := len(s) > 8*n
	s = Head(s, 8*n)
	s = oneLine(s)
	if more {
		s += "…"
	}
	return Clip(s, n)
}

// Clip shortens s to n characters, the last an ellipsis when it cut.
func Clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
