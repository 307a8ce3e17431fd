package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"retrace/agent/llmserver"
)

// Rules selects the provider-specific checks on top of the ones every
// strict server makes. The zero value checks what OpenAI checks.
type Rules struct {
	// MistralIDs rejects tool call ids that are not [a-zA-Z0-9]{9}, as
	// Mistral (and vLLM with a Mistral tokenizer) does on replayed history.
	MistralIDs bool
	// OllamaJSONArgs rejects tool call arguments that are not a JSON
	// object, as Ollama does when it converts history.
	OllamaJSONArgs bool
	// RejectReasoningEcho rejects any message carrying reasoning_content:
	// DeepSeek R1's rule.
	RejectReasoningEcho bool
	// RequireReasoningEcho rejects an assistant message with tool calls
	// that lacks reasoning_content: DeepSeek's thinking-mode rule, the
	// opposite of R1's.
	RequireReasoningEcho bool
	// ToolContentStatus is the status for a tool message without a
	// "content" key: 0 or 400 for OpenAI's wording, 422 for DeepSeek's
	// deserializer error.
	ToolContentStatus int
}

// check is one rule of the table: on says whether the Rules enable it (nil
// means always), run returns what the request breaks.
type check struct {
	name string
	on   func(Rules) bool
	run  func(llmserver.Request, Rules) []Violation
}

// checks is every rule the server enforces, in the order a request is
// answered: the first violation found is the one sent back.
var checks = []check{
	{name: "model", run: checkModel},
	{name: "messages", run: checkMessagesPresent},
	{name: "roles", run: checkRoles},
	{name: "content", run: checkContent},
	{name: "tool call shape", run: checkToolCallShape},
	{name: "tool pairing", run: checkPairing},
	{name: "last role", run: checkLastRole},
	{name: "assistant twice", run: checkAssistantTwice},
	{name: "mistral ids", on: func(r Rules) bool { return r.MistralIDs }, run: checkMistralIDs},
	{name: "ollama arguments", on: func(r Rules) bool { return r.OllamaJSONArgs }, run: checkOllamaArgs},
	{name: "reasoning echo", on: func(r Rules) bool { return r.RejectReasoningEcho }, run: checkReasoningEcho},
	{name: "reasoning missing", on: func(r Rules) bool { return r.RequireReasoningEcho }, run: checkReasoningMissing},
}

// Check decodes a request body and returns every rule it breaks under r,
// most important first; a strict server answers with the first. Tests of
// other packages may call it on bodies they build, without a server.
func Check(body []byte, r Rules) (llmserver.Request, []Violation) {
	req, errs := llmserver.Decode(body)
	bad := typeViolations(req, errs)
	if len(bad) == 0 {
		for _, c := range checks {
			if c.on == nil || c.on(r) {
				bad = append(bad, c.run(req, r)...)
			}
		}
	}
	for i := range bad {
		bad[i].Status = bad[i].status()
	}
	return req, bad
}

func checkModel(req llmserver.Request, _ Rules) []Violation {
	if req.Model != "" {
		return nil
	}
	return []Violation{{Rule: RuleModel, Message: "you must provide a model parameter"}}
}

func checkMessagesPresent(req llmserver.Request, _ Rules) []Violation {
	if len(req.Messages) > 0 {
		return nil
	}
	return []Violation{{Rule: RuleNoMessages, Message: "[] is too short - 'messages'", Param: "messages"}}
}

var roles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true, "function": true}

func checkRoles(req llmserver.Request, _ Rules) []Violation {
	var bad []Violation
	for i, m := range req.Messages {
		if m.Role == "" && m.Field("role") == nil {
			bad = append(bad, missing(RuleRole, msgPath(i)+".role"))
		} else if !roles[m.Role] {
			bad = append(bad, Violation{
				Rule: RuleRole,
				Message: fmt.Sprintf("Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', "+
					"'function', 'tool', and 'developer'.", m.Role),
				Param: msgPath(i) + ".role",
			})
		}
	}
	return bad
}

// checkContent enforces that every message says something: text, or tool
// calls. A tool message must carry the key even when its text is empty.
func checkContent(req llmserver.Request, r Rules) []Violation {
	var bad []Violation
	for i, m := range req.Messages {
		switch {
		case m.HasContent:
		case m.Role == "tool" && m.ContentRaw == nil:
			bad = append(bad, toolContentMissing(i, r.ToolContentStatus))
		case m.Role == "assistant" && (len(m.ToolCalls) > 0 || m.Field("function_call") != nil):
		default:
			bad = append(bad, Violation{
				Rule:    RuleNullContent,
				Message: "Invalid value for 'content': expected a string, got null.",
				Param:   fmt.Sprintf("messages.[%d].content", i),
			})
		}
	}
	return bad
}

func toolContentMissing(i, status int) Violation {
	if status == http.StatusUnprocessableEntity {
		return Violation{
			Rule:   RuleToolContent,
			Status: status,
			Message: fmt.Sprintf("Failed to deserialize the JSON body into the target type: messages[%d]: "+
				"missing field `content`", i),
		}
	}
	v := missing(RuleToolContent, msgPath(i)+".content")
	v.Status = status
	return v
}

// checkToolCallShape checks each declared call field by field, and that
// tool messages name the call they answer.
func checkToolCallShape(req llmserver.Request, _ Rules) []Violation {
	var bad []Violation
	for i, m := range req.Messages {
		if m.Role == "tool" && m.Field("tool_call_id") == nil {
			bad = append(bad, missing(RuleToolCallShape, msgPath(i)+".tool_call_id"))
		}
		for j, c := range m.ToolCalls {
			bad = append(bad, checkCall(callPath(i, j), c)...)
		}
	}
	return bad
}

