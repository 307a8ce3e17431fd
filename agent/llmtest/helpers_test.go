package llmtest_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"

	"retrace/agent/llmtest"
)

// newClient is the real go-openai client pointed at srv.
func newClient(srv *llmtest.Server) *openai.Client {
	cfg := openai.DefaultConfig("k")
	cfg.BaseURL = srv.URL()
	return openai.NewClientWithConfig(cfg)
}

func ask(text string) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{
		Model:         "gpt-x",
		Messages:      []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: text}},
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	}
}

// turn is what a stream delivered: the checker's tests need only the text
// and the error (llmserver's tests read streams in full).
type turn struct {
	text string
	err  error // the error that ended the stream; nil for io.EOF
}

// stream opens a stream and reads it to the end.
func stream(t *testing.T, client *openai.Client, req openai.ChatCompletionRequest) turn {
	t.Helper()
	s, err := client.CreateChatCompletionStream(context.Background(), req)
	if err != nil {
		return turn{err: err}
	}
	defer s.Close()
	var text strings.Builder
	for {
		chunk, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return turn{text: text.String()}
		}
		if err != nil {
			return turn{text: text.String(), err: err}
		}
		for _, ch := range chunk.Choices {
			text.WriteString(ch.Delta.Content)
		}
	}
}
