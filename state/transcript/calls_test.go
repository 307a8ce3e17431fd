package transcript_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"retrace/state"
	"retrace/state/transcript"
	"retrace/state/transcript/inerttest"
)

// Each tool's call reads as what it does, from the argument names the
// tools declare (agent/tools/defs.go), written out here by hand.
func TestCallSummary(t *testing.T) {
	for _, c := range []struct{ name, args, want string }{
		{"read_file", `{"path":"notes.txt"}`, "read notes.txt"},
		{"read_file", `{"path":"notes.txt","start_line":1,"end_line":100}`, "read notes.txt, lines 1–100"},
		{"read_file", `{"path":"notes.txt","start_line":40}`, "read notes.txt from line 40"},
		{"read_file", `{"path":"notes.txt","end_line":20}`, "read notes.txt, lines 1–20"},
		{"read_file", `{"path":"a.go","start_line":7,"end_line":7}`, "read a.go, line 7"},
		{"read_file", `{"path":"a.go","start_line":null}`, "read a.go"},
		{"list_files", `{}`, "list all files"},
		{"list_files", `{"pattern":"**"}`, "list all files"},
		{"list_files", `{"pattern":"*.go"}`, "list files matching *.go"},
		{"list_files", `{"pattern":"**","path":"cmd"}`, "list all files in cmd"},
		{"list_files", `{"pattern":"*_test.go","path":"tui"}`, "list files matching *_test.go in tui"},
		{"search_text", `{"pattern":"func main"}`, `search for "func main"`},
		{"search_text", `{"pattern":"TODO","path":"tui","glob":"*.go"}`, `search for "TODO" in tui, files matching *.go`},
		{"write_file", `{"path":"main.go","content":"package main\n\nfunc main() {}\n"}`, "write main.go (3 lines)"},
		{"write_file", `{"path":"one.txt","content":"x"}`, "write one.txt (1 line)"},
		{"write_file", `{"path":"empty.txt","content":""}`, "write empty.txt (empty)"},
		{"edit_file", `{"path":"main.go","old_text":"a\nb\nc","new_text":"x"}`, "edit main.go (+1 −3)"},
		{"edit_file", `{"path":"main.go","old_text":"a","new_text":""}`, "edit main.go (+0 −1)"},
		{"run_command", `{"command":"go test ./..."}`, "run go test ./..."},
		{"run_command", `{"command":"go vet ./...\n  && go test ./...","timeout_seconds":30}`, "run go vet ./... && go test ./..."},
		{"note", `{"key":"test command","value":"go test ./..."}`, "note test command: go test ./..."},
		{"note", `{"key":"test command","value":""}`, "forget the note test command"},
		{"set_plan", `{"steps":["a","b","c"]}`, "set the plan: 3 steps"},
		{"set_plan", `{"steps":["a","b","c"],"done":2,"goal":"g"}`, "set the plan: 3 steps, 2 done"},
		{"set_plan", `{"steps":["a"]}`, "set the plan: 1 step"},
		// Tools retrace does not know: the name and the first string
		// argument, in the order the model wrote them.
		{"fetch_url", `{"retries":3,"url":"https://example.com/a","method":"GET"}`, "call fetch_url https://example.com/a"},
		{"fetch_url", `{"retries":3}`, "call fetch_url"},
		{"fetch_url", ``, "call fetch_url"},
		// A known tool whose arguments do not fit its declaration is
		// drawn like one retrace does not know.
		{"read_file", `{"start_line":3}`, "call read_file"},
		{"read_file", `{"path":7,"x":"y"}`, "call read_file y"},
		{"run_command", `{"command":["ls"]}`, "call run_command"},
		{"read_file", `{"path":"a.go","start_line":"ten"}`, "read a.go"},
		// Arguments that are not JSON are shown as they came, cut.
		{"read_file", `{"path": "main.go"`, `call read_file with arguments that are not a JSON object: {"path": "main.go"`},
		{"run_command", `"ls"`, `call run_command with arguments that are not a JSON object: "ls"`},
	} {
		if got := transcript.CallSummary(c.name, c.args); got != c.want {
			t.Errorf("CallSummary(%q, %q) = %q, want %q", c.name, c.args, got, c.want)
		}
	}
}

