package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"retrace/agent/llm"
	"retrace/agent/llmserver"
	"retrace/agent/llmtest"
	"retrace/state"
)

// harness is a client on a fake server, recording what it was told.
type harness struct {
	srv    *llmtest.Server
	client *llm.Client
	mu     sync.Mutex
	waits  []time.Duration
	deltas map[llm.DeltaKind]string
	retry  []llm.Retry
}

// testKey is the harness's API key: as long as a real one, so it is
// scrubbed from what the server sends (short ones are placeholders).
const testKey = "sk-test-0123456789abcdef"

func newHarness(t *testing.T, mod ...func(*llm.Config)) *harness {
	t.Helper()
	h := &harness{srv: llmtest.NewServer(t), deltas: map[llm.DeltaKind]string{}}
	cfg := llm.Config{BaseURL: h.srv.URL(), APIKey: testKey, Model: "gpt-test",
		Sleep: func(_ context.Context, d time.Duration) error {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.waits = append(h.waits, d)
			return nil
		}}
	for _, m := range mod {
		m(&cfg)
	}
	h.client = llm.New(cfg)
	t.Cleanup(func() {
		if v := h.srv.Violations(); len(v) != 0 {
			t.Errorf("requests a strict server would reject: %v", v)
		}
	})
	return h
}

func (h *harness) stream(t *testing.T, restartOK bool) (llm.Turn, error) {
	t.Helper()
	req := llm.Request{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}, RestartOK: restartOK,
		Tools: []llm.Tool{{Name: "read_file", Description: "read", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}}}
	return h.client.Stream(context.Background(), req, llm.Observer{
		Delta: func(k llm.DeltaKind, s string) { h.deltas[k] += s },
		Retry: func(r llm.Retry) { h.retry = append(h.retry, r) },
	})
}

func (h *harness) ok(t *testing.T, restartOK bool) llm.Turn {
	t.Helper()
	turn, err := h.stream(t, restartOK)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	return turn
}

func wantKind(t *testing.T, err error, kind llm.Kind) *llm.Error {
	t.Helper()
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != kind {
		t.Fatalf("got %v (%#v), want kind %d", err, err, kind)
	}
	return e
}

func calls(t *testing.T, turn llm.Turn, want ...state.ToolRequest) {
	t.Helper()
	if len(turn.Calls) != len(want) {
		t.Fatalf("got %d calls %+v, want %d", len(turn.Calls), turn.Calls, len(want))
	}
	for i, w := range want {
		got := turn.Calls[i]
		if got.ArgsError != "" {
			t.Errorf("call %d: %s", i, got.ArgsError)
		}
		if (w.ID != "" && got.ID != w.ID) || got.Name != w.Name || got.Arguments != w.Arguments {
			t.Errorf("call %d = %+v, want %+v", i, got.ToolRequest, w)
		}
	}
}

var c = llmserver.Chunker{}

// §5.1: a baseline OpenAI tool stream, arguments in 40 pieces.
func TestBaselineToolStream(t *testing.T) {
	h := newHarness(t)
	args := `{"path":"internal/store/very/long/path/to/a/file.go","start_line":1,"end_line":40}`
	h.srv.Enqueue(llmserver.ToolCallReply([]llmserver.Call{{ID: "call_A1", Name: "read_file", Args: args}},
		llmserver.WithPieceSize(2), llmserver.WithUsage(812, 41)))
	turn := h.ok(t, false)
	calls(t, turn, state.ToolRequest{ID: "call_A1", Name: "read_file", Arguments: args})
	if turn.Usage != (state.Usage{PromptTokens: 812, CompletionTokens: 41}) || turn.Finish != "tool_calls" {
		t.Fatalf("usage %+v finish %q", turn.Usage, turn.Finish)
	}
}

