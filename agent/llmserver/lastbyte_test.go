package llmserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"retrace/agent/llmserver"
	"retrace/agent/llmtest"
)

// rawReply posts a plain streaming request and returns the response's
// Content-Type and body, byte for byte.
func rawReply(t *testing.T, srv *llmtest.Server) (string, string) {
	t.Helper()
	body := `{"model":"gpt-x","messages":[{"role":"user","content":"hi"}],"stream":true}`
	resp, err := http.Post(srv.URL()+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Get("Content-Type"), string(b)
}

func TestUnterminatedDropsOnlyTheNewlines(t *testing.T) {
	c := llmserver.Chunker{}
	whole := llmserver.Render(c.Finish("stop"))
	if got := llmserver.Render(llmserver.Unterminated(c.Finish("stop"))); got != strings.TrimSuffix(whole, "\n\n") {
		t.Fatalf("got %q", got)
	}
	if got := llmserver.Render(llmserver.Unterminated(llmserver.Line("data: [DONE]\r\n\r\n"))); got != "data: [DONE]" {
		t.Fatalf("CRLF: got %q", got)
	}
}

// A bare end is the last chunk's JSON and then nothing; go-openai loses
// that chunk, which is why retrace reads the last line itself.
func TestBareEnd(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmserver.TextReply("hello", llmserver.WithBareEnd(), llmserver.WithUsage(7, 3)))
	_, body := rawReply(t, srv)
	usage := `"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10,` +
		`"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`
	if !strings.HasSuffix(body, usage) || strings.Contains(body, "[DONE]") {
		t.Fatalf("body ends %q", body[max(0, len(body)-200):])
	}

	srv.Enqueue(llmserver.TextReply("hello", llmserver.WithBareEnd(), llmserver.WithUsage(7, 3)))
	tr := stream(t, newClient(srv), ask("hi"))
	if tr.err != nil || tr.text != "hello" || tr.usage != nil {
		t.Fatalf("go-openai was expected to drop the last chunk: %+v", tr)
	}

	srv.Enqueue(llmserver.ToolCallReply([]llmserver.Call{{ID: "call_1", Name: "read_file", Args: "{}"}},
		llmserver.WithBareEnd(), llmserver.WithoutUsage()))
	if _, body := rawReply(t, srv); !strings.HasSuffix(body, `"finish_reason":"tool_calls"}]}`) {
		t.Fatalf("body ends %q", body[max(0, len(body)-80):])
	}
	assertNoViolations(t, srv)
}

// A completion answers a streaming request as application/json, with the
// thinking where each dialect puts it.
func TestCompletionsCarryReasoningAndText(t *testing.T) {
	srv := llmtest.NewServer(t)
	call := []llmserver.Call{{ID: "call_1", Name: "read_file", Args: `{"path":"a.go"}`}}
	for _, tc := range []struct {
		resp llmserver.Response
		want map[string]any
	}{
		{llmserver.TextCompletion("answer", llmserver.WithReasoning("think")),
			map[string]any{"content": "answer", "reasoning_content": "think"}},
		{llmserver.TextCompletion("answer", llmserver.WithReasoning("think"), llmserver.WithDialect(llmserver.Ollama)),
			map[string]any{"content": "answer", "reasoning": "think"}},
		{llmserver.TextCompletion("answer"), map[string]any{"content": "answer", "reasoning_content": nil, "reasoning": nil}},
		{llmserver.ToolCallCompletion(call, llmserver.WithText("Let me look.")), map[string]any{"content": "Let me look."}},
		{llmserver.ToolCallCompletion(call), map[string]any{"content": nil}},
	} {
		srv.Enqueue(tc.resp)
		ctype, body := rawReply(t, srv)
		var doc struct {
			Choices []struct {
				Message map[string]any `json:"message"`
			} `json:"choices"`
		}
		if ctype != "application/json" || json.Unmarshal([]byte(body), &doc) != nil || len(doc.Choices) != 1 {
			t.Fatalf("%s: %s", ctype, body)
		}
		for k, v := range tc.want {
			if got := doc.Choices[0].Message[k]; got != v {
				t.Errorf("%s = %#v, want %#v in %s", k, got, v, body)
			}
		}
	}
	assertNoViolations(t, srv)
}
