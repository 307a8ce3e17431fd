package llm_test

import (
	"context"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"retrace/agent/llm"
	"retrace/agent/llmserver"
	"retrace/state"
)

// delta is one call of Observer.Delta.
type delta struct {
	kind llm.DeltaKind
	text string
}

// streamSeen makes one call and returns every delta the observer got, in
// order.
func streamSeen(t *testing.T, h *harness) (llm.Turn, []delta, error) {
	t.Helper()
	var seen []delta
	req := llm.Request{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}}
	turn, err := h.client.Stream(context.Background(), req, llm.Observer{
		Delta: func(k llm.DeltaKind, s string) { seen = append(seen, delta{k, s}) },
		Retry: func(r llm.Retry) { h.retry = append(h.retry, r) },
	})
	return turn, seen, err
}

// unterminated is the bytes of e with the newlines that end it left off.
func unterminated(e llmserver.Event) llmserver.Event { return llmserver.Unterminated(e) }

// A stream whose last event is whole but has no newline after it (the
// server closes right after the JSON) gives the whole answer, however the
// bytes are split into reads.
func TestLastEventWithoutNewline(t *testing.T) {
	call := state.ToolRequest{ID: "call_1", Name: "read_file", Arguments: `{"path":"a.go"}`}
	for name, tc := range map[string]struct {
		resp   llmserver.Response
		text   string
		finish string
		usage  state.Usage
		calls  []state.ToolRequest
	}{
		"finish chunk, no [DONE]": {
			resp: llmserver.Stream(c.Role(), c.Text("hello"), unterminated(c.Finish("stop"))),
			text: "hello", finish: "stop"},
		"usage chunk, no [DONE]": {
			resp: llmserver.TextReply("hello", llmserver.WithBareEnd(), llmserver.WithUsage(7, 3)),
			text: "hello", finish: "stop", usage: state.Usage{PromptTokens: 7, CompletionTokens: 3}},
		"finish with usage, no [DONE]": {
			resp: llmserver.Stream(c.Role(), c.Text("hello"), unterminated(c.FinishUsage("stop", 7, 3))),
			text: "hello", finish: "stop", usage: state.Usage{PromptTokens: 7, CompletionTokens: 3}},
		"the last text in the last chunk": {
			resp: llmserver.Stream(c.Role(), c.Text("hel"),
				unterminated(c.Chunk(`"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]`))),
			text: "hello", finish: "stop"},
		"tool calls, no [DONE]": {
			resp:  llmserver.ToolCallReply([]llmserver.Call{{ID: call.ID, Name: call.Name, Args: call.Arguments}}, llmserver.WithBareEnd(), llmserver.WithUsage(9, 4)),
			calls: []state.ToolRequest{call}, finish: "tool_calls", usage: state.Usage{PromptTokens: 9, CompletionTokens: 4}},
		"[DONE] without its newline": {
			resp: llmserver.Stream(c.Role(), c.Text("hello"), c.Finish("stop"), unterminated(llmserver.Done())),
			text: "hello", finish: "stop"},
		"no [DONE] after a whole finish": {
			resp: llmserver.Stream(c.Role(), c.Text("hello"), c.Finish("stop")),
			text: "hello", finish: "stop"},
		"CRLF framing, last line bare": {
			resp: llmserver.Stream(c.Role(), c.Text("hello"),
				llmserver.Line(strings.ReplaceAll(strings.TrimSuffix(llmserver.Render(c.Finish("stop")), "\n\n"), "\n", "\r\n"))),
			text: "hello", finish: "stop"},
	} {
		for how, split := range map[string]splitReads{"as sent": nil, "one byte": oneByte, "half lines": halfLines} {
			t.Run(name+" "+how, func(t *testing.T) {
				h := newHarness(t, func(cfg *llm.Config) {
					if split != nil {
						cfg.HTTPClient = split
					}
				})
				h.srv.Enqueue(tc.resp)
				turn, seen, err := streamSeen(t, h)
				if err != nil {
					t.Fatalf("stream: %v", err)
				}
				if turn.Content != tc.text || turn.Finish != tc.finish || turn.Usage != tc.usage {
					t.Fatalf("turn %+v", turn)
				}
				calls(t, turn, tc.calls...)
				var shown string
				for _, d := range seen {
					shown += d.text
				}
				if shown != tc.text || len(h.retry) != 0 || len(h.srv.Requests()) != 1 {
					t.Fatalf("shown %q, retries %v, %d requests", shown, h.retry, len(h.srv.Requests()))
				}
			})
		}
	}
}