// §5.2: bytes split at every byte, and a surrogate pair split over events.
func TestUTF8Boundaries(t *testing.T) {
	h := newHarness(t)
	args := `{"path":"café/日本🌍"}`
	h.srv.Enqueue(llmserver.Stream(llmserver.Bytewise(c.RoleToolStart(0, "call_1", "read_file")),
		llmserver.Bytewise(c.ToolArgs(0, args)), c.Finish("tool_calls"), llmserver.Done()))
	calls(t, h.ok(t, false), state.ToolRequest{ID: "call_1", Name: "read_file", Arguments: args})

	h.srv.Enqueue(llmserver.Stream(c.RoleToolStart(0, "call_2", "read_file"),
		c.Delta(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"\ud83d"}}]}`),
		c.Delta(`{"tool_calls":[{"index":0,"function":{"arguments":"\ude00\"}"}}]}`),
		c.Finish("tool_calls"), llmserver.Done()))
	turn := h.ok(t, false)
	if len(turn.Calls) != 1 || turn.Calls[0].ArgsError != "" || !json.Valid([]byte(turn.Calls[0].Arguments)) {
		t.Fatalf("a split surrogate pair must still give parseable arguments: %+v", turn.Calls)
	}
}

// §5.3, §5.4: parallel calls sequential, interleaved, and two entries in
// one delta.
func TestParallelCalls(t *testing.T) {
	want := []state.ToolRequest{
		{ID: "call_a", Name: "read_file", Arguments: `{"path":"a.go"}`},
		{ID: "call_b", Name: "list_files", Arguments: `{"pattern":"*.go"}`},
	}
	h := newHarness(t)
	h.srv.Enqueue(llmserver.ToolCallReply([]llmserver.Call{
		{ID: "call_a", Name: "read_file", Args: want[0].Arguments}, {ID: "call_b", Name: "list_files", Args: want[1].Arguments},
	}))
	calls(t, h.ok(t, false), want...)

	h.srv.Enqueue(llmserver.Stream(c.Role(),
		c.Delta(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read_file","arguments":""}},{"index":1,"id":"call_b","type":"function","function":{"name":"list_files","arguments":"{\"pat"}}]}`),
		c.ToolArgs(0, `{"path":`), c.ToolArgs(1, `tern":"*.go"}`), c.ToolArgs(0, `"a.go"}`),
		c.Finish("tool_calls"), llmserver.Done()))
	calls(t, h.ok(t, false), want...)

	// One delta holding the same index twice: {index,id,name} + {index,arguments}.
	h.srv.Enqueue(llmserver.Stream(c.Role(),
		c.Delta(`{"tool_calls":[{"index":0,"id":"functions.read_file:0","type":"function","function":{"name":"read_file"}},{"index":0,"function":{"arguments":"{\"path\":\"a.go\"}"}}]}`),
		c.Finish("tool_calls"), llmserver.Done()))
	calls(t, h.ok(t, false), state.ToolRequest{ID: "functions.read_file:0", Name: "read_file", Arguments: `{"path":"a.go"}`})
}

// §5.6, §5.7: indexes from 1, no index at all, and Ollama's every call at
// index 0 with different ids.
func TestOddIndexes(t *testing.T) {
	h := newHarness(t)
	h.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("Let me look. "), c.ToolStart(1, "call_1", "read_file"),
		c.ToolArgs(1, `{"path":"a.go"}`), c.Finish("tool_calls"), llmserver.Done()))
	turn := h.ok(t, false)
	calls(t, turn, state.ToolRequest{ID: "call_1", Name: "read_file", Arguments: `{"path":"a.go"}`})
	if turn.Content != "Let me look. " {
		t.Fatalf("content %q", turn.Content)
	}

	h.srv.Enqueue(llmserver.Stream(c.Role(),
		c.Delta(`{"tool_calls":[{"id":"call_x","type":"function","function":{"name":"read_file","arguments":"{\"path\""}}]}`),
		c.Delta(`{"tool_calls":[{"function":{"arguments":":\"b.go\"}"}}]}`),
		c.Finish("tool_calls"), llmserver.Done()))
	calls(t, h.ok(t, false), state.ToolRequest{ID: "call_x", Name: "read_file", Arguments: `{"path":"b.go"}`})

	o := llmserver.Chunker{Dialect: llmserver.Ollama}
	h.srv.Enqueue(llmserver.Stream(o.Role(),
		o.ToolWhole(0, "call_ab12cd34", "read_file", `{"path":"a.go"}`),
		o.ToolWhole(0, "call_ef56gh78", "read_file", `{"path":"b.go"}`),
		o.Finish("tool_calls"), llmserver.Done()))
	calls(t, h.ok(t, false),
		state.ToolRequest{ID: "call_ab12cd34", Name: "read_file", Arguments: `{"path":"a.go"}`},
		state.ToolRequest{ID: "call_ef56gh78", Name: "read_file", Arguments: `{"path":"b.go"}`})
}

