package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"

	"retrace/agent"
	"retrace/agent/llmserver"
	"retrace/state"
)

// cl100k is tiktoken's cl100k_base, the encoding the test model
// "gpt-test" is counted with (agent/tokens: everything that is not an
// OpenAI gpt-4o-or-later model), loaded here directly so that the tests
// count requests without agent/tokens.
var cl100k = sync.OnceValues(func() (*tiktoken.Tiktoken, error) {
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
	return tiktoken.GetEncoding("cl100k_base")
})

// requestTokens counts the messages of a request as OpenAI's cookbook
// does (the rule agent/tokens documents): 3 tokens of framing per message
// plus its role and content, and 3 that prime the reply. Tool definitions
// are not counted (agent/tokens says so too).
func requestTokens(t *testing.T, msgs []llmserver.Message) int {
	t.Helper()
	enc, err := cl100k()
	if err != nil {
		t.Fatal(err)
	}
	n := 3
	for _, m := range msgs {
		if len(m.ToolCalls) > 0 || m.Name != "" {
			t.Fatalf("requestTokens counts plain messages only: %+v", m)
		}
		n += 3 + len(enc.EncodeOrdinary(m.Role)) + len(enc.EncodeOrdinary(m.Content))
	}
	return n
}

// README: "Near 80% of the context window the oldest turns are
// summarised." A request of n tokens is sent as it is when the window is
// just large enough for n to be within 80 % of it, and summarised first
// when the window is one token smaller. So a threshold of 79 %, 81 % or
// 100 % (or 80 % inclusive) fails one of the two.
func TestSummarisesAboveEightyPercentOfTheWindow(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, agent.Options{})
	r.opts.Workspace = "/home/dev/project" // the system prompt is the same on every run
	r.chat(7)
	rest, err := r.store.Head(ctx, r.session)
	if err != nil {
		t.Fatal(err)
	}

	// The request for the next question, in a window far larger than the
	// conversation: sent whole, system prompt and 15 messages.
	r.srv.Enqueue(llmserver.TextReply("answer 7"))
	if _, err := r.agent().Send(ctx, "question 7"); err != nil {
		t.Fatal(err)
	}
	reqs := r.srv.Requests()
	whole := reqs[len(reqs)-1]
	if len(whole.Messages) != 16 {
		t.Fatalf("the request in a large window has %d messages, want 16", len(whole.Messages))
	}
	n := requestTokens(t, whole.Messages)
	fits := (5*n + 3) / 4 // the smallest window w with n <= 80 % of w: ceil(n / 0.8)

	for _, c := range []struct {
		window     int
		summarised bool
	}{{fits, false}, {fits - 1, true}} {
		t.Run(fmt.Sprintf("%d tokens in a window of %d", n, c.window), func(t *testing.T) {
			if err := r.store.SetHead(ctx, r.session, rest.Version); err != nil {
				t.Fatal(err)
			}
			r.opts.ContextWindow = c.window
			before := len(r.srv.Requests())
			if c.summarised {
				r.srv.Enqueue(llmserver.TextReply("SUMMARY"))
			}
			r.srv.Enqueue(llmserver.TextReply("answer 7"))
			s, err := r.agent().Send(ctx, "question 7")
			if err != nil || s.FinalAnswer != "answer 7" {
				t.Fatalf("answer %q: %v", s.FinalAnswer, err)
			}
			reqs := r.srv.Requests()[before:]
			if !c.summarised {
				if len(reqs) != 1 || s.Summary != "" || requestTokens(t, reqs[0].Messages) != n {
					t.Fatalf("%d requests, summary %q; want the whole request of %d tokens alone", len(reqs), s.Summary, n)
				}
				return
			}
			// Eight turns: the first two are folded, the last six kept.
			if len(reqs) != 2 || s.Summary != "SUMMARY" || s.SummaryThrough != 5 {
				t.Fatalf("%d requests, summary %q through %d; want the summariser's, then the answer's", len(reqs), s.Summary, s.SummaryThrough)
			}
			if m := reqs[1].Messages; len(m) != 12 || m[1].Content != s.History[5].Content {
				t.Fatalf("after summarising the model sees %d messages, from %q", len(m), m[1].Content)
			}
		})
	}
}

// The iteration limit allows exactly MaxIterations model replies in a
// task; a task that needs one more ends in the error phase with the
// reason, after MaxIterations requests.
func TestIterationLimitIsExact(t *testing.T) {
	ctx := context.Background()
	// plan, two tool rounds, the answer: four replies.
	four := []llmserver.Response{plan("list the files"), llmserver.ToolCallReply(call("call_1", "list_files", `{}`)),
		llmserver.ToolCallReply(call("call_2", "list_files", `{}`)), llmserver.TextReply("Listed.")}
	r := newRig(t, agent.Options{MaxIterations: 4})
	r.srv.Enqueue(four...)
	s, err := r.agent().Send(ctx, "list")
	if err != nil || s.Phase != state.Done || s.Iteration != 4 || len(r.srv.Requests()) != 4 {
		t.Fatalf("four replies with a limit of 4: phase %s, iteration %d, %d requests: %v", s.Phase, s.Iteration, len(r.srv.Requests()), err)
	}
	// The limit is per task: the next task has four replies of its own.
	r.srv.Enqueue(four...)
	if s, err = r.agent().Send(ctx, "list again"); err != nil || s.Phase != state.Done {
		t.Fatalf("the next task: phase %s: %v", s.Phase, err)
	}

	// Five replies needed: the fifth is never asked for.
	r = newRig(t, agent.Options{MaxIterations: 4})
	r.srv.Enqueue(plan("list the files"), llmserver.ToolCallReply(call("call_1", "list_files", `{}`)),
		llmserver.ToolCallReply(call("call_2", "list_files", `{}`)), llmserver.ToolCallReply(call("call_3", "list_files", `{}`)), llmserver.TextReply("Listed."))
	s, err = r.agent().Send(ctx, "list")
	const want = "stopped after 4 model replies without finishing (the iteration limit); raise --max-iterations or split the task"
	var te *agent.TaskError
	if !errors.As(err, &te) || te.Message != want || s.Phase != state.Error || s.ErrorMessage != want {
		t.Fatalf("phase %s, error %q (%v); want %q", s.Phase, s.ErrorMessage, err, want)
	}
	if n := len(r.srv.Requests()); n != 4 {
		t.Fatalf("%d model calls, want 4", n)
	}
	if len(s.OpenCalls()) != 0 {
		t.Fatalf("open calls after the limit: %v", s.OpenCalls())
	}
}