// A stream that stops before a finish_reason arrived is cut off, whether
// its last line is cut, whole but not a finish, or ends in [DONE]; an
// error on the last line is the server's error.
func TestLastLineStillCutOff(t *testing.T) {
	for name, tail := range map[string]llmserver.Event{
		"a finish cut mid-JSON":       llmserver.Truncate(c.Finish("stop"), 60),
		"a whole text chunk, no more": unterminated(c.Text(" and more")),
		"[DONE] but no finish":        llmserver.Seq(c.Text(" and more"), unterminated(llmserver.Done())),
		"a comment":                   unterminated(llmserver.Comment("keep-alive")),
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, func(cfg *llm.Config) { cfg.MaxTries = 1 })
			h.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("so far"), tail))
			_, err := h.stream(t, false)
			e := wantKind(t, err, llm.KindIncomplete)
			if !strings.HasPrefix(e.Partial.Content, "so far") || e.Partial.Finish != "" {
				t.Fatalf("partial %+v", e.Partial)
			}
		})
	}
	for name, tail := range map[string]llmserver.Event{
		"data: error":     unterminated(llmserver.ErrorData("overloaded", "server_error")),
		"llama.cpp error": unterminated(llmserver.ErrorField("overloaded")),
		"event: error":    unterminated(llmserver.ErrorEvent("overloaded", "server_error")),
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			h.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("so far"), tail))
			_, err := h.stream(t, false)
			if e := wantKind(t, err, llm.KindStream); e.Message != "overloaded" || e.Partial.Content != "so far" || len(h.retry) != 0 {
				t.Fatalf("%v, partial %q, retries %v", e, e.Partial.Content, h.retry)
			}
		})
	}
}