// §5.9, §5.10, §2.4: arguments as an object, a numeric id, no arguments,
// a name repeated in every fragment, no id at all.
func TestOddCallShapes(t *testing.T) {
	h := newHarness(t)
	h.srv.Enqueue(llmserver.Stream(c.Role(),
		c.Delta(`{"tool_calls":[{"index":0,"id":7,"type":"function","function":{"name":"read_file","arguments":{"path":"a.go"}}}]}`),
		c.Finish("tool_calls"), llmserver.Done()))
	turn := h.ok(t, false)
	calls(t, turn, state.ToolRequest{ID: "7", Name: "read_file", Arguments: `{"path":"a.go"}`})
	if len(turn.Notes) == 0 {
		t.Error("arguments sent as an object should be noted")
	}

	h.srv.Enqueue(llmserver.Stream(c.Role(),
		c.Delta(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"list_files"}}]}`),
		c.Finish("tool_calls"), llmserver.Done()))
	calls(t, h.ok(t, false), state.ToolRequest{ID: "call_1", Name: "list_files", Arguments: "{}"})

	h.srv.Enqueue(llmserver.Stream(c.Role(),
		c.Delta(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"pa"}}]}`),
		c.Delta(`{"tool_calls":[{"index":0,"function":{"name":"read_file","arguments":"th\":\"x\"}"}}]}`),
		c.Finish("tool_calls"), llmserver.Done()))
	calls(t, h.ok(t, false), state.ToolRequest{ID: "call_1", Name: "read_file", Arguments: `{"path":"x"}`})

	h.srv.Enqueue(llmserver.Stream(c.Role(),
		c.Delta(`{"tool_calls":[{"index":0,"type":"function","function":{"name":"read_file","arguments":"{}"}}]}`),
		c.Finish("tool_calls"), llmserver.Done()))
	turn = h.ok(t, false)
	if len(turn.Calls) != 1 || len(turn.Calls[0].ID) != 9 {
		t.Fatalf("a call without an id gets a 9-character one: %+v", turn.Calls)
	}
}

// §5.11, §5.12: truncated and invalid arguments are never returned as
// runnable calls.
func TestTruncatedAndInvalidArguments(t *testing.T) {
	h := newHarness(t)
	h.srv.Enqueue(llmserver.Stream(c.RoleToolStart(0, "call_1", "write_file"),
		c.ToolArgs(0, `{"path":"a.go","content":"pack`), c.Finish("length"), llmserver.Done()))
	_, err := h.stream(t, false)
	wantKind(t, err, llm.KindIncomplete)

	h.srv.Enqueue(llmserver.ToolCallReply([]llmserver.Call{{ID: "call_2", Name: "read_file", Args: `{'path': 'a.go'}`}}))
	turn := h.ok(t, false)
	if len(turn.Calls) != 1 || turn.Calls[0].ArgsError == "" {
		t.Fatalf("invalid JSON arguments must be flagged: %+v", turn.Calls)
	}
}

// §5.14, §5.15: finish reasons that disagree with what was sent, and the
// legacy function_call delta.
func TestFinishReasons(t *testing.T) {
	h := newHarness(t)
	h.srv.Enqueue(llmserver.Stream(c.RoleToolStart(0, "call_1", "read_file"), c.ToolArgs(0, `{"path":"a"}`),
		c.Finish("stop"), llmserver.Done()))
	calls(t, h.ok(t, false), state.ToolRequest{ID: "call_1", Name: "read_file", Arguments: `{"path":"a"}`})

	h.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("just text"), c.Finish("tool_calls"), llmserver.Done()))
	turn := h.ok(t, false)
	if turn.Content != "just text" || len(turn.Notes) == 0 {
		t.Fatalf("tool_calls with no calls: %+v", turn)
	}

	h.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("leaked"), c.Finish("end_turn"), llmserver.Done()))
	if turn := h.ok(t, false); turn.Content != "leaked" {
		t.Fatalf("an unknown finish_reason ends the turn as a stop: %+v", turn)
	}

	h.srv.Enqueue(llmserver.Stream(c.Role(), c.Delta(`{"function_call":{"name":"read_file","arguments":"{\"path\":"}}`),
		c.Delta(`{"function_call":{"arguments":"\"a.go\"}"}}`), c.Finish("function_call"), llmserver.Done()))
	turn = h.ok(t, false)
	if len(turn.Calls) != 1 || turn.Calls[0].Name != "read_file" || turn.Calls[0].Arguments != `{"path":"a.go"}` {
		t.Fatalf("legacy function_call: %+v", turn.Calls)
	}
}

