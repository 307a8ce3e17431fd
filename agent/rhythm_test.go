package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"retrace/agent"
	"retrace/agent/llmserver"
	"retrace/agent/tokens"
	"retrace/state"
)

// The loop follows the model's turns: every request is a reply the task
// needs, so a task takes exactly as many requests as its script has
// replies. Every request of every task is checked by the strict server,
// which refuses one that ends with the model's own words or has two of
// its replies in a row. The answer is in the history once.
func TestEachReplyIsOneRequest(t *testing.T) {
	reads := func(n int) []llmserver.Response {
		var out []llmserver.Response
		for i := range n {
			out = append(out, llmserver.ToolCallReply(call(fmt.Sprintf("call_r%d", i), "list_files", `{}`)))
		}
		return out
	}
	script := func(parts ...[]llmserver.Response) []llmserver.Response {
		var out []llmserver.Response
		for _, p := range parts {
			out = append(out, p...)
		}
		return append(out, llmserver.TextReply("The answer."))
	}
	one := func(r llmserver.Response) []llmserver.Response { return []llmserver.Response{r} }
	for _, c := range []struct {
		name    string
		replies []llmserver.Response
		deny    bool
	}{
		{"a direct answer", script(), false},
		{"a plan and one tool round", script(one(plan("look")), reads(1)), false},
		{"a plan and two tool rounds", script(one(plan("look")), reads(2)), false},
		{"a plan and five tool rounds", script(one(plan("look")), reads(5)), false},
		{"a plan and its first call in one reply", script(one(llmserver.ToolCallReply([]llmserver.Call{
			{ID: "call_plan", Name: "set_plan", Args: `{"steps":["look"]}`}, {ID: "call_r", Name: "list_files", Args: `{}`}}))), false},
		{"a denied approval", script(one(plan("write")),
			one(llmserver.ToolCallReply(call("call_w", "write_file", `{"path":"x.txt","content":"x"}`)))), true},
		{"a re-plan", script(one(plan("look")), reads(1),
			one(llmserver.ToolCallReply(call("call_re", "set_plan", `{"steps":["look elsewhere","compare"]}`))), reads(1)), false},
		{"commentary before the calls", script(one(plan("look")),
			one(llmserver.ToolCallReply(call("call_c", "list_files", `{}`), llmserver.WithText("Let me list the files.")))), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, agent.Options{})
			if !c.deny {
				r.approve.decisions = []agent.Decision{{Approved: true}}
			}
			r.srv.Enqueue(c.replies...)
			s, err := r.agent().Send(context.Background(), "do it")
			if err != nil || s.Phase != state.Done || s.FinalAnswer != "The answer." {
				t.Fatalf("phase %s answer %q: %v", s.Phase, s.FinalAnswer, err)
			}
			if n := len(r.srv.Requests()); n != len(c.replies) {
				t.Fatalf("%d requests for %d replies: the loop must add none", n, len(c.replies))
			}
			if s.Iteration != len(c.replies) {
				t.Fatalf("iteration %d, want %d", s.Iteration, len(c.replies))
			}
			answers := 0
			for _, m := range s.History {
				if strings.Contains(m.Content, "The answer.") {
					answers++
				}
			}
			if answers != 1 {
				t.Fatalf("the answer is in the history %d times, want once", answers)
			}
			if c.deny && (len(r.approve.asked) != 1 || r.file("x.txt") != "") {
				t.Fatalf("asked %v, x.txt %q", r.approve.asked, r.file("x.txt"))
			}
		})
	}
}

// BenchmarkRequestsPerTask measures what a task costs in requests and in
// prompt tokens (tiktoken's count of each request body, tools included),
// for a direct answer and for a plan with 1, 2 and 5 tool rounds. The
// model is a handler that plans, calls list_files until it has done so n
// times, then answers: it plays along with whatever the loop asks, so the
// figures say what the loop costs.
//
//	go test ./agent -run '^$' -bench RequestsPerTask -benchtime 1x
func BenchmarkRequestsPerTask(b *testing.B) {
	count := tokens.NewCounter("gpt-4o-mini")
	for _, rounds := range []int{-1, 1, 2, 5} {
		name := fmt.Sprintf("plan+%d-rounds", rounds)
		if rounds < 0 {
			name = "direct-answer"
		}
		b.Run(name, func(b *testing.B) {
			var requests, prompt int
			for b.Loop() {
				r := newRig(b, agent.Options{})
				r.srv.SetHandler(func(req llmserver.Request) llmserver.Response {
					return scriptedTask(req, rounds)
				})
				if s, err := r.agent().Send(context.Background(), "look around"); err != nil || s.Phase != state.Done {
					b.Fatalf("phase %s: %v", s.Phase, err)
				}
				reqs := r.srv.Requests()
				requests += len(reqs)
				for _, req := range reqs {
					prompt += count.Text(string(req.Raw))
				}
			}
			b.ReportMetric(float64(requests)/float64(b.N), "requests/task")
			b.ReportMetric(float64(prompt)/float64(b.N), "prompt-tokens/task")
		})
	}
}