// A server that ignores "stream":true and answers one application/json
// chat.completion has answered: its reply is used as it is, once, and the
// screen gets its text in one piece, thinking first.
func TestJSONInsteadOfStream(t *testing.T) {
	call := []llmserver.Call{{ID: "call_1", Name: "read_file", Args: `{"path":"a.go"}`}}
	want := state.ToolRequest{ID: "call_1", Name: "read_file", Arguments: `{"path":"a.go"}`}
	// vLLM with a reasoning parser, pretty-printed, with a final newline.
	vllm := `{
  "id": "chatcmpl-9f2",
  "object": "chat.completion",
  "created": 1700000000,
  "model": "Qwen/Qwen3-8B",
  "choices": [
    {
      "index": 0,
      "message": {
        "role": "assistant",
        "reasoning_content": "The user greets me.",
        "content": "Hello!",
        "tool_calls": []
      },
      "logprobs": null,
      "finish_reason": "stop",
      "stop_reason": null
    }
  ],
  "usage": {"prompt_tokens": 12, "total_tokens": 20, "completion_tokens": 8}
}
`
	for name, tc := range map[string]struct {
		resp      llmserver.Response
		text      string
		reasoning string
		finish    string
		usage     state.Usage
		calls     []state.ToolRequest
		notes     int
		split     splitReads // how the body reaches the reader; nil as sent
	}{
		"text": {resp: llmserver.TextCompletion("Hello!", llmserver.WithUsage(12, 8)),
			text: "Hello!", finish: "stop", usage: state.Usage{PromptTokens: 12, CompletionTokens: 8}},
		"text and reasoning_content": {resp: llmserver.TextCompletion("Hello!", llmserver.WithReasoning("The user greets me."), llmserver.WithoutUsage()),
			text: "Hello!", reasoning: "The user greets me.", finish: "stop"},
		"Ollama's reasoning": {resp: llmserver.TextCompletion("Hello!", llmserver.WithReasoning("The user greets me."), llmserver.WithDialect(llmserver.Ollama), llmserver.WithoutUsage()),
			text: "Hello!", reasoning: "The user greets me.", finish: "stop"},
		"tool calls": {resp: llmserver.ToolCallCompletion(call, llmserver.WithUsage(30, 9)),
			finish: "tool_calls", usage: state.Usage{PromptTokens: 30, CompletionTokens: 9}, calls: []state.ToolRequest{want}},
		"text and tool calls": {resp: llmserver.ToolCallCompletion(call, llmserver.WithText("Let me look."), llmserver.WithoutUsage()),
			text: "Let me look.", finish: "tool_calls", calls: []state.ToolRequest{want}},
		"pretty-printed, final newline": {resp: llmserver.JSON(vllm),
			text: "Hello!", reasoning: "The user greets me.", finish: "stop", usage: state.Usage{PromptTokens: 12, CompletionTokens: 8}},
		"labelled text/event-stream": {resp: llmserver.WithHeaders(llmserver.Status(200, strings.ReplaceAll(vllm, "\n", "")), "Content-Type", "text/event-stream"),
			text: "Hello!", reasoning: "The user greets me.", finish: "stop", usage: state.Usage{PromptTokens: 12, CompletionTokens: 8}},
		"arguments as an object, numeric id": {resp: llmserver.JSON(`{"id":"x","object":"chat.completion","choices":[{"index":0,"message":` +
			`{"role":"assistant","content":null,"tool_calls":[{"id":7,"type":"function","function":{"name":"read_file","arguments":{"path":"a.go"}}}]},"finish_reason":"tool_calls"}]}`),
			finish: "tool_calls", calls: []state.ToolRequest{{ID: "7", Name: "read_file", Arguments: `{"path":"a.go"}`}}, notes: 1},
		"content as parts": {resp: llmserver.JSON(`{"id":"x","object":"chat.completion","choices":[{"index":0,"message":` +
			`{"role":"assistant","content":[{"type":"text","text":"Hel"},{"type":"text","text":"lo!"}]},"finish_reason":"stop"}]}`),
			text: "Hello!", finish: "stop"},
		"content as parts, some untyped, an image skipped": {resp: llmserver.JSON(`{"id":"x","object":"chat.completion","choices":[{"index":0,"message":` +
			`{"role":"assistant","content":[{"text":"Hel"},{"type":"image_url","image_url":{"url":"data:,"}},{"type":"text","text":"lo!"}]},"finish_reason":"stop"}]}`),
			text: "Hello!", finish: "stop"},
		// A body whose first read is only white space (a server that
		// flushes a newline before it has the reply) is told by what follows.
		"white space first, read byte by byte": {resp: llmserver.JSON("\n \n" + vllm), split: oneByte,
			text: "Hello!", reasoning: "The user greets me.", finish: "stop", usage: state.Usage{PromptTokens: 12, CompletionTokens: 8}},
		"no finish_reason": {resp: llmserver.JSON(`{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"}}]}`),
			text: "Hello!"},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, func(cfg *llm.Config) {
				if tc.split != nil {
					cfg.HTTPClient = tc.split
				}
			})
			h.srv.Enqueue(tc.resp)
			turn, seen, err := streamSeen(t, h)
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			if turn.Content != tc.text || turn.Reasoning != tc.reasoning || turn.Finish != tc.finish || turn.Usage != tc.usage || len(turn.Notes) != tc.notes {
				t.Fatalf("turn %+v", turn)
			}
			calls(t, turn, tc.calls...)
			var wantSeen []delta
			if tc.reasoning != "" {
				wantSeen = append(wantSeen, delta{llm.Reasoning, tc.reasoning})
			}
			if tc.text != "" {
				wantSeen = append(wantSeen, delta{llm.Content, tc.text})
			}
			if len(seen) != len(wantSeen) || (len(seen) > 0 && seen[0] != wantSeen[0]) || (len(seen) > 1 && seen[1] != wantSeen[1]) {
				t.Fatalf("the observer saw %+v, want %+v", seen, wantSeen)
			}
			if len(h.retry) != 0 || len(h.srv.Requests()) != 1 {
				t.Fatalf("retries %v over %d requests", h.retry, len(h.srv.Requests()))
			}
		})
	}
}

