package transcript

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"retrace/state"
)

// The edges of the summariser's helpers, each at the value where a
// condition turns: the mutation gate ran these lines and no summary told
// the conditions' variants apart.
func TestCallHelpersAtTheirEdges(t *testing.T) {
	num := func(raw string) string {
		a, ok := parseObject(`{"n":` + raw + `}`)
		if !ok {
			t.Fatalf("parse %s", raw)
		}
		s, _ := a.num("n")
		return s
	}
	for raw, want := range map[string]string{
		"1.5": "1.5", "40": "40", "-3": "-3",
		"999999999999999": "999999999999999", // under 1e15: written whole
		"1e15":            "1e+15",           // from 1e15 on: as %g
	} {
		if got := num(raw); got != want {
			t.Errorf("num(%s) = %q, want %q", raw, got, want)
		}
	}
	if got := commandStatus("\nexit code: 3"); got != "exit 3" {
		t.Errorf("a status on the result's second line, the first empty: %q", got)
	}
	if got := clean(strings.Repeat(" ", 8*10), 10); got != "" {
		t.Errorf("spaces exactly at the look-at limit: %q, want nothing", got)
	}
	if got := clean(strings.Repeat("\x80", 8*10+5), 10); !utf8.ValidString(got) {
		t.Errorf("continuation bytes only: %q", got)
	}
	if got := clean("a"+strings.Repeat("é", 60), 10); !utf8.ValidString(got) || strings.ContainsRune(got, utf8.RuneError) {
		t.Errorf("a cut inside a two-byte character: %q", got)
	}
	if got := Clip("abc", 3); got != "abc" {
		t.Errorf("cut to its own length: %q", got)
	}
	if got := Clip("abc", 0); got != "" {
		t.Errorf("cut to nothing: %q", got)
	}
}

// Failure: a command that exited non-zero or was killed failed, as a
// call with an error did; one that exited 0, or any other tool without
// an error, did not.
func TestFailure(t *testing.T) {
	run := func(result, err string) state.ToolCall {
		return state.ToolCall{Name: "run_command", Arguments: `{"command":"make"}`, Result: result, Error: err, FinishedAt: time.Unix(1, 0)}
	}
	for _, c := range []struct {
		call state.ToolCall
		want string
	}{
		{run("ok\nexit code: 0", ""), ""},
		{run("boom\nexit code: 1", ""), "exit 1"},
		{run("sh: no-such: not found\nexit code: 127", ""), "exit 127"},
		{run("killed: timed out after 2m0s", ""), "timed out after 2m0s"},
		{run("killed by signal 9 (killed)", ""), "killed by signal 9 (killed)"},
		{run("", "the sandbox could not start"), "failed: the sandbox could not start"},
		{state.ToolCall{Name: "read_file", Arguments: `{"path":"a"}`, Result: "exit code: 1"}, ""},
		{state.ToolCall{Name: "read_file", Arguments: `{"path":"a"}`, Error: "no such file"}, "failed: no such file"},
	} {
		if got := Failure(c.call); got != c.want {
			t.Errorf("Failure(%s %q, error %q) = %q, want %q", c.call.Name, c.call.Result, c.call.Error, got, c.want)
		}
	}
}