// A finished call says what it did, in the past, with how it ended and
// how long it took; one that has not finished says where it stands.
func TestCallOutcome(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	done := func(name, args, result, errText string, ms int64) state.ToolCall {
		return state.ToolCall{ID: "c1", Name: name, Arguments: args, Result: result, Error: errText, DurationMS: ms, StartedAt: at, FinishedAt: at}
	}
	run := `{"command":"go test ./..."}`
	for _, c := range []struct {
		call state.ToolCall
		want string
	}{
		{done("read_file", `{"path":"notes.txt","start_line":1,"end_line":100}`, "hello\n", "", 3), "read notes.txt, lines 1–100 (3 ms)"},
		{done("run_command", run, "FAIL\nexit code: 1", "", 2140), "ran go test ./... (exit 1, 2.1 s)"},
		{done("run_command", run, "ok\nexit code: 0\n", "", 412), "ran go test ./... (exit 0, 412 ms)"},
		{done("run_command", run, "(no output)\nkilled: timed out after 2m0s", "", 120000), "ran go test ./... (timed out after 2m0s, 2 min 0 s)"},
		{done("run_command", run, "killed by signal 9 (killed)", "", 61500), "ran go test ./... (killed by signal 9 (killed), 1 min 1 s)"},
		{done("run_command", run, "partial\nkilled: interrupted", "run_command interrupted, its process group killed: context canceled", 900),
			"ran go test ./... (interrupted, 900 ms)"},
		{done("write_file", `{"path":"main.go","content":"a\nb\n"}`, "wrote 4 bytes to main.go", "", 1), "wrote main.go (2 lines, 1 ms)"},
		{done("edit_file", `{"path":"main.go","old_text":"a","new_text":"b\nc"}`, "edited", "", 2), "edited main.go (+2 −1, 2 ms)"},
		{done("list_files", `{}`, "a\nb\n", "", 0), "listed all files (0 ms)"},
		{done("search_text", `{"pattern":"x"}`, "", "", 5), `searched for "x" (5 ms)`},
		{done("note", `{"key":"k","value":"v"}`, "noted", "", 0), "noted k: v (0 ms)"},
		{done("set_plan", `{"steps":["a","b"]}`, "ok", "", 0), "set the plan: 2 steps (0 ms)"},
		{done("fetch_url", `{"url":"https://example.com"}`, "<html>", "", 1500), "called fetch_url https://example.com (1.5 s)"},
		{done("read_file", `{"path":"gone.txt"}`, "", "open gone.txt: no such file or directory", 1),
			"read gone.txt (failed: open gone.txt: no such file or directory, 1 ms)"},
		{done("read_file", `{"path":"x"}`, "", "line one\nline two", -5), "read x (failed: line one line two, 0 ms)"},
		{func() state.ToolCall {
			c := done("write_file", `{"path":"NOTES.md","content":"x"}`, "", "the user denied this call", 0)
			c.Approval = state.Denied
			return c
		}(), "write NOTES.md (1 line, denied)"},
		{state.ToolCall{ID: "c1", Name: "run_command", Arguments: run, Approval: state.AwaitingDecision}, "run go test ./... (waiting for approval)"},
		{state.ToolCall{ID: "c1", Name: "run_command", Arguments: run, Approval: state.AwaitingDecision, FinishedAt: at, Error: "interrupted"},
			"run go test ./... (cancelled before it was approved)"},
		{state.ToolCall{ID: "c1", Name: "run_command", Arguments: run, StartedAt: at}, "run go test ./... (running, or stopped while running)"},
	} {
		if got := transcript.CallOutcome(c.call); got != c.want {
			t.Errorf("CallOutcome(%+v)\n = %q\nwant %q", c.call, got, c.want)
		}
	}
}