// §5.16: reasoning under both field names, never mixed into the content;
// reasoning alone is no answer.
func TestReasoning(t *testing.T) {
	for _, ev := range []func(string) llmserver.Event{c.Reasoning, c.ReasoningField} {
		h := newHarness(t)
		h.srv.Enqueue(llmserver.Stream(c.Role(), ev("Let me think. "), ev("Yes."), c.Text("Answer."), c.Finish("stop"), llmserver.Done()))
		turn := h.ok(t, false)
		if turn.Reasoning != "Let me think. Yes." || turn.Content != "Answer." || h.deltas[llm.Reasoning] != turn.Reasoning {
			t.Fatalf("reasoning %q content %q deltas %v", turn.Reasoning, turn.Content, h.deltas)
		}
	}
	h := newHarness(t)
	h.srv.Enqueue(llmserver.Stream(c.Role(), c.Reasoning("hmm"), c.Finish("stop"), llmserver.Done()))
	_, err := h.stream(t, false)
	wantKind(t, err, llm.KindEmpty)
}

// §5.17, §5.18: Azure's empty first chunk and delta-less annotations, a
// content filter stop; usage wherever it comes, or not at all.
func TestAzureAndUsagePlacement(t *testing.T) {
	a := llmserver.Chunker{Dialect: llmserver.Azure}
	h := newHarness(t)
	h.srv.Enqueue(llmserver.Stream(a.Role(), a.Text("Half a sen"), a.FilterAnnotation(0, 0, 10), a.Finish("content_filter"), llmserver.Done()))
	turn := h.ok(t, false)
	if turn.Content != "Half a sen" || len(turn.Notes) == 0 {
		t.Fatalf("filtered reply: %+v", turn)
	}

	h.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("x"), c.FinishUsage("stop", 10, 2), llmserver.Done()))
	if turn := h.ok(t, false); turn.Usage.PromptTokens != 10 {
		t.Fatalf("usage on the finish chunk: %+v", turn.Usage)
	}
	h.srv.Enqueue(llmserver.TextReply("y", llmserver.WithoutUsage()))
	if turn := h.ok(t, false); turn.Usage != (state.Usage{}) || turn.Content != "y" {
		t.Fatalf("no usage is not an error: %+v", turn)
	}
}

// §5.19: hundreds of keep-alive comments in a row.
func TestKeepAliveComments(t *testing.T) {
	h := newHarness(t)
	h.srv.Enqueue(llmserver.Stream(llmserver.KeepAlive(200, "OPENROUTER PROCESSING"), c.Role(),
		llmserver.KeepAlive(20, "keep-alive"), c.Text("hello"), c.Finish("stop"), llmserver.Done()))
	if turn := h.ok(t, false); turn.Content != "hello" {
		t.Fatalf("content %q", turn.Content)
	}
}

// §5.20, §5.21: mid-stream errors in every shape end the turn with the
// server's message, keeping what streamed.
func TestMidStreamErrors(t *testing.T) {
	o := llmserver.Chunker{}
	cases := map[string][]llmserver.Event{
		"openai":              {llmserver.ErrorData("overloaded", "server_error")},
		"after a comment":     {llmserver.Comment("keep-alive"), llmserver.ErrorData("overloaded", "server_error")},
		"event: error":        {llmserver.ErrorEvent("overloaded", "server_error")},
		"openrouter":          {o.OpenRouterError(502, "overloaded"), llmserver.Done()},
		"llama.cpp error:":    {llmserver.ErrorField("overloaded"), llmserver.Done()},
		"space after a brace": {llmserver.ErrorSpaced("overloaded", "server_error")},
	}
	for name, tail := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			events := []llmserver.Event{c.Role(), c.Text("partial "), c.Text("answer")}
			h.srv.Enqueue(llmserver.Stream(append(events, tail...)...))
			_, err := h.stream(t, false)
			e := wantKind(t, err, llm.KindStream)
			if !strings.Contains(e.Message, "overloaded") || e.Partial.Content != "partial answer" {
				t.Fatalf("message %q partial %q", e.Message, e.Partial.Content)
			}
			if len(h.retry) != 0 {
				t.Fatal("an error the server reported is not retried")
			}
		})
	}
}

