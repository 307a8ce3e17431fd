package llmserver_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/sashabaranov/go-openai"

	"retrace/agent/llmtest"
)

// newClient is the real go-openai client pointed at srv: a strict
// llmtest.Server, or a plain llmserver.Server.
func newClient(srv interface{ URL() string }, edit ...func(*openai.ClientConfig)) *openai.Client {
	cfg := openai.DefaultConfig("k")
	cfg.BaseURL = srv.URL()
	for _, e := range edit {
		e(&cfg)
	}
	return openai.NewClientWithConfig(cfg)
}

func ask(text string) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{
		Model:         "gpt-x",
		Messages:      []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: text}},
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	}
}

// turn is what a stream delivered, assembled the simple way (by index),
// which is enough for the well-formed shapes these tests send.
type turn struct {
	text, reasoning string
	calls           map[int]*openai.ToolCall
	finish          []openai.FinishReason
	usage           *openai.Usage
	chunks          int
	err             error // the error that ended the stream; nil for io.EOF
}

func (tr turn) callList() []openai.ToolCall {
	var idx []int
	for i := range tr.calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	var out []openai.ToolCall
	for _, i := range idx {
		out = append(out, *tr.calls[i])
	}
	return out
}

// stream opens a stream and reads it to the end.
func stream(t *testing.T, client *openai.Client, req openai.ChatCompletionRequest) turn {
	t.Helper()
	s, err := client.CreateChatCompletionStream(context.Background(), req)
	if err != nil {
		return turn{err: err}
	}
	defer s.Close()
	return read(s)
}

func read(s *openai.ChatCompletionStream) (tr turn) {
	tr.calls = map[int]*openai.ToolCall{}
	var text, reasoning strings.Builder
	defer func() { tr.text, tr.reasoning = text.String(), reasoning.String() }()
	for {
		chunk, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return tr
		}
		if err != nil {
			tr.err = err
			return tr
		}
		tr.chunks++
		if chunk.Usage != nil {
			tr.usage = chunk.Usage
		}
		for _, ch := range chunk.Choices {
			text.WriteString(ch.Delta.Content)
			reasoning.WriteString(ch.Delta.ReasoningContent)
			if ch.FinishReason != "" {
				tr.finish = append(tr.finish, ch.FinishReason)
			}
			for _, tc := range ch.Delta.ToolCalls {
				i := 0
				if tc.Index != nil {
					i = *tc.Index
				}
				acc := tr.calls[i]
				if acc == nil {
					acc = &openai.ToolCall{}
					tr.calls[i] = acc
				}
				acc.ID += tc.ID
				if tc.Type != "" {
					acc.Type = tc.Type
				}
				acc.Function.Name += tc.Function.Name
				acc.Function.Arguments += tc.Function.Arguments
			}
		}
	}
}

// rawChunks reads a stream with RecvRaw, returning every payload and the
// error that ended it (nil for io.EOF).
func rawChunks(t *testing.T, client *openai.Client) ([]string, error) {
	t.Helper()
	s, err := client.CreateChatCompletionStream(context.Background(), ask("hi"))
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	defer s.Close()
	var out []string
	for {
		b, err := s.RecvRaw()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, string(b))
	}
}

// headerTap is an HTTPDoer that keeps the response headers go-openai
// hides on errors, as the agent's retry layer will.
type headerTap struct {
	mu   sync.Mutex
	seen []http.Header
}

func (h *headerTap) Do(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		h.mu.Lock()
		h.seen = append(h.seen, resp.Header.Clone())
		h.mu.Unlock()
	}
	return resp, err
}

func assertNoViolations(t *testing.T, srv *llmtest.Server) {
	t.Helper()
	if v := srv.Violations(); len(v) != 0 {
		t.Fatalf("requests a real server would reject: %v", v)
	}
}