// scriptedTask answers at once (rounds < 0), or plans, calls list_files
// rounds times, and answers; a request that is none of these (a step's
// report the loop asks for) gets a short text.
func scriptedTask(req llmserver.Request, rounds int) llmserver.Response {
	if rounds < 0 {
		return llmserver.TextReply("Hello!")
	}
	planned, listed := false, 0
	for _, m := range req.Messages {
		for _, c := range m.ToolCalls {
			planned = planned || c.Name == "set_plan"
			if c.Name == "list_files" {
				listed++
			}
		}
	}
	switch {
	case !planned:
		return plan("look around")
	case listed < rounds:
		return llmserver.ToolCallReply(call(fmt.Sprintf("call_l%d", listed), "list_files", `{}`))
	}
	return llmserver.TextReply("I looked around.")
}

// A task interrupted while a command ran is taken up again by Resume: a
// resumed event, then the model reads the results (the interrupted call
// says so) and goes on. At rest, with nothing unfinished, Resume does
// nothing.
func TestResumeTakesUpAnInterruptedTask(t *testing.T) {
	r := newRig(t, agent.Options{Allowed: []string{"run_command"}})
	r.srv.Enqueue(plan("wait"), llmserver.ToolCallReply(call("call_s", "run_command", `{"command":"sleep 30"}`)))
	ctx, cancel := context.WithCancel(context.Background())
	r.obs.onState = func(s state.State) {
		if n := len(s.Memory.ToolCalls); n > 1 && !s.Memory.ToolCalls[n-1].StartedAt.IsZero() {
			cancel()
		}
	}
	if _, err := r.agent().Send(ctx, "wait a while"); err == nil {
		t.Fatal("the task was not interrupted")
	}
	r.obs.onState = nil
	sent := len(r.srv.Requests())
	r.srv.Enqueue(llmserver.TextReply("The wait was cut short."))
	s, err := r.agent().Resume(context.Background())
	if err != nil || s.Phase != state.Done || s.FinalAnswer != "The wait was cut short." {
		t.Fatalf("resumed: %s %q: %v", s.Phase, s.FinalAnswer, err)
	}
	reqs := r.srv.Requests()
	if len(reqs) != sent+1 {
		t.Fatalf("%d requests to go on, want 1", len(reqs)-sent)
	}
	m := reqs[sent].Messages
	if last := m[len(m)-1]; last.Role != "tool" || last.ToolCallID != "call_s" || !strings.Contains(last.Content, "interrupted") {
		t.Fatalf("the request to go on ends with %+v", last)
	}
	if s.Memory.CurrentGoal != "wait a while" || len(s.Memory.Plan) != 1 || s.Memory.Plan[0].Status != state.StepDone {
		t.Fatalf("the task went on with its goal and plan: %q %+v", s.Memory.CurrentGoal, s.Memory.Plan)
	}
	if again, err := r.agent().Resume(context.Background()); err != nil || again.Version != s.Version || len(r.srv.Requests()) != sent+1 {
		t.Fatalf("resume at rest: v%d (was v%d), %d requests: %v", again.Version, s.Version, len(r.srv.Requests())-sent-1, err)
	}
}

// Tool-call ids are the server's, not keys: a server that numbers its
// calls per reply (call_0_0 in every reply) gets each task's call run.
func TestRepeatedCallIDsRunEveryTime(t *testing.T) {
	r := newRig(t, agent.Options{})
	for i, task := range []string{"list", "list again"} {
		r.srv.Enqueue(llmserver.ToolCallReply(call("call_0_0", "list_files", `{}`)), llmserver.TextReply(fmt.Sprintf("Listed %d.", i+1)))
		s, err := r.agent().Send(context.Background(), task)
		if err != nil || s.Phase != state.Done {
			t.Fatalf("task %d: %s: %v", i+1, s.Phase, err)
		}
		last := s.Memory.ToolCalls[len(s.Memory.ToolCalls)-1]
		if last.ID != "call_0_0" || last.Error != "" || last.StartedAt.IsZero() || !last.Finished() {
			t.Fatalf("task %d's call was not run: %+v", i+1, last)
		}
		if n := len(s.Memory.ToolCalls); n != i+1 {
			t.Fatalf("task %d: %d calls in the log, want %d", i+1, n, i+1)
		}
	}
	// The ids go back as the server gave them.
	reqs := r.srv.Requests()
	m := reqs[len(reqs)-1].Messages
	if last := m[len(m)-1]; last.Role != "tool" || last.ToolCallID != "call_0_0" {
		t.Fatalf("the last request ends with %+v", last)
	}
}

