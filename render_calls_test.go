package main

import (
	"strings"
	"testing"

	"retrace/agent/llmserver"
)

// retrace run shows a command that ran and failed as failed, with its
// exit code: a shell's "command not found" (127) and a plain exit 1 are
// ✗, a command that exited 0 is ✓.
func TestRunShowsAFailedCommandAsFailed(t *testing.T) {
	e := newRunEnv(t)
	e.srv.Enqueue(llmserver.ToolCallReply([]llmserver.Call{
		{ID: "call_1", Name: "run_command", Args: `{"command":"exit 1"}`},
		{ID: "call_127", Name: "run_command", Args: `{"command":"no-such-command-here"}`},
		{ID: "call_0", Name: "run_command", Args: `{"command":"true"}`},
	}), llmserver.TextReply("Done."))
	r := e.run(t, "", "--yes", "run them")
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var ended []string
	for _, l := range outputLines(r.stderr) {
		if strings.HasPrefix(l, "  ✓ ") || strings.HasPrefix(l, "  ✗ ") {
			ended = append(ended, l)
		}
	}
	want := []string{"  ✗ run_command: exit 1 (", "  ✗ run_command: exit 127 (", "  ✓ run_command ("}
	if len(ended) != len(want) {
		t.Fatalf("%d calls ended, want %d:\n%s", len(ended), len(want), r.stderr)
	}
	for i, w := range want {
		if !strings.HasPrefix(ended[i], w) {
			t.Errorf("call %d shows %q, want %q...", i+1, ended[i], w)
		}
	}
}
