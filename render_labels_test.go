package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// labelState is a state after a read, a failed command and a call still
// waiting for approval, with the system prompt first.
func labelState() state.State {
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	s := state.New("s1")
	read := state.ToolRequest{ID: "c1", Name: "read_file", Arguments: `{"path":"notes.txt","start_line":1,"end_line":100}`}
	test := state.ToolRequest{ID: "c2", Name: "run_command", Arguments: `{"command":"go test ./..."}`}
	write := state.ToolRequest{ID: "c3", Name: "write_file", Arguments: `{"path":"NOTES.md","content":"a\nb\n"}`}
	s.History = []state.Message{
		{Role: state.RoleSystem, Content: "You are retrace, a careful coding agent.\nRead before you change anything."},
		{Role: state.RoleUser, Content: "why do the tests fail?"},
		{Role: state.RoleAssistant, Content: "Let me look.", ToolCalls: []state.ToolRequest{read, test}},
		{Role: state.RoleTool, ToolCallID: "c1", Name: "read_file", Content: "TZ=UTC"},
		{Role: state.RoleTool, ToolCallID: "c2", Name: "run_command", Content: "FAIL\nexit code: 1"},
		{Role: state.RoleAssistant, ToolCalls: []state.ToolRequest{write}},
	}
	s.Memory.ToolCalls = []state.ToolCall{
		{ID: "c1", Name: read.Name, Arguments: read.Arguments, Result: "TZ=UTC", DurationMS: 3, StartedAt: at, FinishedAt: at},
		{ID: "c2", Name: test.Name, Arguments: test.Arguments, Result: "FAIL\nexit code: 1", DurationMS: 2140, StartedAt: at, FinishedAt: at},
		{ID: "c3", Name: write.Name, Arguments: write.Arguments, Approval: state.AwaitingDecision},
	}
	return s
}

// show lists the tool calls by what they did and how they ended, as the
// interface does, and in the conversation gives each call's summary
// with its arguments in full.
func TestShowDrawsCallsForPeople(t *testing.T) {
	var out bytes.Buffer
	renderState(&out, storage.SessionInfo{ID: "s1"}, labelState(), nil, showOptions{})
	got := out.String()
	wantTools := "\ntool calls\n" +
		"  read notes.txt, lines 1–100 (3 ms)\n" +
		"  ran go test ./... (exit 1, 2.1 s)\n" +
		"  write NOTES.md (2 lines, waiting for approval)\n"
	if !strings.Contains(got, wantTools) {
		t.Errorf("show:\n%s\nwant the tool calls:\n%s", got, wantTools)
	}
	wantConv := "\nconversation\n" +
		"  system prompt: not shown (show --system prints it)\n" +
		"  user: why do the tests fail?\n" +
		"  assistant: Let me look.\n" +
		"    -> read notes.txt, lines 1–100 (call c1)\n" +
		"       arguments: {\"path\":\"notes.txt\",\"start_line\":1,\"end_line\":100}\n" +
		"    -> run go test ./... (call c2)\n" +
		"       arguments: {\"command\":\"go test ./...\"}\n" +
		"  tool read_file (c1): TZ=UTC\n" +
		"  tool run_command (c2): FAIL\n" +
		"    exit code: 1\n" +
		"  assistant:\n" +
		"    -> write NOTES.md (2 lines) (call c3)\n" +
		"       arguments: {\"path\":\"NOTES.md\",\"content\":\"a\\nb\\n\"}\n"
	if i := strings.Index(got, "\nconversation\n"); i < 0 || got[i:] != wantConv {
		t.Errorf("show:\n%s\nwant the conversation:\n%s", got, wantConv)
	}
	if strings.Contains(got, "You are retrace") {
		t.Errorf("show prints the system prompt unasked:\n%s", got)
	}

	out.Reset()
	renderState(&out, storage.SessionInfo{ID: "s1"}, labelState(), nil, showOptions{System: true})
	if want := "  system prompt: You are retrace, a careful coding agent.\n    Read before you change anything.\n"; !strings.Contains(out.String(), want) {
		t.Errorf("show --system:\n%s\nwant:\n%s", out.String(), want)
	}
}

// --system reaches show from the command line.
func TestShowSystemFlag(t *testing.T) {
	db := filepath.Join(t.TempDir(), "retrace.db")
	ctx := context.Background()
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Create(ctx, storage.NewSession{Title: "tz", CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := storage.NewCursor(st, state.New(info.ID)).Commit(ctx, state.Event{Kind: state.UserMessage, At: time.Now(),
		Messages: []state.Message{{Role: state.RoleSystem, Content: "You are retrace."}, {Role: state.RoleUser, Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"show", info.ID, "--db", db}, "  system prompt: not shown (show --system prints it)\n  user: hi\n"},
		{[]string{"show", info.ID, "--system", "--db", db}, "  system prompt: You are retrace.\n  user: hi\n"},
	} {
		if got := retrace(t, c.args...).ok(t).stdout; !strings.Contains(got, c.want) {
			t.Errorf("%v:\n%s\nwant %q", c.args, got, c.want)
		}
	}
}