func checkCall(path string, c llmserver.ToolCall) []Violation {
	var obj map[string]json.RawMessage
	_ = json.Unmarshal(c.Raw, &obj) // Decode already proved it an object
	var bad []Violation
	switch id := obj["id"]; {
	case id == nil:
		bad = append(bad, missing(RuleToolCallShape, path+".id"))
	case id[0] != '"':
		v := typeViolation(path+".id", "a string", id)
		v.Rule = RuleToolCallShape
		bad = append(bad, v)
	}
	switch t := obj["type"]; {
	case t == nil:
		bad = append(bad, missing(RuleToolType, path+".type"))
	case c.Type != "function":
		bad = append(bad, Violation{
			Rule:    RuleToolType,
			Message: fmt.Sprintf("Invalid value: '%s'. Supported values are: 'function'.", strings.Trim(string(t), `"`)),
			Param:   path + ".type",
		})
	}
	fn := obj["function"]
	if fn == nil {
		return append(bad, missing(RuleToolCallShape, path+".function"))
	}
	if field(fn, "name") == nil {
		bad = append(bad, missing(RuleToolCallShape, path+".function.name"))
	}
	args := field(fn, "arguments")
	switch {
	case args == nil:
		bad = append(bad, missing(RuleArguments, path+".function.arguments"))
	case !c.ArgumentsIsString:
		v := typeViolation(path+".function.arguments", "a string", args)
		v.Rule = RuleArguments
		bad = append(bad, v)
	case c.Arguments == "":
		bad = append(bad, Violation{
			Rule:    RuleArguments,
			Message: fmt.Sprintf("Invalid value for '%s.function.arguments': expected a JSON string, got an empty string.", path),
			Param:   path + ".function.arguments",
		})
	}
	return bad
}

var mistralID = regexp.MustCompile(`^[a-zA-Z0-9]{9}$`)

func checkMistralIDs(req llmserver.Request, _ Rules) []Violation {
	var bad []Violation
	seen := map[string]bool{}
	flag := func(id string) {
		if !mistralID.MatchString(id) && !seen[id] {
			seen[id] = true
			bad = append(bad, Violation{
				Rule:    RuleMistralID,
				Message: fmt.Sprintf("Tool call id was %s but must be a-z, A-Z, 0-9, with a length of 9.", id),
			})
		}
	}
	for _, m := range req.Messages {
		for _, c := range m.ToolCalls {
			flag(c.ID)
		}
		if m.Role == "tool" {
			flag(m.ToolCallID)
		}
	}
	return bad
}

func checkOllamaArgs(req llmserver.Request, _ Rules) []Violation {
	var bad []Violation
	for _, m := range req.Messages {
		for _, c := range m.ToolCalls {
			var obj map[string]any
			if json.Unmarshal([]byte(c.Arguments), &obj) != nil || obj == nil {
				bad = append(bad, Violation{Rule: RuleOllamaArgs, Message: "invalid tool call arguments"})
			}
		}
	}
	return bad
}

func checkReasoningEcho(req llmserver.Request, _ Rules) []Violation {
	var bad []Violation
	for i, m := range req.Messages {
		if rc := m.Field("reasoning_content"); rc != nil && !isNull(rc) {
			bad = append(bad, Violation{
				Rule: RuleReasoningEcho,
				Message: fmt.Sprintf("The reasoning_content of a previous answer must not be sent back "+
					"(message index %d).", i),
				Code: "invalid_request_error",
			})
		}
	}
	return bad
}

func checkReasoningMissing(req llmserver.Request, _ Rules) []Violation {
	var bad []Violation
	for i, m := range req.Messages {
		if m.Role == "assistant" && len(m.ToolCalls) > 0 && m.ReasoningContent == "" {
			bad = append(bad, Violation{
				Rule: RuleReasoningMissing,
				Message: fmt.Sprintf("Missing `reasoning_content` field in the assistant message at message index %d. "+
					"For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls", i),
				Code: "invalid_request_error",
			})
		}
	}
	return bad
}

// checkLastRole: a request ends with what the model is to answer, a user
// or tool message, never with the model's own words.
func checkLastRole(req llmserver.Request, _ Rules) []Violation {
	if len(req.Messages) == 0 {
		return nil
	}
	i := len(req.Messages) - 1
	if role := req.Messages[i].Role; role != "user" && role != "tool" {
		return []Violation{{
			Rule:    RuleLastRole,
			Message: fmt.Sprintf("Expected last role User or Tool (or Assistant with prefix True) for serving but got %s", role),
			Param:   msgPath(i) + ".role",
		}}
	}
	return nil
}

// checkAssistantTwice: the model's turns alternate with what it answers.
func checkAssistantTwice(req llmserver.Request, _ Rules) []Violation {
	var bad []Violation
	for i := 1; i < len(req.Messages); i++ {
		if req.Messages[i].Role == "assistant" && req.Messages[i-1].Role == "assistant" {
			bad = append(bad, Violation{
				Rule:    RuleAssistantTwice,
				Message: fmt.Sprintf("Unexpected role 'assistant' after role 'assistant' (messages %d and %d)", i-1, i),
				Param:   msgPath(i) + ".role",
			})
		}
	}
	return bad
}
