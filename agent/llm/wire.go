package llm

import (
	"encoding/json"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"retrace/state"
)

// NoOutput stands in for an empty tool result. go-openai omits an empty
// content field, and DeepSeek (422) and Ollama (400) reject a tool message
// without one.
const NoOutput = "(no output)"

// Messages turns a conversation into what is sent: the system text first
// (the caller folds every system instruction into it), then the history as
// strict servers want it. System messages inside history are skipped: the
// caller has folded them into system.
//
//   - a tool message always has content;
//   - tool call arguments are always a JSON object string ("{}" for none,
//     and for arguments that were not valid JSON: the tool result already
//     told the model so, and Ollama rejects invalid ones with a 400);
//   - every tool call has type "function" and no index.
func Messages(system string, history []state.Message) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, 0, len(history)+1)
	if system != "" {
		out = append(out, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: system})
	}
	for _, m := range history {
		switch m.Role {
		case state.RoleSystem:
			continue
		case state.RoleTool:
			content := m.Content
			if strings.TrimSpace(content) == "" {
				content = NoOutput
			}
			out = append(out, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, Content: content, ToolCallID: m.ToolCallID})
		case state.RoleAssistant:
			msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: m.Content}
			for _, c := range m.ToolCalls {
				msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{
					ID:       c.ID,
					Type:     openai.ToolTypeFunction,
					Function: openai.FunctionCall{Name: c.Name, Arguments: wireArgs(c.Arguments)},
				})
			}
			out = append(out, msg)
		default:
			out = append(out, openai.ChatCompletionMessage{Role: m.Role, Content: m.Content})
		}
	}
	return out
}

func wireArgs(args string) string {
	if strings.TrimSpace(args) == "" || !json.Valid([]byte(args)) || !isObject(args) {
		return "{}"
	}
	return args
}
