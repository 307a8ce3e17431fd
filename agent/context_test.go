package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"retrace/agent"
	"retrace/agent/llmserver"
	"retrace/state"
)

// chat gives the session n turns, each a question and a direct answer.
func (r *rig) chat(n int) {
	r.t.Helper()
	ag := r.agent()
	for i := range n {
		r.srv.Enqueue(llmserver.TextReply(fmt.Sprintf("answer %d: %s", i, strings.Repeat("words and more words ", 8))))
		if _, err := ag.Send(context.Background(), fmt.Sprintf("question %d: %s", i, strings.Repeat("tell me about this ", 8))); err != nil {
			r.t.Fatal(err)
		}
	}
}

func TestSummarisesOldTurnsWhenNearTheWindow(t *testing.T) {
	r := newRig(t, agent.Options{})
	r.chat(7)
	before := len(r.srv.Requests())
	r.opts.ContextWindow = 600
	r.srv.Enqueue(llmserver.TextReply("SUMMARY: they asked questions 0 and 1."), llmserver.TextReply("answer 7"))
	s, err := r.agent().Send(context.Background(), "question 7")
	if err != nil {
		t.Fatal(err)
	}
	// History: system, then (user, assistant) per turn; turn 2 starts at 5.
	if s.Summary != "SUMMARY: they asked questions 0 and 1." || s.SummaryThrough != 5 || s.History[5].Role != state.RoleUser {
		t.Fatalf("summary %q through %d", s.Summary, s.SummaryThrough)
	}
	reqs := r.srv.Requests()[before:]
	if len(reqs) != 2 || len(reqs[0].Tools) != 0 || !strings.Contains(reqs[0].Messages[1].Content, "question 0") {
		t.Fatalf("the summariser's request: %+v", reqs[0])
	}
	sys, rest := reqs[1].Messages[0].Content, reqs[1].Messages[1:]
	if !strings.Contains(sys, "SUMMARY: they asked") || strings.Contains(rest[0].Content, "question 0") || !strings.Contains(rest[0].Content, "question 2") {
		t.Fatalf("after summarising, the model sees the summary and turns 2..7: system %q, first %q", sys, rest[0].Content)
	}
	// Summaries are versioned: the version before it has none.
	prev, err := r.store.At(context.Background(), r.session, s.Version-2)
	if err != nil || prev.Summary != "" {
		t.Fatalf("v%d summary %q (%v)", s.Version-2, prev.Summary, err)
	}
}

func TestOverflowSummarisesAndRetriesOnce(t *testing.T) {
	overflow := llmserver.Status(400, llmserver.ErrorBody("This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
		"invalid_request_error", "messages", "context_length_exceeded"))

	r := newRig(t, agent.Options{})
	r.chat(7)
	r.srv.Enqueue(overflow, llmserver.TextReply("SUMMARY"), llmserver.TextReply("fits now"))
	s, err := r.agent().Send(context.Background(), "question 7")
	if err != nil || s.FinalAnswer != "fits now" || s.Summary != "SUMMARY" {
		t.Fatalf("%v: answer %q summary %q", err, s.FinalAnswer, s.Summary)
	}

	// With nothing old enough to summarise, the task fails and says why.
	r = newRig(t, agent.Options{})
	r.chat(2)
	r.srv.Enqueue(overflow)
	s, err = r.agent().Send(context.Background(), "question 2")
	if err == nil || s.Phase != state.Error || !strings.Contains(s.ErrorMessage, "context window") {
		t.Fatalf("phase %s error %q", s.Phase, s.ErrorMessage)
	}
}
