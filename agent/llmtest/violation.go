package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"retrace/agent/llmserver"
)

// Rule names a rule a strict server enforces. Tests match on it rather than
// on the message text, which belongs to the server being imitated.
type Rule string

// The rules. Each Violation carries one of these.
const (
	// RuleMalformed: the body is not JSON, or a field has the wrong type.
	RuleMalformed Rule = "malformed"
	// RuleModel: no "model".
	RuleModel Rule = "missing_model"
	// RuleNoMessages: "messages" is missing or empty.
	RuleNoMessages Rule = "no_messages"
	// RuleRole: a role that is not system, developer, user, assistant,
	// tool or function.
	RuleRole Rule = "unknown_role"
	// RuleNullContent: a message with neither content nor tool_calls
	// (content absent or null).
	RuleNullContent Rule = "null_content"
	// RuleToolContent: a tool message without a "content" key, which is
	// what go-openai sends for an empty tool result.
	RuleToolContent Rule = "tool_content_missing"
	// RuleToolCallShape: a tool call without id, function or name, a
	// non-string id, or a tool message without tool_call_id.
	RuleToolCallShape Rule = "tool_call_shape"
	// RuleToolType: a tool call whose type is missing or not "function".
	RuleToolType Rule = "tool_call_type"
	// RuleArguments: tool call arguments missing, empty, or not a string.
	RuleArguments Rule = "tool_call_arguments"
	// RuleUnanswered: an assistant tool call with no tool message
	// answering it before the next non-tool message.
	RuleUnanswered Rule = "unanswered_tool_call"
	// RuleOrphanTool: a tool message that answers no id declared by the
	// assistant message it follows.
	RuleOrphanTool Rule = "orphan_tool_message"
	// RuleDuplicateAnswer: a second tool message for the same id.
	RuleDuplicateAnswer Rule = "duplicate_tool_answer"
	// RuleMistralID: (Rules.MistralIDs) an id that is not [a-zA-Z0-9]{9}.
	RuleMistralID Rule = "mistral_tool_call_id"
	// RuleOllamaArgs: (Rules.OllamaJSONArgs) arguments that are not a JSON
	// object.
	RuleOllamaArgs Rule = "ollama_tool_call_arguments"
	// RuleReasoningEcho: (Rules.RejectReasoningEcho) a message carrying
	// reasoning_content.
	RuleReasoningEcho Rule = "reasoning_echo"
	// RuleReasoningMissing: (Rules.RequireReasoningEcho) an assistant
	// message with tool calls but no reasoning_content.
	RuleReasoningMissing Rule = "reasoning_missing"
	// RuleLastRole: the last message is not from the user or a tool.
	// Mistral refuses it; Anthropic-compatible servers take a trailing
	// assistant message as a reply to continue.
	RuleLastRole Rule = "last_message_role"
	// RuleAssistantTwice: two assistant messages in a row, which Mistral
	// and Anthropic-compatible servers refuse.
	RuleAssistantTwice Rule = "consecutive_assistant_messages"
	// RuleNoScript: a valid request arrived with no scripted response left
	// and no handler, or a handler that returned nil.
	RuleNoScript Rule = "no_scripted_response"
	// RuleEndpoint: a request to anything but POST /v1/chat/completions.
	RuleEndpoint Rule = "unknown_endpoint"
)

// Violation is a request the server refused, with what it answered.
type Violation struct {
	// Request is the index of the offending request in Server.Requests.
	Request int
	Rule    Rule
	// Status is the HTTP status answered (400 unless noted on the rule).
	Status int
	// Message, Param and Code are the fields of the error body; Param ""
	// and Code nil are sent as null.
	Message string
	Param   string
	Code    any
}

// String is what a test prints when it finds a violation it did not expect.
func (v Violation) String() string {
	return fmt.Sprintf("request %d: %s (HTTP %d): %s", v.Request, v.Rule, v.status(), v.Message)
}

// Body is the JSON error body the server answers the violation with.
func (v Violation) Body() string {
	typ := "invalid_request_error"
	if v.status() >= 500 {
		typ = "server_error"
	}
	return llmserver.ErrorBody(v.Message, typ, v.Param, v.Code)
}

func (v Violation) status() int {
	if v.Status == 0 {
		return http.StatusBadRequest
	}
	return v.Status
}

func malformedBody() Violation {
	return Violation{
		Rule: RuleMalformed,
		Message: "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your " +
			"HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
	}
}

// typeViolation words a wrong JSON type the way OpenAI does.
func typeViolation(path, want string, got json.RawMessage) Violation {
	return Violation{
		Rule:    RuleMalformed,
		Message: fmt.Sprintf("Invalid type for '%s': expected %s, but got %s instead.", path, want, kind(got)),
		Param:   path,
	}
}

func missing(rule Rule, path string) Violation {
	return Violation{Rule: rule, Message: fmt.Sprintf("Missing required parameter: '%s'.", path), Param: path}
}

// msgPath is the path style of OpenAI's type errors ("messages[2]"); the
// pairing errors use "messages.[2]" instead, as OpenAI does.
func msgPath(i int) string { return "messages[" + strconv.Itoa(i) + "]" }

func callPath(i, j int) string { return msgPath(i) + ".tool_calls[" + strconv.Itoa(j) + "]" }

func rolePath(i int) string { return "messages.[" + strconv.Itoa(i) + "].role" }

// typeViolations words what Decode could not decode the way OpenAI does,
// and adds the one missing value Decode does not report: "messages".
func typeViolations(req llmserver.Request, errs []llmserver.TypeError) []Violation {
	var bad []Violation
	for _, e := range errs {
		if e.Path == "" {
			return []Violation{malformedBody()}
		}
		bad = append(bad, typeViolation(e.Path, e.Want, e.Got))
	}
	if len(bad) == 0 && req.Field("messages") == nil {
		bad = append(bad, Violation{Rule: RuleNoMessages, Message: "Missing required parameter: 'messages'.", Param: "messages"})
	}
	return bad
}

// kind names a JSON value's type the way OpenAI's validation messages do.
func kind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	if bytes.ContainsAny(raw, ".eE") {
		return "a decimal"
	}
	return "an integer"
}

// field decodes one key of a JSON object; nil when absent or not an object.
func field(raw []byte, key string) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return nil
	}
	return obj[key]
}

func isNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}
