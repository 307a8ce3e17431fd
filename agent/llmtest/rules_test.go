package llmtest_test

import (
	"cmp"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/sashabaranov/go-openai"

	"retrace/agent/llmtest"
)

// chat wraps hand-written messages in a request body.
func chat(messages string) []byte {
	return []byte(`{"model":"gpt-x","messages":[` + messages + `],"stream":true}`)
}

const (
	user      = `{"role":"user","content":"hi"}`
	callsAB   = `{"role":"assistant","tool_calls":[{"id":"call_A","type":"function","function":{"name":"read","arguments":"{}"}},{"id":"call_B","type":"function","function":{"name":"read","arguments":"{}"}}]}`
	answerA   = `{"role":"tool","tool_call_id":"call_A","content":"a"}`
	answerB   = `{"role":"tool","tool_call_id":"call_B","content":"b"}`
	textReply = `{"role":"assistant","content":"done"}`
)

// callWith is an assistant message with one call whose fields are given raw.
func callWith(fields string) string {
	return `{"role":"assistant","tool_calls":[{` + fields + `}]}`
}

func TestCheckAcceptsValidHistories(t *testing.T) {
	for name, body := range map[string][]byte{
		"one user message":        chat(user),
		"system, developer, user": chat(`{"role":"system","content":"s"},{"role":"developer","content":"d"},` + user),
		"text exchange":           chat(user + "," + textReply + "," + user),
		"calls answered":          chat(user + "," + callsAB + "," + answerA + "," + answerB + "," + textReply + "," + user),
		"answered out of order":   chat(user + "," + callsAB + "," + answerB + "," + answerA),
		"empty tool result":       chat(user + `,{"role":"assistant","content":"","tool_calls":[{"id":"c","type":"function","function":{"name":"n","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":""}`),
		"content parts":           chat(`{"role":"user","content":[{"type":"text","text":"hi"}]}`),
		"two exchanges":           chat(user + "," + callsAB + "," + answerA + "," + answerB + "," + callsAB + "," + answerA + "," + answerB),
	} {
		t.Run(name, func(t *testing.T) {
			if _, bad := llmtest.Check(body, llmtest.Rules{}); len(bad) != 0 {
				t.Fatalf("valid request rejected: %v", bad)
			}
		})
	}
}