// A reply's thinking is kept with its message, and never sent back: the
// server holds every request to DeepSeek R1's rule, which refuses any
// message that carries reasoning_content.
func TestThinkingIsKeptAndNotSentBack(t *testing.T) {
	r := newRig(t, agent.Options{})
	r.srv.Rules.RejectReasoningEcho = true
	r.srv.Enqueue(
		llmserver.ToolCallReply(call("call_l", "list_files", `{}`), llmserver.WithReasoning("list first")),
		llmserver.TextReply("Two files.", llmserver.WithReasoning("count them")))
	s, err := r.agent().Send(context.Background(), "what is here?")
	if err != nil || s.FinalAnswer != "Two files." {
		t.Fatalf("%s %q: %v", s.Phase, s.FinalAnswer, err)
	}
	var thoughts []string
	for _, m := range s.History {
		if m.Reasoning != "" {
			thoughts = append(thoughts, m.Role+": "+m.Reasoning)
		}
	}
	if want := []string{"assistant: list first", "assistant: count them"}; fmt.Sprint(thoughts) != fmt.Sprint(want) {
		t.Fatalf("the thinking kept: %q, want %q", thoughts, want)
	}
	reqs := r.srv.Requests()
	if len(reqs) != 2 || strings.Contains(string(reqs[1].Raw), "list first") {
		t.Fatalf("%d requests; the second carries the thinking: %s", len(reqs), reqs[len(reqs)-1].Raw)
	}
}

// A task records the endpoint it talks to on its user_message when the
// session has not recorded that one yet, and only then: the next task to
// the same endpoint carries none, and an agent that names no model
// records nothing.
func TestSendRecordsTheEndpointWhenItChanges(t *testing.T) {
	ctx := context.Background()
	ep := state.Endpoint{Model: "gpt-test", BaseURL: "http://localhost:8080/v1", KeyEnv: "LOCAL_KEY"}
	other := state.Endpoint{Model: "gpt-other", BaseURL: ep.BaseURL, KeyEnv: ep.KeyEnv}
	r := newRig(t, agent.Options{})
	for _, c := range []struct {
		endpoint state.Endpoint // the agent's
		recorded *state.Endpoint
		head     state.Endpoint
	}{
		{state.Endpoint{}, nil, state.Endpoint{}},
		{ep, &ep, ep},
		{ep, nil, ep},
		{other, &other, other},
	} {
		r.opts.Endpoint = c.endpoint
		r.srv.Enqueue(llmserver.TextReply("ok"))
		s, err := r.agent().Send(ctx, "hi")
		if err != nil {
			t.Fatal(err)
		}
		x, err := r.store.Export(ctx, r.session)
		if err != nil {
			t.Fatal(err)
		}
		var msg state.Event // the task's user_message
		for _, rec := range x.Checkpoints {
			if rec.Data.Kind == state.UserMessage {
				msg = rec.Data
			}
		}
		same := (msg.Endpoint == nil) == (c.recorded == nil) && (msg.Endpoint == nil || *msg.Endpoint == *c.recorded)
		if !same || s.Endpoint != c.head {
			t.Fatalf("agent at %+v: the user_message recorded %+v, the head has %+v; want %+v and %+v", c.endpoint, msg.Endpoint, s.Endpoint, c.recorded, c.head)
		}
	}
}

// Send refuses a message over state.MaxMessage, and writes nothing.
func TestSendRefusesAMessageTooLong(t *testing.T) {
	r := newRig(t, agent.Options{})
	s, err := r.agent().Send(context.Background(), strings.Repeat("a", state.MaxMessage+1))
	if !errors.Is(err, agent.ErrMessageTooLong) || s.Version != 0 || len(r.srv.Requests()) != 0 {
		t.Fatalf("v%d, %d requests: %v", s.Version, len(r.srv.Requests()), err)
	}
}