// Whatever the model sends, a summary is one line of inert text no
// longer than MaxCallSummary characters, and what it says of the
// arguments keeps its place: the outcome after a long path is not cut.
func TestCallSummaryIsBoundedAndInert(t *testing.T) {
	long := strings.Repeat("ab", 5000)
	for _, c := range inerttest.Classes {
		for _, args := range []string{
			`{"path":"` + inerttest.JSONEscape(c.Text) + `"}`,
			`{"command":"` + inerttest.JSONEscape(c.Text) + `"}`,
			c.Text,
		} {
			for _, name := range []string{"read_file", "run_command", c.Text} {
				call := state.ToolCall{Name: name, Arguments: args, Result: c.Text, Error: c.Text, DurationMS: 1, FinishedAt: time.Now()}
				for _, got := range []string{transcript.CallSummary(name, args), transcript.CallOutcome(call)} {
					if bad := inerttest.Problems(got, ""); len(bad) != 0 {
						t.Errorf("%s: summary %q carries %v", c.Name, got, bad)
					}
				}
			}
		}
	}
	got := transcript.CallOutcome(state.ToolCall{Name: "run_command", Arguments: `{"command":"` + long + `"}`,
		Result: "exit code: 2", DurationMS: 10, FinishedAt: time.Now()})
	if n := utf8.RuneCountInString(got); n > transcript.MaxCallSummary {
		t.Errorf("%d characters, want at most %d: %q", n, transcript.MaxCallSummary, got)
	}
	if !strings.HasSuffix(got, "… (exit 2, 10 ms)") {
		t.Errorf("a long command pushes its outcome out: %q", got)
	}
	for _, s := range []string{
		transcript.CallSummary(long, long),
		transcript.CallSummary("x", `{"a":"`+long+`"}`),
		transcript.CallOutcome(state.ToolCall{Name: "read_file", Arguments: `{"path":"a"}`, Error: long, FinishedAt: time.Now()}),
		transcript.CallOutcome(state.ToolCall{Name: "run_command", Arguments: `{"command":"a"}`, Result: "exit code: " + long, FinishedAt: time.Now()}),
	} {
		if n := utf8.RuneCountInString(s); n > transcript.MaxCallSummary || strings.Contains(s, "\n") {
			t.Errorf("%d characters (at most %d, one line): %q", n, transcript.MaxCallSummary, s)
		}
	}
}

// Fuzzing: no input makes the summaries panic, hold more than one line,
// carry what a terminal acts on, or pass the bound.
func FuzzCallSummary(f *testing.F) {
	f.Add("read_file", `{"path":"a.go","start_line":1,"end_line":2}`, "x", "", int64(3))
	f.Add("run_command", `{"command":"ls"}`, "exit code: 1", "", int64(2100))
	f.Add("edit_file", `{"path":"a","old_text":"a","new_text":"b"}`, "", "boom", int64(-1))
	f.Add("x\x1b[2J", `{"a":"\u001b]0;t\u0007"}`, "\x9b", "\u202e", int64(1<<62))
	f.Add("read_file", `{"start_line":1e308,"end_line":-1e308,"path":"`+strings.Repeat("é", 300)+`"}`, "", "", int64(0))
	f.Add("set_plan", `{"steps":[[[[[[]]]]]],"done":"x"}`, "", "", int64(0))
	f.Fuzz(func(t *testing.T, name, args, result, errText string, ms int64) {
		call := state.ToolCall{Name: name, Arguments: args, Result: result, Error: errText, DurationMS: ms, FinishedAt: time.Now()}
		for _, s := range []string{transcript.CallSummary(name, args), transcript.CallOutcome(call), transcript.CallOutcome(state.ToolCall{Name: name, Arguments: args})} {
			if strings.ContainsAny(s, "\n\t") || utf8.RuneCountInString(s) > transcript.MaxCallSummary {
				t.Fatalf("not one bounded line: %q", s)
			}
			if bad := inerttest.Problems(s, ""); len(bad) != 0 {
				t.Fatalf("%q carries %v", s, bad)
			}
		}
	})
}