func TestCheckRejects(t *testing.T) {
	tests := []struct {
		name    string
		body    []byte
		rules   llmtest.Rules
		rule    llmtest.Rule
		message string // checked when not ""
		param   string // checked when message is checked
		status  int    // 0 means 400
	}{
		{
			name: "ends with the model's reply", body: chat(user + "," + textReply),
			rule:    llmtest.RuleLastRole,
			message: "Expected last role User or Tool (or Assistant with prefix True) for serving but got assistant",
			param:   "messages[1].role",
		},
		{
			name: "ends with a system message", body: chat(user + `,{"role":"system","content":"s"}`),
			rule:    llmtest.RuleLastRole,
			message: "Expected last role User or Tool (or Assistant with prefix True) for serving but got system",
			param:   "messages[1].role",
		},
		{
			name: "two replies in a row", body: chat(user + "," + textReply + "," + textReply + "," + user),
			rule:    llmtest.RuleAssistantTwice,
			message: "Unexpected role 'assistant' after role 'assistant' (messages 1 and 2)",
			param:   "messages[2].role",
		},
		{
			name: "call without an answer", body: chat(user + "," + callsAB + "," + answerA + "," + user),
			rule:    llmtest.RuleUnanswered,
			message: "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_B",
			param:   "messages.[1].role",
		},
		{
			name: "history ends at the calls", body: chat(user + "," + callsAB),
			rule:    llmtest.RuleUnanswered,
			message: "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_A, call_B",
			param:   "messages.[1].role",
		},
		{
			name: "tool message with no call", body: chat(user + "," + answerA),
			rule:    llmtest.RuleOrphanTool,
			message: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
			param:   "messages.[1].role",
		},
		{
			name: "answer to an undeclared id", body: chat(user + "," + callsAB + "," + answerA + "," + answerB + `,{"role":"tool","tool_call_id":"call_C","content":"c"}`),
			rule: llmtest.RuleOrphanTool,
		},
		{
			name: "answer after the run ended", body: chat(user + "," + callsAB + "," + answerA + "," + answerB + "," + user + "," + answerA),
			rule: llmtest.RuleOrphanTool,
		},
		{
			name: "answered twice", body: chat(user + "," + callsAB + "," + answerA + "," + answerA + "," + answerB),
			rule:    llmtest.RuleDuplicateAnswer,
			message: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
			param:   "messages.[3].role",
		},
		{
			name: "user content null", body: chat(`{"role":"user","content":null}`),
			rule:    llmtest.RuleNullContent,
			message: "Invalid value for 'content': expected a string, got null.",
			param:   "messages.[0].content",
		},
		{name: "user content absent", body: chat(`{"role":"user"}`), rule: llmtest.RuleNullContent},
		{name: "assistant with nothing", body: chat(user + `,{"role":"assistant"}`), rule: llmtest.RuleNullContent},
		{
			name: "tool content absent", body: chat(user + `,` + callsAB + `,{"role":"tool","tool_call_id":"call_A"},` + answerB),
			rule:    llmtest.RuleToolContent,
			message: "Missing required parameter: 'messages[2].content'.",
			param:   "messages[2].content",
		},
		{
			name: "tool content absent, DeepSeek", body: chat(user + `,` + callsAB + `,{"role":"tool","tool_call_id":"call_A"},` + answerB),
			rules: llmtest.Rules{ToolContentStatus: http.StatusUnprocessableEntity}, rule: llmtest.RuleToolContent,
			message: "Failed to deserialize the JSON body into the target type: messages[2]: missing field `content`",
			status:  http.StatusUnprocessableEntity,
		},
		{name: "tool content null", body: chat(user + `,` + callsAB + `,{"role":"tool","tool_call_id":"call_A","content":null},` + answerB), rule: llmtest.RuleNullContent},
		{
			name: "arguments missing", body: chat(user + "," + callWith(`"id":"c","type":"function","function":{"name":"n"}`)),
			rule:    llmtest.RuleArguments,
			message: "Missing required parameter: 'messages[1].tool_calls[0].function.arguments'.",
			param:   "messages[1].tool_calls[0].function.arguments",
		},
		{
			name: "arguments empty", body: chat(user + "," + callWith(`"id":"c","type":"function","function":{"name":"n","arguments":""}`)),
			rule:    llmtest.RuleArguments,
			message: "Invalid value for 'messages[1].tool_calls[0].function.arguments': expected a JSON string, got an empty string.",
			param:   "messages[1].tool_calls[0].function.arguments",
		},
		{
			name: "arguments an object", body: chat(user + "," + callWith(`"id":"c","type":"function","function":{"name":"n","arguments":{"a":1}}`)),
			rule:    llmtest.RuleArguments,
			message: "Invalid type for 'messages[1].tool_calls[0].function.arguments': expected a string, but got an object instead.",
			param:   "messages[1].tool_calls[0].function.arguments",
		},
		{
			name: "type missing", body: chat(user + "," + callWith(`"id":"c","function":{"name":"n","arguments":"{}"}`)),
			rule:    llmtest.RuleToolType,
			message: "Missing required parameter: 'messages[1].tool_calls[0].type'.",
			param:   "messages[1].tool_calls[0].type",
		},
		{
			name: "type not function", body: chat(user + "," + callWith(`"id":"c","type":"","function":{"name":"n","arguments":"{}"}`)),
			rule:    llmtest.RuleToolType,
			message: "Invalid value: ''. Supported values are: 'function'.",
			param:   "messages[1].tool_calls[0].type",
		},
		{
			name: "numeric id", body: chat(user + "," + callWith(`"id":7,"type":"function","function":{"name":"n","arguments":"{}"}`)),
			rule:    llmtest.RuleToolCallShape,
			message: "Invalid type for 'messages[1].tool_calls[0].id': expected a string, but got an integer instead.",
			param:   "messages[1].tool_calls[0].id",
		},
		{name: "id missing", body: chat(user + "," + callWith(`"type":"function","function":{"name":"n","arguments":"{}"}`)), rule: llmtest.RuleToolCallShape},
		{name: "name missing", body: chat(user + "," + callWith(`"id":"c","type":"function","function":{"arguments":"{}"}`)), rule: llmtest.RuleToolCallShape},
		{name: "tool_call_id missing", body: chat(user + "," + callsAB + `,{"role":"tool","content":"x"},` + answerA + "," + answerB), rule: llmtest.RuleToolCallShape},
		{
			name: "no messages", body: []byte(`{"model":"gpt-x","messages":[]}`),
			rule: llmtest.RuleNoMessages, message: "[] is too short - 'messages'", param: "messages",
		},
		{name: "messages missing", body: []byte(`{"model":"gpt-x"}`), rule: llmtest.RuleNoMessages},
		{name: "messages not an array", body: []byte(`{"model":"gpt-x","messages":{}}`), rule: llmtest.RuleMalformed},
		{name: "message not an object", body: chat(`"hi"`), rule: llmtest.RuleMalformed},
		{
			name: "unknown role", body: chat(`{"role":"bot","content":"x"}`),
			rule:    llmtest.RuleRole,
			message: "Invalid value: 'bot'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.",
			param:   "messages[0].role",
		},
		{name: "role missing", body: chat(`{"content":"x"}`), rule: llmtest.RuleRole},
		{name: "not JSON", body: []byte(`{"model":`), rule: llmtest.RuleMalformed},
		{name: "model missing", body: []byte(`{"messages":[` + user + `]}`), rule: llmtest.RuleModel, message: "you must provide a model parameter"},
		{
			name: "Mistral id", body: chat(user + "," + callsAB + "," + answerA + "," + answerB), rules: llmtest.Rules{MistralIDs: true},
			rule:    llmtest.RuleMistralID,
			message: "Tool call id was call_A but must be a-z, A-Z, 0-9, with a length of 9.",
		},
		{
			name: "Ollama arguments", body: chat(user + "," + callWith(`"id":"c","type":"function","function":{"name":"n","arguments":"{'a':1}"}`) + `,{"role":"tool","tool_call_id":"c","content":"x"}`),
			rules: llmtest.Rules{OllamaJSONArgs: true}, rule: llmtest.RuleOllamaArgs, message: "invalid tool call arguments",
		},
		{
			name: "Ollama arguments not an object", body: chat(user + "," + callWith(`"id":"c","type":"function","function":{"name":"n","arguments":"[1]"}`) + `,{"role":"tool","tool_call_id":"c","content":"x"}`),
			rules: llmtest.Rules{OllamaJSONArgs: true}, rule: llmtest.RuleOllamaArgs,
		},
		{
			name: "reasoning echoed to R1", body: chat(user + `,{"role":"assistant","content":"x","reasoning_content":"because"},` + user),
			rules: llmtest.Rules{RejectReasoningEcho: true}, rule: llmtest.RuleReasoningEcho,
		},
		{
			name: "reasoning not echoed in thinking mode", body: chat(user + "," + callsAB + "," + answerA + "," + answerB),
			rules:   llmtest.Rules{RequireReasoningEcho: true},
			rule:    llmtest.RuleReasoningMissing,
			message: "Missing `reasoning_content` field in the assistant message at message index 1. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, bad := llmtest.Check(tt.body, tt.rules)
			if len(bad) == 0 {
				t.Fatalf("accepted; want %s", tt.rule)
			}
			v := bad[0]
			if v.Rule != tt.rule {
				t.Fatalf("first violation %v; want rule %s", v, tt.rule)
			}
			if tt.message != "" && (v.Message != tt.message || v.Param != tt.param) {
				t.Errorf("message %q param %q\nwant    %q param %q", v.Message, v.Param, tt.message, tt.param)
			}
			if want := cmp.Or(tt.status, http.StatusBadRequest); v.Status != want {
				t.Errorf("status %d, want %d", v.Status, want)
			}
			var env struct {
				Error struct {
					Message string
					Type    string
				}
			}
			if err := json.Unmarshal([]byte(v.Body()), &env); err != nil || env.Error.Message != v.Message {
				t.Errorf("body %s does not carry the message (%v)", v.Body(), err)
			}
		})
	}
}

