package llmserver_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"

	"retrace/agent/llmserver"
	"retrace/agent/llmtest"
)

// These tests pin what go-openai v1.43.0 makes of each odd shape
// (openai-wire.md §3.3 and §4.2, the [probe] results), so a change in
// either the server or the library shows up here first.

func TestBytewiseUTF8ArrivesIntact(t *testing.T) {
	srv := llmtest.NewServer(t)
	c := llmserver.Chunker{}
	const args = `{"path":"café/日本🌍"}`
	srv.Enqueue(llmserver.Stream(
		llmserver.Bytewise(c.RoleToolStart(0, "call_1", "read_file")),
		llmserver.Bytewise(c.ToolArgs(0, args)),
		llmserver.Bytewise(c.Finish("tool_calls")),
		llmserver.Bytewise(llmserver.Done()),
	))
	tr := stream(t, newClient(srv), ask("hi"))
	if tr.err != nil {
		t.Fatal(tr.err)
	}
	if got := tr.calls[0].Function.Arguments; got != args {
		t.Fatalf("arguments %q, want %q", got, args)
	}
}

func TestCharacterSplitAcrossEvents(t *testing.T) {
	srv := llmtest.NewServer(t)
	c := llmserver.Chunker{}
	cafe := "café"
	srv.Enqueue(llmserver.Stream(c.Role(), c.Text(cafe[:4]), c.Text(cafe[4:]), c.Finish("stop"), llmserver.Done()))
	tr := stream(t, newClient(srv), ask("hi"))
	if tr.err != nil {
		t.Fatal(tr.err)
	}
	// encoding/json replaces each half with U+FFFD; what matters is that
	// the server put the raw halves on the wire and the client survived.
	if tr.text != "caf\uFFFD\uFFFD" {
		t.Fatalf("text %q", tr.text)
	}
}

func TestMidStreamErrors(t *testing.T) {
	c := llmserver.Chunker{}
	tests := []struct {
		name   string
		events []llmserver.Event
		want   string // substring of the error; "" means a clean io.EOF
		text   string
	}{
		{
			name:   "OpenAI data error",
			events: []llmserver.Event{c.Role(), c.Text("part"), llmserver.ErrorData("overloaded", "server_error")},
			want:   "error, overloaded", text: "part",
		},
		{
			name:   "after a comment",
			events: []llmserver.Event{llmserver.Comment("keep-alive"), c.Role(), llmserver.ErrorData("overloaded", "server_error")},
			want:   "unexpected end of JSON input",
		},
		{
			name:   "event: error framing",
			events: []llmserver.Event{c.Role(), llmserver.ErrorEvent("overloaded", "server_error")},
			want:   "unexpected end of JSON input",
		},
		{
			name:   "llama.cpp error field then DONE",
			events: []llmserver.Event{c.Role(), c.Text("part"), llmserver.ErrorField("boom"), llmserver.Done()},
			text:   "part",
		},
		{
			name:   "spaced error is ignored",
			events: []llmserver.Event{c.Role(), llmserver.ErrorSpaced("overloaded", "server_error")},
		},
		{
			name:   "clean close without DONE",
			events: []llmserver.Event{c.Role(), c.Text("cut off")},
			text:   "cut off",
		},
		{
			name:   "close mid-line drops the line",
			events: []llmserver.Event{c.Role(), c.Text("kept"), llmserver.Truncate(c.Text("lost"), 30)},
			text:   "kept",
		},
		{
			name:   "last line without newline is dropped",
			events: []llmserver.Event{c.Role(), c.Text("kept"), llmserver.Line(`data: {"choices":[{"index":0,"delta":{"content":"lost"}}]}`)},
			text:   "kept",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Enqueue(llmserver.Stream(tt.events...))
			tr := stream(t, newClient(srv), ask("hi"))
			switch {
			case tt.want == "" && tr.err != nil:
				t.Fatalf("error %v, want a clean io.EOF", tr.err)
			case tt.want != "" && (tr.err == nil || !strings.Contains(tr.err.Error(), tt.want)):
				t.Fatalf("error %v, want %q", tr.err, tt.want)
			}
			if tr.text != tt.text {
				t.Errorf("text %q, want %q", tr.text, tt.text)
			}
		})
	}
}