// §5.22: a stream that stops without a finish is incomplete however it
// stops; with nothing shown (or a UI that can take text back) it is
// retried from the start.
func TestDroppedStreams(t *testing.T) {
	for name, tail := range map[string]llmserver.Event{
		"clean close":  llmserver.Seq(),
		"reset":        llmserver.ResetNow(),
		"cut mid-line": llmserver.Truncate(c.Text("never finished"), 20),
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			h.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("partial"), c.RoleToolStart(0, "call_1", "read_file"), c.ToolArgs(0, `{"pa`), tail))
			_, err := h.stream(t, false)
			e := wantKind(t, err, llm.KindIncomplete)
			if e.Partial.Content != "partial" || len(e.Partial.Calls) != 0 {
				t.Fatalf("partial %+v", e.Partial)
			}

			h.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("partial"), tail), llmserver.TextReply("whole answer"))
			turn := h.ok(t, true)
			if turn.Content != "whole answer" || len(h.retry) != 1 || !h.retry[0].Restart {
				t.Fatalf("restart: %+v retries %+v", turn, h.retry)
			}
		})
	}
}

// §5.25, §5.26: rate limits and server errors are retried as the server
// asks; what retrying cannot fix is not.
func TestRetries(t *testing.T) {
	h := newHarness(t)
	h.srv.Enqueue(llmserver.RateLimit("2"), llmserver.TextReply("ok"))
	h.ok(t, false)
	if len(h.waits) != 1 || h.waits[0] != 2*time.Second || len(h.retry) != 1 || h.retry[0].Attempt != 2 {
		t.Fatalf("waits %v retries %+v", h.waits, h.retry)
	}

	h = newHarness(t)
	h.srv.Enqueue(llmserver.WithHeaders(llmserver.RateLimit(""), "retry-after-ms", "1500"), llmserver.TextReply("ok"))
	h.ok(t, false)
	if h.waits[0] != 1500*time.Millisecond {
		t.Fatalf("retry-after-ms: waited %v", h.waits)
	}

	h = newHarness(t)
	h.srv.Enqueue(llmserver.ServerError(), llmserver.Status(502, "<html><body>Bad Gateway</body></html>"),
		llmserver.Status(503, llmserver.ErrorBody("busy", "server_error", "", nil)), llmserver.TextReply("ok"))
	h.ok(t, false)
	if len(h.waits) != 3 || h.waits[0] > 500*time.Millisecond || h.waits[1] > time.Second || h.waits[0] <= 0 {
		t.Fatalf("backoff waits %v", h.waits)
	}

	h = newHarness(t)
	h.srv.Enqueue(llmserver.ServerError(), llmserver.ServerError(), llmserver.ServerError(), llmserver.ServerError())
	_, err := h.stream(t, false)
	if e := wantKind(t, err, llm.KindServer); len(h.waits) != 3 || e.Status != 500 {
		t.Fatalf("four tries at most: waits %v", h.waits)
	}

	for name, resp := range map[string]llmserver.Response{
		"x-should-retry false": llmserver.Status(503, llmserver.ErrorBody("no", "server_error", "", nil), "x-should-retry", "false"),
		"retry-after too long": llmserver.Status(429, `{"error":{"code":"429","message":"Please retry after 86400 seconds."}}`, "Retry-After", "86400"),
		"insufficient quota":   llmserver.Status(429, llmserver.ErrorBody("You exceeded your current quota.", "insufficient_quota", "", "insufficient_quota")),
	} {
		h := newHarness(t)
		h.srv.Enqueue(resp)
		if _, err := h.stream(t, false); err == nil || len(h.waits) != 0 {
			t.Fatalf("%s: err %v, waits %v", name, err, h.waits)
		}
	}
}

