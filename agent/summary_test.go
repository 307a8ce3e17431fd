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

// A turn too long for one of the summariser's requests has its messages
// clipped so that the request fits the share of the window a request may
// fill: what is clipped is the start of the message and " […]", and the
// clip takes no more than it must (the request still fills most of that
// share). A turn that fits is given whole.
func TestSummariserClipsATurnTooLongForOneRequest(t *testing.T) {
	long := func(n int) string { return strings.Repeat("é", n) }
	for _, c := range []struct {
		name           string
		window, answer int
		clipped        bool
	}{
		{"fits whole", 8000, 2000, false},
		{"one answer over", 1000, 2000, true},
		{"far over", 1000, 20000, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, agent.Options{})
			r.turn("first question", long(c.answer))
			r.chat(6)
			got := r.compact(c.window, "SUMMARY")
			answer, ok := strings.CutPrefix(got, "Turns to fold in:\n\nuser: first question\n\nassistant: ")
			if !ok {
				t.Fatalf("the summariser was given:\n%.300s", got)
			}
			answer = strings.TrimSuffix(answer, "\n")
			clip, cut := strings.CutSuffix(answer, " […]")
			if cut != c.clipped || !strings.HasPrefix(long(c.answer), clip) {
				t.Fatalf("the answer as the summariser saw it: %d of %d characters, clipped %v, want clipped %v", len([]rune(clip)), c.answer, cut, c.clipped)
			}
			reqs := r.srv.Requests()
			n := newWindowModel("gpt-test", c.window).tokens(reqs[len(reqs)-1])
			if limit := c.window * 8 / 10; n > limit || (c.clipped && n < limit*3/4) {
				t.Fatalf("the summariser's request has %d tokens; want at most %d, and when clipped at least %d", n, limit, limit*3/4)
			}
		})
	}
}

// In a turn too long for one request, each long message keeps the same
// share and what is shorter than the share stays whole: a large tool
// result is clipped, the question, the calls and the answer are not.
func TestSummariserClipsInProportion(t *testing.T) {
	r := newRig(t, agent.Options{})
	var big strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&big, "line %d of a large file\n", i)
	}
	if err := os.WriteFile(filepath.Join(r.ws, "big.txt"), []byte(big.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	answer := strings.Repeat("the file counts lines. ", 10)
	r.srv.Enqueue(llmserver.ToolCallReply(call("call_r", "read_file", `{"path":"big.txt"}`)), llmserver.TextReply(answer))
	if _, err := r.agent().Send(context.Background(), "what is in big.txt?"); err != nil {
		t.Fatal(err)
	}
	r.chat(6)
	got := r.compact(2000, "SUMMARY")
	head := "Turns to fold in:\n\nuser: what is in big.txt?\n" +
		"\nassistant: \n[calls read_file {\"path\":\"big.txt\"}]\n" +
		"\ntool read_file result: line 0 of a large file\nline 1 of a large file\n"
	tail := " […]\n\nassistant: " + answer + "\n"
	if !strings.HasPrefix(got, head) || !strings.HasSuffix(got, tail) || len(got) > big.Len() {
		t.Fatalf("the summariser was given %d bytes:\n%.400s\n…\n%s", len(got), got, got[max(len(got)-300, 0):])
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

// The summariser's requests fit the share of the window a request may
// fill with the previous summary in them too: a long summary leaves less
// room for the turns it folds in, whether those are one turn too long
// for a request (clipped) or many short ones (in several folds).
func TestSummariserLeavesRoomForThePreviousSummary(t *testing.T) {
	const window = 2000
	limit := window * 8 / 10
	previous := strings.Repeat("The user and the assistant talked about the build. ", 40) // about 400 tokens
	for _, c := range []struct {
		name          string
		before, after func(r *rig) // the turns before the first summary, and after it
	}{
		// The first summary folds the first turn only: the long one is the
		// next fold's first, in a request with the summary.
		{"one turn too long", func(r *rig) { r.turn("second question", strings.Repeat("é", 4000)); r.chat(5) }, func(r *rig) { r.chat(1) }},
		{"many short turns", func(r *rig) { r.chat(6) }, func(r *rig) { r.chat(24) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, agent.Options{})
			r.turn("first question", "first answer")
			c.before(r)
			r.compact(0, previous)
			c.after(r)
			before := len(r.srv.Requests())
			r.opts.ContextWindow = window
			r.srv.SetHandler(func(llmserver.Request) llmserver.Response { return llmserver.TextReply("SUMMARY 2") })
			if err := r.agent().Compact(context.Background()); err != nil {
				t.Fatal(err)
			}
			folds := r.srv.Requests()[before:]
			if len(folds) == 0 || !strings.HasPrefix(folds[0].Messages[1].Content, "Previous summary:\n"+previous) {
				t.Fatalf("the first fold was not made from the previous summary: %d requests", len(folds))
			}
			count := newWindowModel("gpt-test", window)
			for i, req := range folds {
				if n := count.tokens(req); n > limit {
					t.Errorf("the summariser's request %d has %d tokens, over %d (80%% of the window), with a summary of %d", i+1, n, limit,
						count.count.Text(previous))
				}
			}
		})
	}
}