func TestOpenRouterErrorChunk(t *testing.T) {
	srv := llmtest.NewServer(t)
	c := llmserver.Chunker{ID: "gen-1", Model: "x/y"}
	srv.Enqueue(llmserver.Stream(c.Role(), c.Text("part"), c.OpenRouterError(502, "Provider returned error"), llmserver.Done()))
	tr := stream(t, newClient(srv), ask("hi"))
	if tr.err != nil || len(tr.finish) != 1 || tr.finish[0] != "error" {
		t.Fatalf("finish %v, err %v", tr.finish, tr.err)
	}
}

func TestKeepAliveComments(t *testing.T) {
	c := llmserver.Chunker{}
	srv := llmtest.NewServer(t)
	reply := llmserver.Stream(llmserver.KeepAlive(200, "OPENROUTER PROCESSING"), c.Role(), c.Text("late"), c.Finish("stop"), llmserver.Done())
	srv.Enqueue(reply, reply)

	tr := stream(t, newClient(srv), ask("hi"))
	if !errors.Is(tr.err, openai.ErrTooManyEmptyStreamMessages) {
		t.Fatalf("default limit: %v", tr.err)
	}
	tr = stream(t, newClient(srv, func(cfg *openai.ClientConfig) { cfg.EmptyMessagesLimit = 100000 }), ask("hi"))
	if tr.err != nil || tr.text != "late" {
		t.Fatalf("raised limit: %q, %v", tr.text, tr.err)
	}
}

func TestDialectShapesThroughClient(t *testing.T) {
	srv := llmtest.NewServer(t)
	az := llmserver.Chunker{Dialect: llmserver.Azure}
	ol := llmserver.Chunker{Dialect: llmserver.Ollama}
	srv.Enqueue(
		llmserver.Stream(az.Role(), az.Text("Hi"), az.FilterAnnotation(2, 0, 2), az.Finish("content_filter"), llmserver.Done()),
		llmserver.Stream(
			ol.ToolWhole(0, "call_ab12cd34", "read_file", `{"path":"a.go"}`),
			ol.ToolWhole(0, "call_ef56gh78", "read_file", `{"path":"b.go"}`),
			ol.Finish("tool_calls"), llmserver.Done(),
		),
	)
	client := newClient(srv)

	s, err := client.CreateChatCompletionStream(t.Context(), ask("hi"))
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.Recv()
	if err != nil || len(first.Choices) != 0 || len(first.PromptFilterResults) != 1 || first.ID != "" {
		t.Fatalf("Azure first chunk %+v, %v", first, err)
	}
	tr := read(s)
	s.Close()
	if tr.err != nil || tr.text != "Hi" || tr.finish[len(tr.finish)-1] != openai.FinishReasonContentFilter {
		t.Fatalf("Azure: %+v", tr)
	}

	chunks, err := rawChunks(t, client)
	if err != nil || len(chunks) != 3 {
		t.Fatalf("Ollama chunks %v, %v", chunks, err)
	}
	for i, id := range []string{"call_ab12cd34", "call_ef56gh78"} {
		var ch openai.ChatCompletionStreamResponse
		if err := json.Unmarshal([]byte(chunks[i]), &ch); err != nil {
			t.Fatal(err)
		}
		d := ch.Choices[0].Delta
		if d.Role != "assistant" || *d.ToolCalls[0].Index != 0 || d.ToolCalls[0].ID != id {
			t.Errorf("Ollama chunk %d: %+v", i, d)
		}
	}
}

func TestShapesGoOpenAICannotDecode(t *testing.T) {
	srv := llmtest.NewServer(t)
	c := llmserver.Chunker{}
	srv.Enqueue(
		llmserver.Stream(c.Role(), c.Delta(`{"tool_calls":[{"index":0,"id":7,"type":"function","function":{"name":"read_file","arguments":{"path":"a.go"}}}]}`), c.Finish("tool_calls"), llmserver.Done()),
		llmserver.Stream(c.Role(), c.ReasoningField("hmm"), c.Text("ok"), c.Finish("stop"), llmserver.Done()),
	)
	client := newClient(srv)

	tr := stream(t, client, ask("hi"))
	var typeErr *json.UnmarshalTypeError
	if !errors.As(tr.err, &typeErr) {
		t.Fatalf("object arguments: %v, want *json.UnmarshalTypeError", tr.err)
	}

	chunks, err := rawChunks(t, client)
	if err != nil || len(chunks) != 4 || !strings.Contains(chunks[1], `"reasoning":"hmm"`) {
		t.Fatalf("RecvRaw sees delta.reasoning: %v, %v", chunks, err)
	}
}