// A JSON body that stops before it is whole was cut off: it is retried
// like a dropped stream. One that is whole but no completion is the wrong
// kind of server, and is not retried.
func TestJSONBodyCutOrWrong(t *testing.T) {
	full := `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}]}`
	h := newHarness(t)
	cut := llmserver.WithHeaders(llmserver.Stream(llmserver.Line(full[:70])), "Content-Type", "application/json")
	h.srv.Enqueue(cut, llmserver.JSON(full))
	if turn := h.ok(t, false); turn.Content != "Hello!" || len(h.retry) != 1 {
		t.Fatalf("turn %+v after retries %v", turn, h.retry)
	}
	h = newHarness(t, func(cfg *llm.Config) { cfg.MaxTries = 1 })
	h.srv.Enqueue(cut)
	_, err := h.stream(t, false)
	if e := wantKind(t, err, llm.KindIncomplete); !strings.Contains(e.Error(), "JSON") {
		t.Fatalf("%v", e)
	}

	for name, body := range map[string]string{
		"another object":   `{"status":"ok"}`,
		"two documents":    full + "\n" + full,
		"an array":         `[]`,
		"choices, not one": `{"choices":"none"}`,
	} {
		h := newHarness(t)
		h.srv.Enqueue(llmserver.JSON(body))
		_, err := h.stream(t, false)
		if e := wantKind(t, err, llm.KindEndpoint); len(h.retry) != 0 || !strings.Contains(e.Error(), "--base-url") {
			t.Fatalf("%s: %v, retries %v", name, e, h.retry)
		}
	}
}

// An error object sent with status 200 (some proxies do) says what went
// wrong, once: it is not a cut-off reply, and not retried.
func TestJSONErrorWithStatus200(t *testing.T) {
	msg := "Upstream provider returned an error: insufficient balance"
	envelope := llmserver.ErrorBody(msg, "upstream_error", "", "insufficient_balance")
	for name, tc := range map[string]struct {
		resp llmserver.Response
		kind llm.Kind
		say  string
	}{
		"application/json":      {llmserver.JSON(envelope), llm.KindServer, msg},
		"with a final newline":  {llmserver.JSON(envelope + "\n"), llm.KindServer, msg},
		"as text/event-stream":  {llmserver.WithHeaders(llmserver.Status(200, envelope), "Content-Type", "text/event-stream"), llm.KindServer, msg},
		"as text/plain":         {llmserver.WithHeaders(llmserver.Status(200, envelope+"\n"), "Content-Type", "text/plain"), llm.KindServer, msg},
		"a bare string":         {llmserver.JSON(`{"error":"model is loading"}`), llm.KindServer, "model is loading"},
		"vLLM's old top level":  {llmserver.JSON(`{"object":"error","message":"busy","type":"ServiceUnavailableError","code":503}`), llm.KindServer, "busy"},
		"the window overflowed": {llmserver.JSON(llmserver.ErrorBody("This model's maximum context length is 8192 tokens.", "invalid_request_error", "messages", "context_length_exceeded")), llm.KindContextOverflow, "This model's maximum context length is 8192 tokens."},
		// The code alone says so, in words no pattern knows.
		"the window overflowed, by its code": {llmserver.JSON(llmserver.ErrorBody("Request too large for this deployment.", "invalid_request_error", "messages", "context_length_exceeded")), llm.KindContextOverflow, "Request too large for this deployment."},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			h.srv.Enqueue(tc.resp)
			_, err := h.stream(t, false)
			e := wantKind(t, err, tc.kind)
			if e.Message != tc.say || e.Status != 200 || len(h.retry) != 0 || len(h.srv.Requests()) != 1 {
				t.Fatalf("%v (status %d), retries %v over %d requests", e, e.Status, h.retry, len(h.srv.Requests()))
			}
			if s := e.Error(); strings.Contains(s, "cut off") || strings.Contains(s, "mid-reply") || !strings.Contains(s, "HTTP 200") {
				t.Fatalf("error %q", s)
			}
		})
	}
}
