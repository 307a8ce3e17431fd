package llmtest_test

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/sashabaranov/go-openai"

	"retrace/agent/llmserver"
	"retrace/agent/llmtest"
)

// A model that calls a tool, then answers once it has the result. The
// second request carries the history back, and the checker judges it.
func Example() {
	plain, err := llmserver.Start("127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer plain.Close()
	srv := llmtest.Strict(plain) // in a test: srv := llmtest.NewServer(t)
	srv.Enqueue(
		llmserver.ToolCallReply([]llmserver.Call{{ID: "call_1", Name: "read_file", Args: `{"path":"a.go"}`}}),
		llmserver.TextReply("a.go declares package main."),
	)

	cfg := openai.DefaultConfig("k")
	cfg.BaseURL = srv.URL()
	client := openai.NewClientWithConfig(cfg)
	req := openai.ChatCompletionRequest{
		Model:    "gpt-x",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "What is in a.go?"}},
	}

	call := openai.ToolCall{Type: openai.ToolTypeFunction}
	each(client, req, func(d openai.ChatCompletionStreamChoiceDelta) {
		for _, tc := range d.ToolCalls {
			call.ID += tc.ID
			call.Function.Name += tc.Function.Name
			call.Function.Arguments += tc.Function.Arguments
		}
	})
	fmt.Println(call.Function.Name, call.Function.Arguments)

	req.Messages = append(req.Messages,
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{call}},
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: call.ID, Content: "package main"},
	)
	each(client, req, func(d openai.ChatCompletionStreamChoiceDelta) { fmt.Print(d.Content) })
	fmt.Println()
	fmt.Println("violations:", len(srv.Violations()))
	// Output:
	// read_file {"path":"a.go"}
	// a.go declares package main.
	// violations: 0
}

// each streams req and hands every delta to f.
func each(client *openai.Client, req openai.ChatCompletionRequest, f func(openai.ChatCompletionStreamChoiceDelta)) {
	s, err := client.CreateChatCompletionStream(context.Background(), req)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	for {
		chunk, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			panic(err)
		}
		for _, ch := range chunk.Choices {
			f(ch.Delta)
		}
	}
}