// Without a limit in the options (zero or negative), a task gets 20
// model replies, as the configuration file's comment says.
func TestIterationLimitDefaultsToTwenty(t *testing.T) {
	for _, limit := range []int{0, -1} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			r := newRig(t, agent.Options{MaxIterations: limit})
			r.srv.Enqueue(plan("loop"))
			for i := range 30 {
				r.srv.Enqueue(llmserver.ToolCallReply(call(fmt.Sprintf("call_%d", i), "list_files", `{}`)))
			}
			s, err := r.agent().Send(context.Background(), "loop")
			if err == nil || !strings.HasPrefix(s.ErrorMessage, "stopped after 20 model replies") || len(r.srv.Requests()) != 20 {
				t.Fatalf("error %q after %d requests (%v)", s.ErrorMessage, len(r.srv.Requests()), err)
			}
		})
	}
}

// The last six turns are always kept whole: with six there is nothing
// to summarise, with seven the first is folded and only the first.
func TestCompactKeepsTheLastSixTurns(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, agent.Options{})
	r.chat(6)
	before, err := r.store.Head(ctx, r.session)
	if err != nil {
		t.Fatal(err)
	}
	n := len(r.srv.Requests())
	if err := r.agent().Compact(ctx); !errors.Is(err, agent.ErrNothingToSummarise) {
		t.Fatalf("compact with six turns: %v", err)
	}
	if head, _ := r.store.Head(ctx, r.session); head.Version != before.Version || len(r.srv.Requests()) != n {
		t.Fatalf("compact with six turns made v%d (was v%d) and %d requests", head.Version, before.Version, len(r.srv.Requests())-n)
	}

	r.chat(1)
	r.srv.Enqueue(llmserver.TextReply("SUMMARY of turn 0"))
	r.obs.notices = nil
	if err := r.agent().Compact(ctx); err != nil {
		t.Fatal(err)
	}
	head, err := r.store.Head(ctx, r.session)
	if err != nil {
		t.Fatal(err)
	}
	// History: system 0, then question i at 1+2i and its answer at 2+2i.
	if head.Summary != "SUMMARY of turn 0" || head.SummaryThrough != 3 || head.Phase != state.Done {
		t.Fatalf("summary %q through %d, phase %s", head.Summary, head.SummaryThrough, head.Phase)
	}
	reqs := r.srv.Requests()
	folded := reqs[len(reqs)-1].Messages[1].Content
	if !strings.Contains(folded, "user: question 0:") || !strings.Contains(folded, "assistant: answer 0:") || strings.Contains(folded, "question 1") {
		t.Fatalf("the summariser was given %q", folded)
	}
	if want := []string{"summarising 2 older messages to fit the context window"}; fmt.Sprint(r.obs.notices) != fmt.Sprint(want) {
		t.Fatalf("notices %q, want %q", r.obs.notices, want)
	}
}

// A context overflow is answered by summarising and one more try: a
// second overflow ends the task. With only the last six turns there is
// nothing to summarise, and the task ends at the first.
func TestOverflowIsRetriedOnceAfterSummarising(t *testing.T) {
	ctx := context.Background()
	const tooLong = "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens."
	overflow := llmserver.Status(400, llmserver.ErrorBody(tooLong, "invalid_request_error", "messages", "context_length_exceeded"))

	r := newRig(t, agent.Options{})
	r.chat(6)
	before := len(r.srv.Requests())
	r.srv.Enqueue(overflow, llmserver.TextReply("SUMMARY"), overflow, llmserver.TextReply("never sent"))
	s, err := r.agent().Send(ctx, "question 6")
	if err == nil || s.Phase != state.Error || !strings.Contains(s.ErrorMessage, tooLong) || s.Summary != "SUMMARY" {
		t.Fatalf("phase %s, error %q, summary %q", s.Phase, s.ErrorMessage, s.Summary)
	}
	if n := len(r.srv.Requests()) - before; n != 3 {
		t.Fatalf("%d requests; want the call, the summariser's, and one more try", n)
	}

	// Six turns with the new question: nothing may be folded.
	r = newRig(t, agent.Options{})
	r.chat(5)
	before = len(r.srv.Requests())
	r.srv.Enqueue(overflow, llmserver.TextReply("never sent"))
	s, err = r.agent().Send(ctx, "question 5")
	want := "the last 6 turns alone are too long for this model, so there is nothing left to summarise"
	if err == nil || s.Phase != state.Error || !strings.HasSuffix(s.ErrorMessage, want) || !strings.Contains(s.ErrorMessage, tooLong) {
		t.Fatalf("phase %s, error %q", s.Phase, s.ErrorMessage)
	}
	if n := len(r.srv.Requests()) - before; n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}
