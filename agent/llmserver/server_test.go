package llmserver_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"

	"retrace/agent/llmserver"
	"retrace/agent/llmtest"
)

func TestTextReply(t *testing.T) {
	srv := llmtest.NewServer(t)
	const answer = "Hello, wörld! 日本🌍 <b>&</b>"
	srv.Enqueue(llmserver.TextReply(answer, llmserver.WithUsage(812, 41)))

	tr := stream(t, newClient(srv), ask("hi"))
	if tr.err != nil {
		t.Fatal(tr.err)
	}
	if tr.text != answer {
		t.Errorf("text %q, want %q", tr.text, answer)
	}
	if len(tr.finish) != 1 || tr.finish[0] != openai.FinishReasonStop {
		t.Errorf("finish reasons %v", tr.finish)
	}
	if tr.usage == nil || tr.usage.PromptTokens != 812 || tr.usage.TotalTokens != 853 {
		t.Errorf("usage %+v", tr.usage)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || !reqs[0].Stream || !reqs[0].IncludeUsage || reqs[0].Messages[0].Content != "hi" ||
		reqs[0].Header.Get("Authorization") != "Bearer k" {
		t.Errorf("recorded %+v", reqs)
	}
	assertNoViolations(t, srv)
}

// TestToolCallThenAnswer is the exchange an agent's loop drives: the model
// calls two tools, the agent answers both, the model answers in text.
func TestToolCallThenAnswer(t *testing.T) {
	for _, d := range []llmserver.Dialect{llmserver.OpenAI, llmserver.Ollama, llmserver.Azure} {
		t.Run(d.String(), func(t *testing.T) {
			srv := llmtest.NewServer(t)
			calls := []llmserver.Call{
				{ID: "call_A1", Name: "read_file", Args: `{"path":"café/日本🌍.go","note":"a \"quoted\" \\ word"}`},
				{ID: "call_B2", Name: "list_dir", Args: `{}`},
			}
			srv.Enqueue(
				llmserver.ToolCallReply(calls, llmserver.WithDialect(d), llmserver.WithPieceSize(3)),
				llmserver.TextReply("Both read.", llmserver.WithDialect(d)),
			)
			client := newClient(srv)

			req := ask("read them")
			tr := stream(t, client, req)
			if tr.err != nil {
				t.Fatal(tr.err)
			}
			got := tr.callList()
			if len(got) != 2 || tr.finish[len(tr.finish)-1] != openai.FinishReasonToolCalls {
				t.Fatalf("calls %+v finish %v", got, tr.finish)
			}
			for i, c := range calls {
				if got[i].ID != c.ID || got[i].Function.Name != c.Name || got[i].Function.Arguments != c.Args {
					t.Errorf("call %d = %+v, want %+v", i, got[i], c)
				}
			}

			req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: got})
			for _, c := range got {
				req.Messages = append(req.Messages, openai.ChatCompletionMessage{
					Role: openai.ChatMessageRoleTool, ToolCallID: c.ID, Content: "ok",
				})
			}
			if tr = stream(t, client, req); tr.err != nil || tr.text != "Both read." {
				t.Fatalf("answer %q, %v", tr.text, tr.err)
			}
			assertNoViolations(t, srv)
		})
	}
}

func TestHandlerAnswersAfterQueue(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.SetHandler(func(r llmserver.Request) llmserver.Response {
		return llmserver.TextReply("echo: " + r.Messages[len(r.Messages)-1].Content)
	})
	srv.Enqueue(llmserver.ServerError())
	client := newClient(srv)

	var apiErr *openai.APIError
	if tr := stream(t, client, ask("one")); !errors.As(tr.err, &apiErr) || apiErr.HTTPStatusCode != 500 {
		t.Fatalf("queued 500 not served first: %v", tr.err)
	}
	if tr := stream(t, client, ask("two")); tr.err != nil || tr.text != "echo: two" {
		t.Fatalf("handler: %q, %v", tr.text, tr.err)
	}
	assertNoViolations(t, srv)
}

func TestRateLimitHeadersReachAWrappingClient(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmserver.RateLimit("2"), llmserver.TextReply("ok"))
	tap := &headerTap{}
	client := newClient(srv, func(c *openai.ClientConfig) { c.HTTPClient = tap })

	tr := stream(t, client, ask("hi"))
	var apiErr *openai.APIError
	if !errors.As(tr.err, &apiErr) || apiErr.HTTPStatusCode != http.StatusTooManyRequests ||
		apiErr.Code != "rate_limit_exceeded" {
		t.Fatalf("error %v", tr.err)
	}
	if got := tap.seen[0].Get("Retry-After"); got != "2" {
		t.Errorf("Retry-After %q, want 2", got)
	}
	if got := tap.seen[0].Get("x-ratelimit-remaining-requests"); got != "0" {
		t.Errorf("x-ratelimit-remaining-requests %q", got)
	}
	if tr := stream(t, client, ask("hi")); tr.err != nil || tr.text != "ok" {
		t.Fatalf("retry: %q, %v", tr.text, tr.err)
	}
}