// §5.27, §5.28: context overflow in four dialects; auth, model and URL
// mistakes say what to fix and are not retried.
func TestPermanentErrors(t *testing.T) {
	overflow := map[string]llmserver.Response{
		"openai":        llmserver.Status(400, llmserver.ErrorBody("This model's maximum context length is 8192 tokens. However, your messages resulted in 8227 tokens.", "invalid_request_error", "messages", "context_length_exceeded")),
		"vllm old":      llmserver.Status(400, `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.","type":"BadRequestError","param":null,"code":400}`),
		"vllm new":      llmserver.Status(400, `{"error":{"message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.","type":"BadRequestError","param":null,"code":400}}`),
		"llama.cpp 400": llmserver.Status(400, `{"error":{"code":400,"message":"request (6009 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":6009,"n_ctx":4096}}`),
		"llama.cpp 500": llmserver.Status(500, `{"error":{"code":500,"message":"the request exceeds the available context size","type":"exceed_context_size_error","n_prompt_tokens":6009,"n_ctx":4096}}`),
	}
	for name, resp := range overflow {
		h := newHarness(t)
		h.srv.Enqueue(resp)
		_, err := h.stream(t, false)
		if e := wantKind(t, err, llm.KindContextOverflow); len(h.waits) != 0 {
			t.Fatalf("%s: retried an overflow: %v", name, e)
		}
	}
	for name, tc := range map[string]struct {
		resp llmserver.Response
		kind llm.Kind
		say  string
	}{
		"401":       {llmserver.Status(401, llmserver.ErrorBody("Incorrect API key provided: sk-te***.", "invalid_request_error", "", "invalid_api_key")), llm.KindAuth, "API key"},
		"404 model": {llmserver.Status(404, llmserver.ErrorBody("The model `gpt-test` does not exist or you do not have access to it.", "invalid_request_error", "", "model_not_found")), llm.KindModel, "--model"},
		"404 url":   {llmserver.Status(404, `{"error":"Unexpected endpoint"}`), llm.KindEndpoint, "--base-url"},
		"404 html":  {llmserver.Status(404, `<html><body><h1>Not Found</h1></body></html>`), llm.KindEndpoint, "--base-url"},
		"400":       {llmserver.Status(400, llmserver.ErrorBody("Unsupported parameter", "invalid_request_error", "", nil)), llm.KindBadRequest, "Unsupported parameter"},
	} {
		h := newHarness(t)
		h.srv.Enqueue(tc.resp)
		_, err := h.stream(t, false)
		wantKind(t, err, tc.kind)
		if !strings.Contains(err.Error(), tc.say) || len(h.waits) != 0 {
			t.Fatalf("%s: %q, waits %v", name, err, h.waits)
		}
	}
}

func TestUnreachableServer(t *testing.T) {
	h := newHarness(t, func(c *llm.Config) { c.BaseURL = "http://127.0.0.1:1/v1" })
	_, err := h.stream(t, false)
	if e := wantKind(t, err, llm.KindNetwork); len(h.waits) != 3 || !strings.Contains(e.Error(), "127.0.0.1:1") {
		t.Fatalf("%v after %d retries", e, len(h.waits))
	}
}

// §5.30: cancelling mid-stream returns at once, keeping what streamed.
func TestCancelMidStream(t *testing.T) {
	h := newHarness(t)
	h.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("so far"), llmserver.Block()))
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() {
		_, err := h.client.Stream(ctx, llm.Request{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}},
			llm.Observer{Delta: func(llm.DeltaKind, string) { cancel() }})
		got <- err
	}()
	e := wantKind(t, <-got, llm.KindCanceled)
	if e.Partial.Content != "so far" {
		t.Fatalf("partial %q", e.Partial.Content)
	}
}

// A silent connection is abandoned after the idle timeout; keep-alive
// comments keep it open.
func TestIdleTimeout(t *testing.T) {
	h := newHarness(t, func(c *llm.Config) { c.IdleTimeout = time.Second; c.MaxTries = 1 })
	h.srv.Enqueue(llmserver.Stream(c.Role(), llmserver.Block()))
	_, err := h.stream(t, false)
	if e := wantKind(t, err, llm.KindIncomplete); !strings.Contains(e.Error(), "no data") {
		t.Fatalf("%v", e)
	}
}

// A server that echoes the key it rejected must not put it on the screen.
func TestKeyNeverInErrors(t *testing.T) {
	const key = "sk-proj-0123456789abcdef"
	h := newHarness(t, func(c *llm.Config) { c.APIKey = key })
	h.srv.Enqueue(llmserver.Status(401, llmserver.ErrorBody("Incorrect API key provided: "+key+". You can find your key at ...", "invalid_request_error", "", "invalid_api_key")))
	_, err := h.stream(t, false)
	if err == nil || strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "[the API key]") {
		t.Fatalf("error %q", err)
	}
}
