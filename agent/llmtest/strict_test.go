package llmtest_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"

	"retrace/agent/llmserver"
	"retrace/agent/llmtest"
)

func TestCheckerRejectsThroughClient(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmserver.TextReply("fine"))
	client := newClient(srv)

	req := ask("hi")
	req.Messages = append(req.Messages, openai.ChatCompletionMessage{
		Role: openai.ChatMessageRoleAssistant,
		ToolCalls: []openai.ToolCall{{ID: "call_X", Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: "read_file", Arguments: "{}"}}},
	}, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: "cancelled; go on"})

	tr := stream(t, client, req)
	var apiErr *openai.APIError
	if !errors.As(tr.err, &apiErr) || apiErr.HTTPStatusCode != http.StatusBadRequest {
		t.Fatalf("error %v, want a 400 APIError", tr.err)
	}
	const want = "An assistant message with 'tool_calls' must be followed by tool messages responding to each " +
		"'tool_call_id'. The following tool_call_ids did not have response messages: call_X"
	if apiErr.Message != want || apiErr.Type != "invalid_request_error" || apiErr.Param == nil ||
		*apiErr.Param != "messages.[1].role" {
		t.Errorf("got %q (type %q, param %v)", apiErr.Message, apiErr.Type, apiErr.Param)
	}
	v := srv.Violations()
	if len(v) != 1 || v[0].Rule != llmtest.RuleUnanswered || v[0].Request != 0 {
		t.Fatalf("violations %v", v)
	}

	// The rejected request left the script alone: the next one gets it.
	if tr := stream(t, client, ask("hi")); tr.err != nil || tr.text != "fine" {
		t.Fatalf("after a rejection: %q, %v", tr.text, tr.err)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests recorded, want 2", n)
	}
}

func TestNoScriptedResponseLeft(t *testing.T) {
	srv := llmtest.NewServer(t)
	tr := stream(t, newClient(srv), ask("hi"))
	var apiErr *openai.APIError
	if !errors.As(tr.err, &apiErr) || apiErr.HTTPStatusCode != http.StatusInternalServerError ||
		apiErr.Message != "llmtest: no scripted response left" {
		t.Fatalf("error %v", tr.err)
	}
	if v := srv.Violations(); len(v) != 1 || v[0].Rule != llmtest.RuleNoScript {
		t.Fatalf("violations %v", v)
	}
}

func TestUnknownEndpoint(t *testing.T) {
	srv := llmtest.NewServer(t)
	resp, err := http.Post(srv.URL()+"/completions", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "Invalid URL (POST /v1/completions)") {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
	if v := srv.Violations(); len(v) != 1 || v[0].Rule != llmtest.RuleEndpoint {
		t.Errorf("violations %v", v)
	}
}

func TestStrictModesThroughServer(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.MistralIDs = true
	srv.Enqueue(llmserver.TextReply("unused"))
	req := ask("hi")
	req.Messages = append(req.Messages,
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{{
			ID: "call_abc", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "n", Arguments: "{}"},
		}}},
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: "call_abc", Content: "x"},
	)
	tr := stream(t, newClient(srv), req)
	if tr.err == nil || !strings.Contains(tr.err.Error(), "Tool call id was call_abc but must be a-z, A-Z, 0-9, with a length of 9.") {
		t.Fatalf("error %v", tr.err)
	}
}
