package llmserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"retrace/agent/llmserver"
	"retrace/agent/llmtest"
)

// TestChunkWireForm pins the exact bytes of the builders against the
// shapes quoted in openai-wire.md.
func TestChunkWireForm(t *testing.T) {
	c := llmserver.Chunker{}
	ol := llmserver.Chunker{Dialect: llmserver.Ollama, ID: "chatcmpl-7", Model: "qwen3"}
	az := llmserver.Chunker{Dialect: llmserver.Azure}
	const env = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-x",`
	const olEnv = `{"id":"chatcmpl-7","object":"chat.completion.chunk","created":1700000000,"model":"qwen3","system_fingerprint":"fp_ollama",`
	tests := []struct {
		name string
		e    llmserver.Event
		want string
	}{
		{"role", c.Role(), env + `"choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}`},
		{"role with tool", c.RoleToolStart(0, "call_A1", "read_file"), env + `"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_A1","type":"function","function":{"name":"read_file","arguments":""}}],"refusal":null},"logprobs":null,"finish_reason":null}]}`},
		{"args", c.ToolArgs(0, `{"pa`), env + `"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]},"logprobs":null,"finish_reason":null}]}`},
		{"finish", c.Finish("tool_calls"), env + `"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}`},
		{"usage", c.Usage(812, 41), env + `"choices":[],"usage":{"prompt_tokens":812,"completion_tokens":41,"total_tokens":853,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`},
		{"reasoning", c.Reasoning("hm"), env + `"choices":[{"index":0,"delta":{"content":null,"reasoning_content":"hm"},"logprobs":null,"finish_reason":null}]}`},
		{"usage null", llmserver.Chunker{UsageNull: true}.Text("x"), env + `"choices":[{"index":0,"delta":{"content":"x"},"logprobs":null,"finish_reason":null}],"usage":null}`},
		{"ollama text", ol.Text("Hi"), olEnv + `"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}`},
		{"ollama whole call", ol.ToolWhole(0, "call_ab12cd34", "read_file", `{"path":"a.go"}`), olEnv + `"choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_ab12cd34","index":0,"type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a.go\"}"}}]},"finish_reason":null}]}`},
		{"ollama finish", ol.Finish("stop"), olEnv + `"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop"}]}`},
		{"azure prompt filter", az.PromptFilter(), `{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}}}]}`},
		{"error", llmserver.ErrorData("boom", "server_error"), `{"error":{"message":"boom","type":"server_error","param":null,"code":null}}`},
		{"spaced error", llmserver.ErrorSpaced("boom", "server_error"), `{ "error": {"message":"boom","type":"server_error","param":null,"code":null}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := llmserver.Render(tt.e)
			if want := "data: " + tt.want + "\n\n"; got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

// TestEveryBuilderIsValidJSON guards the hand-assembled JSON of every
// builder in every dialect.
func TestEveryBuilderIsValidJSON(t *testing.T) {
	for _, d := range []llmserver.Dialect{llmserver.OpenAI, llmserver.Ollama, llmserver.Azure} {
		c := llmserver.Chunker{Dialect: d, UsageNull: true}
		wire := llmserver.Render(
			c.Role(), c.RoleToolStart(1, "id", "n"), c.Text("a\"b\\c\n\t\x01<&>"), c.Reasoning("r"),
			c.ReasoningField("r"), c.ToolStart(0, "id", "n"), c.ToolArgs(0, `{"a":`), c.ToolWhole(2, "id", "n", "{}"),
			c.Finish("stop"), c.FinishUsage("stop", 1, 2), c.Usage(1, 2), c.Delta(`{}`), c.Chunk(`"choices":[]`),
			c.OpenRouterError(502, "x"), c.PromptFilter(), c.FilterAnnotation(1, 2, 3),
		)
		for _, ev := range strings.Split(strings.TrimSuffix(wire, "\n\n"), "\n\n") {
			payload, ok := strings.CutPrefix(ev, "data: ")
			if !ok || !json.Valid([]byte(payload)) {
				t.Errorf("%s: invalid event %q", d, ev)
			}
		}
	}
}

func TestRawBytesPassThrough(t *testing.T) {
	half := "caf\xc3"
	if got := llmserver.Render(llmserver.Chunker{}.Text(half)); !strings.Contains(got, `"content":"caf`+"\xc3"+`"}`) {
		t.Errorf("the half character was not sent raw: %q", got)
	}
}

func TestEventFraming(t *testing.T) {
	c := llmserver.Chunker{}
	got := llmserver.Render(
		llmserver.Comment("OPENROUTER PROCESSING"), llmserver.KeepAlive(2, "keep-alive"), llmserver.Line("event: error\n"),
		llmserver.Truncate(c.Text("xyz"), 8), llmserver.Bytewise(llmserver.Done()),
		llmserver.ErrorField("boom"), llmserver.Pause(1), llmserver.Block(),
	)
	want := ": OPENROUTER PROCESSING\n\n: keep-alive\n\n: keep-alive\n\nevent: error\ndata: {\"" +
		"data: [DONE]\n\nerror: {\"code\":500,\"message\":\"boom\",\"type\":\"server_error\"}\n\n"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestScriptsSplitIntoPieces(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmserver.TextReply("héllo wörld", llmserver.WithPieceSize(4), llmserver.WithoutUsage()))
	chunks, err := rawChunks(t, newClient(srv))
	if err != nil {
		t.Fatal(err)
	}
	wire := strings.Join(chunks, "\n")
	for _, piece := range []string{`"héll"`, `"o wö"`, `"rld"`} {
		if !strings.Contains(wire, `"content":`+piece) {
			t.Errorf("no delta %s in\n%s", piece, wire)
		}
	}
	if len(chunks) != 5 || strings.Contains(wire, `"usage"`) {
		t.Errorf("want role, 3 pieces, finish and no usage:\n%s", wire)
	}
}