func TestCheckModesAcceptWhatTheyShould(t *testing.T) {
	ok := chat(user + `,{"role":"assistant","reasoning_content":"r","tool_calls":[{"id":"abcDEF123","type":"function","function":{"name":"n","arguments":"{\"a\":1}"}}]},{"role":"tool","tool_call_id":"abcDEF123","content":"x"}`)
	rules := llmtest.Rules{MistralIDs: true, OllamaJSONArgs: true, RequireReasoningEcho: true}
	if _, bad := llmtest.Check(ok, rules); len(bad) != 0 {
		t.Fatalf("rejected: %v", bad)
	}
	noEcho := chat(user + "," + textReply + "," + user)
	if _, bad := llmtest.Check(noEcho, llmtest.Rules{RejectReasoningEcho: true}); len(bad) != 0 {
		t.Fatalf("rejected: %v", bad)
	}
}

// TestCheckGoOpenAIHistory runs the checker on what go-openai itself
// serializes: a correct history passes, and an empty tool result (sent
// without "content") is caught, as DeepSeek and Ollama would catch it.
func TestCheckGoOpenAIHistory(t *testing.T) {
	history := []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleUser, Content: "read a.go"},
		{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{{
			ID: "call_1", Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: "read_file", Arguments: `{"path":"a.go"}`},
		}}},
		{Role: openai.ChatMessageRoleTool, ToolCallID: "call_1", Content: "package main"},
	}
	body, err := json.Marshal(openai.ChatCompletionRequest{Model: "gpt-x", Messages: history})
	if err != nil {
		t.Fatal(err)
	}
	if _, bad := llmtest.Check(body, llmtest.Rules{}); len(bad) != 0 {
		t.Fatalf("go-openai history rejected: %v", bad)
	}

	history[2].Content = ""
	body, _ = json.Marshal(openai.ChatCompletionRequest{Model: "gpt-x", Messages: history})
	if _, bad := llmtest.Check(body, llmtest.Rules{}); len(bad) != 1 || bad[0].Rule != llmtest.RuleToolContent {
		t.Fatalf("empty tool result: got %v, want one %s", bad, llmtest.RuleToolContent)
	}
}

