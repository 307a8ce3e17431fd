package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"retrace/agent"
	"retrace/agent/llmserver"
	"retrace/state"
)

// turn gives the session one question answered directly.
func (r *rig) turn(question, answer string) {
	r.t.Helper()
	r.srv.Enqueue(llmserver.TextReply(answer, llmserver.WithPieceSize(1000)))
	if _, err := r.agent().Send(context.Background(), question); err != nil {
		r.t.Fatal(err)
	}
}

// compact runs /compact with the given window and returns what the
// summariser was given.
func (r *rig) compact(window int, summary string) string {
	r.t.Helper()
	r.opts.ContextWindow = window
	r.srv.Enqueue(llmserver.TextReply(summary))
	if err := r.agent().Compact(context.Background()); err != nil {
		r.t.Fatal(err)
	}
	reqs := r.srv.Requests()
	last := reqs[len(reqs)-1]
	if len(last.Messages) != 2 || last.Messages[0].Role != "system" || !strings.HasPrefix(last.Messages[0].Content, "You keep a running summary") || len(last.Tools) != 0 {
		r.t.Fatalf("the summariser's request: %+v", last)
	}
	return last.Messages[1].Content
}

// Each folded message is cut to an equal share of about half the window
// (window*2 characters, at least 4000), and to no less than 200
// characters, so that the summariser's own request fits.
func TestSummariserCutsLongMessages(t *testing.T) {
	long := func(n int) string { return strings.Repeat("é", n) }
	for _, c := range []struct {
		name           string
		window, answer int
		want           string // the first answer as the summariser sees it
	}{
		// Turn 0 is folded: two messages, each 4000/2 characters at most.
		{"small window, one over", 1000, 2001, long(2000) + " […]"},
		{"small window, exactly the share", 1000, 2000, long(2000)},
		// 3000*2 characters for two messages.
		{"larger window, one over", 3000, 3001, long(3000) + " […]"},
		{"larger window, exactly the share", 3000, 3000, long(3000)},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, agent.Options{})
			r.turn("first question", long(c.answer))
			r.chat(6)
			got := r.compact(c.window, "SUMMARY")
			if want := "Turns to fold in:\n\nuser: first question\n\nassistant: " + c.want + "\n"; got != want {
				t.Fatalf("the summariser was given %d characters:\n%.300s…\nwant %d", len([]rune(got)), got, len([]rune(want)))
			}
		})
	}

	// Eleven turns folded: 22 messages, and 4000/22 is under the floor.
	r := newRig(t, agent.Options{})
	for i := range 17 {
		r.turn(fmt.Sprintf("question %d", i), long(300))
	}
	got := r.compact(1000, "SUMMARY")
	if n := strings.Count(got, "\nassistant: "+long(200)+" […]\n"); n != 11 {
		t.Fatalf("%d answers cut to 200 characters, want 11:\n%.500s", n, got)
	}
}

// The summariser sees tool calls and their results, and a second summary
// is made from the first and the turns after it.
func TestSummariserSeesToolsAndThePreviousSummary(t *testing.T) {
	r := newRig(t, agent.Options{})
	if err := os.WriteFile(filepath.Join(r.ws, "a.go"), []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.srv.Enqueue(plan("read a.go"), llmserver.ToolCallReply(call("call_r", "read_file", `{"path":"a.go"}`)),
		llmserver.TextReply("It is package a."))
	if _, err := r.agent().Send(context.Background(), "what is a.go?"); err != nil {
		t.Fatal(err)
	}
	r.chat(6)
	got := r.compact(0, "SUMMARY 1")
	want := "Turns to fold in:\n" +
		"\nuser: what is a.go?\n" +
		"\nassistant: \n[calls set_plan {\"steps\":[\"read a.go\"]}]\n" +
		"\ntool set_plan result: plan recorded: 0 of 1 steps done; now: read a.go\n" +
		"\nassistant: \n[calls read_file {\"path\":\"a.go\"}]\n" +
		"\ntool read_file result: package a\n\n" +
		"\nassistant: It is package a.\n"
	if got != want {
		t.Fatalf("the summariser was given:\n%s\nwant:\n%s", got, want)
	}

	r.turn("one more question", "one more answer")
	got = r.compact(0, "SUMMARY 2")
	if !strings.HasPrefix(got, "Previous summary:\nSUMMARY 1\n\nTurns to fold in:\n\nuser: question 0: ") {
		t.Fatalf("the second summary was made from:\n%.200s", got)
	}
	head, err := r.store.Head(context.Background(), r.session)
	if err != nil || head.Summary != "SUMMARY 2" || head.Phase != state.Done {
		t.Fatalf("head: summary %q, phase %s: %v", head.Summary, head.Phase, err)
	}
}