func TestStatusWithHTMLBody(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmserver.Status(502, "<html><body>Bad Gateway</body></html>"))
	tap := &headerTap{}
	tr := stream(t, newClient(srv, func(c *openai.ClientConfig) { c.HTTPClient = tap }), ask("hi"))
	var reqErr *openai.RequestError
	if !errors.As(tr.err, &reqErr) || reqErr.HTTPStatusCode != 502 || !strings.Contains(string(reqErr.Body), "Bad Gateway") {
		t.Fatalf("error %v", tr.err)
	}
	if ct := tap.seen[0].Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("Content-Type %q", ct)
	}
}

func TestResetBeforeResponse(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmserver.Reset())
	tr := stream(t, newClient(srv), ask("hi"))
	var opErr *net.OpError
	if !errors.As(tr.err, &opErr) {
		t.Fatalf("error %v (%T), want a *net.OpError", tr.err, tr.err)
	}
}

func TestResetMidStream(t *testing.T) {
	srv := llmtest.NewServer(t)
	c := llmserver.Chunker{}
	srv.Enqueue(llmserver.Stream(c.Role(), c.Text("partial"), llmserver.ResetNow()))
	tr := stream(t, newClient(srv), ask("hi"))
	var opErr *net.OpError
	if !errors.As(tr.err, &opErr) {
		t.Fatalf("error %v (%T), want a *net.OpError", tr.err, tr.err)
	}
}

func TestCancelDuringBlock(t *testing.T) {
	srv := llmtest.NewServer(t)
	c := llmserver.Chunker{}
	srv.Enqueue(llmserver.Stream(c.Role(), c.Text("thinking"), llmserver.Block()))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := newClient(srv).CreateChatCompletionStream(ctx, ask("hi"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 2 { // the role chunk and the text reach the client before the block
		if _, err := s.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	if _, err := s.Recv(); !errors.Is(err, context.Canceled) {
		t.Fatalf("after cancel: %v", err)
	}
}

// TestCloseReleasesBlockedStream proves a stream left blocked (the test
// forgot to cancel) ends when the server closes, instead of hanging.
func TestCloseReleasesBlockedStream(t *testing.T) {
	srv, err := llmserver.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := llmserver.Chunker{}
	srv.Enqueue(llmserver.Stream(c.Role(), llmserver.Block(), c.Text("never")))
	s, err := newClient(srv).CreateChatCompletionStream(context.Background(), ask("hi"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Recv(); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	srv.Close() // twice is fine
	if chunk, err := s.Recv(); err == nil {
		t.Fatalf("stream went on after Close: %+v", chunk)
	}
}

func TestPauseDelaysWithoutLosingBytes(t *testing.T) {
	srv := llmtest.NewServer(t)
	c := llmserver.Chunker{}
	srv.Enqueue(llmserver.Stream(c.Role(), c.Text("slow"), llmserver.Pause(1), c.Text(" stream"), c.Finish("stop"), llmserver.Done()))
	if tr := stream(t, newClient(srv), ask("hi")); tr.err != nil || tr.text != "slow stream" {
		t.Fatalf("%q, %v", tr.text, tr.err)
	}
}

func TestNonStreamCompletions(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(
		llmserver.ToolCallCompletion([]llmserver.Call{{ID: "call_B2", Name: "read_file", Args: `{"path":"a.go"}`}}),
		llmserver.TextCompletion("done"),
	)
	client := newClient(srv)
	resp, err := client.CreateChatCompletion(context.Background(), ask("hi"))
	if err != nil {
		t.Fatal(err)
	}
	msg := resp.Choices[0].Message
	if resp.Choices[0].FinishReason != openai.FinishReasonToolCalls || len(msg.ToolCalls) != 1 ||
		msg.ToolCalls[0].Function.Arguments != `{"path":"a.go"}` || resp.Usage.TotalTokens != 120 {
		t.Fatalf("tool call completion %+v", resp)
	}
	resp, err = client.CreateChatCompletion(context.Background(), ask("hi"))
	if err != nil || resp.Choices[0].Message.Content != "done" {
		t.Fatalf("text completion %+v, %v", resp, err)
	}
	if srv.Requests()[0].Stream {
		t.Error(`recorded "stream":true on a non-stream call`)
	}
}