func TestRequestKeepsPresence(t *testing.T) {
	body := []byte(`{"model":"m","stream":true,"stream_options":{"include_usage":true},` +
		`"tools":[{"type":"function","function":{"name":"read_file"}},{"type":"function","function":{"name":"write_file"}}],` +
		`"messages":[{"role":"user","content":""},{"role":"user","content":null},{"role":"user"},` +
		`{"role":"assistant","reasoning_content":"r","tool_calls":[{"id":"c","type":"function","function":{"name":"n","arguments":{"a":1}}}]}]}`)
	req, _ := llmtest.Check(body, llmtest.Rules{})
	if req.Model != "m" || !req.Stream || !req.IncludeUsage || len(req.Tools) != 2 || req.Tools[1] != "write_file" {
		t.Fatalf("top level decoded as %+v", req)
	}
	if req.Field("temperature") != nil || string(req.Field("stream")) != "true" {
		t.Error("Field does not report presence")
	}
	m := req.Messages
	if !m[0].HasContent || string(m[0].ContentRaw) != `""` {
		t.Errorf(`"" content: %+v`, m[0])
	}
	if m[1].HasContent || string(m[1].ContentRaw) != "null" {
		t.Errorf("null content: %+v", m[1])
	}
	if m[2].HasContent || m[2].ContentRaw != nil {
		t.Errorf("absent content: %+v", m[2])
	}
	c := m[3].ToolCalls[0]
	if c.ArgumentsIsString || c.Arguments != `{"a":1}` || c.Name != "n" || m[3].ReasoningContent != "r" {
		t.Errorf("tool call: %+v", c)
	}
}
