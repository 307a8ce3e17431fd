package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"retrace/state"
	"retrace/state/transcript/inerttest"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// show prints a reply's thinking under its role, marked and indented
// deeper than what the reply says, before the reply and its calls; blank
// thinking is left out.
func TestShowThinking(t *testing.T) {
	s := state.New("s1")
	s.History = []state.Message{
		{Role: state.RoleUser, Content: "fix it"},
		{Role: state.RoleAssistant, Content: "Let me look.\nFirst main.go.", Reasoning: "\nthe build fails\n\nmain.go first\n",
			ToolCalls: []state.ToolRequest{{ID: "c1", Name: "read_file", Arguments: `{"path":"main.go"}`}}},
		{Role: state.RoleTool, ToolCallID: "c1", Name: "read_file", Content: "package main"},
		{Role: state.RoleAssistant, Reasoning: "a call, nothing to say", ToolCalls: []state.ToolRequest{{ID: "c2", Name: "run_command", Arguments: `{}`}}},
		{Role: state.RoleAssistant, Content: "Done.", Reasoning: " \n\t"},
	}
	var out bytes.Buffer
	renderState(&out, storage.SessionInfo{ID: "s1"}, s, nil, showOptions{})
	want := "\nconversation\n" +
		"  user: fix it\n" +
		"  assistant:\n" +
		"    thinking:\n" +
		"      the build fails\n" +
		"      \n" +
		"      main.go first\n" +
		"    Let me look.\n" +
		"    First main.go.\n" +
		"    -> read main.go (call c1)\n" +
		"       arguments: {\"path\":\"main.go\"}\n" +
		"  tool read_file (c1): package main\n" +
		"  assistant:\n" +
		"    thinking:\n" +
		"      a call, nothing to say\n" +
		"    -> call run_command (call c2)\n" +
		"       arguments: {}\n" +
		"  assistant: Done.\n"
	got := out.String()
	if i := strings.Index(got, "\nconversation\n"); i < 0 || got[i:] != want {
		t.Fatalf("show:\n%s\nwant the conversation:\n%s", got, want)
	}
}

// thinkingStore writes a session of two answered questions, each reply
// with its thinking: thought(1) and thought(2) hold what the first and
// the second reply thought.
func thinkingStore(t *testing.T, thought func(n int) string) (db, id string) {
	t.Helper()
	db = filepath.Join(t.TempDir(), "retrace.db")
	ctx := context.Background()
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	info, err := st.Create(ctx, storage.NewSession{Title: "sums", CreatedAt: at})
	if err != nil {
		t.Fatal(err)
	}
	user := func(s string) []state.Message { return []state.Message{{Role: state.RoleUser, Content: s}} }
	answer := func(s string, n int) []state.Message {
		return []state.Message{{Role: state.RoleAssistant, Content: s, Reasoning: thought(n)}}
	}
	cur := storage.NewCursor(st, state.New(info.ID))
	for i, ev := range []state.Event{
		{Kind: state.UserMessage, Messages: user("2+2?")},
		{Kind: state.Answered, Messages: answer("4", 1)},
		{Kind: state.UserMessage, Messages: user("3+3?")},
		{Kind: state.Answered, Messages: answer("6", 2)},
	} {
		ev.At = at.Add(time.Duration(i) * time.Second)
		if _, err := cur.Commit(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	return db, info.ID
}

// The thinking kept with each reply reaches show (at the head and at an
// earlier version), export --format md and the JSON export, inert and
// whole, for every class of hostile text.
func TestInertMatrixThinking(t *testing.T) {
	for _, c := range inerttest.Classes {
		t.Run(c.Name, func(t *testing.T) {
			db, id := thinkingStore(t, func(n int) string { return field([]string{"", "first:", "second:"}[n], c) + "\nso it is" })

			head := retrace(t, "show", id, "--db", db).ok(t).stdout
			conv := sectionOf(head, "conversation")
			checkText(t, "show", head, c, []shown{{conv, "first:", 0}, {conv, "second:", 0}})
			if !strings.Contains(conv, "    thinking:\n      first:") {
				t.Errorf("show does not mark the thinking:\n%s", conv)
			}
			earlier := retrace(t, "show", id, "--version", "2", "--db", db).ok(t).stdout
			checkText(t, "show --version 2", earlier, c, []shown{{sectionOf(earlier, "conversation"), "first:", 0}})
			if strings.Contains(earlier, "second:") {
				t.Errorf("v2 shows what the second reply thought:\n%s", earlier)
			}

			md := retrace(t, "export", id, "--format", "md", "--db", db).ok(t).stdout
			checkText(t, "export --format md", md, c, []shown{{md, "first:", 0}, {md, "second:", 0}})
			if n := strings.Count(md, "<summary>Thinking</summary>"); n != 2 {
				t.Errorf("export --format md folds %d thinking blocks, want 2:\n%s", n, md)
			}
			checkJSON(t, "export", retrace(t, "export", id, "--db", db).ok(t).stdout,
				stored("first:", c)+"\nso it is", stored("second:", c)+"\nso it is")
		})
	}
}

// show says a call whose approval was never given was cancelled.
func TestShowSaysAnUnansweredApprovalWasCancelled(t *testing.T) {
	s := state.New("s1")
	c := state.ToolCall{ID: "c1", Name: "write_file", Arguments: `{"path":"a.go","content":"x"}`, Approval: state.AwaitingDecision}
	show := func() string {
		s.Memory.ToolCalls = []state.ToolCall{c}
		var out bytes.Buffer
		renderState(&out, storage.SessionInfo{ID: "s1"}, s, nil, showOptions{})
		return sectionOf(out.String(), "tool calls")
	}
	if got := show(); !strings.Contains(got, "write a.go (1 line, waiting for approval)") {
		t.Fatalf("pending: %q", got)
	}
	c.FinishedAt, c.Error = time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC), "interrupted"
	if got := show(); !strings.Contains(got, "write a.go (1 line, cancelled before it was approved)") {
		t.Fatalf("cancelled: %q", got)
	}
}
