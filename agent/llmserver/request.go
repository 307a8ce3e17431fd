package llmserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// Request is one request the server received, decoded from the bytes as
// sent. Presence is kept where it matters to strict servers (a missing
// "content" key is not the same request as "content":null or ""), so tests
// can assert on exactly what the client put on the wire.
type Request struct {
	// Method and Path are as received; Path includes the /v1 prefix.
	Method, Path string
	Model        string
	Messages     []Message
	// Tools holds the names of the functions offered in "tools", in order.
	Tools []string
	// Stream is the "stream" flag; IncludeUsage is
	// "stream_options.include_usage".
	Stream       bool
	IncludeUsage bool
	Header       http.Header
	// Raw is the request body, byte for byte.
	Raw []byte
}

// Field returns the raw JSON of a top-level key of the body, or nil when
// the key was not sent. It answers questions the typed fields cannot, such
// as whether "temperature" was dropped by omitempty.
func (r Request) Field(key string) json.RawMessage {
	return field(r.Raw, key)
}

// Message is one entry of "messages" as sent.
type Message struct {
	Role string
	// Content is the text: the string itself, or the text parts of an
	// array joined together; "" when null or absent.
	Content string
	// HasContent reports that the "content" key was present and not null.
	HasContent bool
	// ContentRaw is the "content" value as sent: nil when the key was
	// absent, "null" when it was null.
	ContentRaw       json.RawMessage
	ToolCalls        []ToolCall
	ToolCallID       string
	Name             string
	ReasoningContent string
	// Raw is the message object, byte for byte.
	Raw json.RawMessage
}

// Field returns the raw JSON of a key of the message, or nil when absent.
func (m Message) Field(key string) json.RawMessage {
	return field(m.Raw, key)
}

// ToolCall is one entry of an assistant message's "tool_calls" as sent.
type ToolCall struct {
	ID   string
	Type string
	Name string
	// Arguments is the arguments string, or the raw JSON when the client
	// sent something else (an object, a number); ArgumentsIsString tells
	// which.
	Arguments         string
	ArgumentsIsString bool
	// Raw is the tool call object, byte for byte.
	Raw json.RawMessage
}

// field decodes one key of a JSON object; nil when absent or not an object.
func field(raw []byte, key string) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return nil
	}
	return obj[key]
}

// TypeError is a value of a request body whose JSON type is not the one
// the API defines. Decode reports it and decodes what it can around it;
// refusing the request is for a Gate to decide.
type TypeError struct {
	// Path locates the value the way OpenAI's errors do
	// ("messages[2].content"); "" is the body itself, when it is not a
	// JSON object.
	Path string
	// Want is the type the API defines, as OpenAI words it ("an array").
	Want string
	// Got is the value as sent.
	Got json.RawMessage
}

// Decode fills a Request from a body, keeping presence, and reports every
// value of the wrong type. A body that is not a JSON object, or whose
// "messages" is not an array, is decoded no further.
func Decode(body []byte) (Request, []TypeError) {
	req := Request{Raw: body}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return req, []TypeError{{Want: "an object", Got: body}}
	}
	req.Model, _ = asString(top["model"])
	req.Stream, _ = asBool(top["stream"])
	if so := top["stream_options"]; so != nil {
		req.IncludeUsage, _ = asBool(field(so, "include_usage"))
	}
	req.Tools = toolNames(top["tools"])

	raw, ok := top["messages"]
	if !ok {
		return req, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return req, []TypeError{{Path: "messages", Want: "an array", Got: raw}}
	}
	var bad []TypeError
	for i, item := range items {
		m, errs := decodeMessage(i, item)
		req.Messages = append(req.Messages, m)
		bad = append(bad, errs...)
	}
	return req, bad
}

func decodeMessage(i int, raw json.RawMessage) (Message, []TypeError) {
	m := Message{Raw: raw}
	at := "messages[" + strconv.Itoa(i) + "]"
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return m, []TypeError{{Path: at, Want: "an object", Got: raw}}
	}
	var bad []TypeError
	if r, ok := obj["role"]; ok {
		if m.Role, ok = asString(r); !ok {
			bad = append(bad, TypeError{Path: at + ".role", Want: "a string", Got: r})
		}
	}
	m.ContentRaw = obj["content"]
	m.HasContent = m.ContentRaw != nil && !isNull(m.ContentRaw)
	if m.HasContent {
		text, ok := contentText(m.ContentRaw)
		if !ok {
			bad = append(bad, TypeError{Path: at + ".content", Want: "a string or an array", Got: m.ContentRaw})
		}
		m.Content = text
	}
	m.ToolCallID, _ = asString(obj["tool_call_id"])
	m.Name, _ = asString(obj["name"])
	m.ReasoningContent, _ = asString(obj["reasoning_content"])
	if tc, ok := obj["tool_calls"]; ok && !isNull(tc) {
		var calls []json.RawMessage
		if json.Unmarshal(tc, &calls) != nil {
			return m, append(bad, TypeError{Path: at + ".tool_calls", Want: "an array", Got: tc})
		}
		for j, c := range calls {
			call, ok := decodeToolCall(c)
			if !ok {
				bad = append(bad, TypeError{Path: at + ".tool_calls[" + strconv.Itoa(j) + "]", Want: "an object", Got: c})
			}
			m.ToolCalls = append(m.ToolCalls, call)
		}
	}
	return m, bad
}

func decodeToolCall(raw json.RawMessage) (ToolCall, bool) {
	c := ToolCall{Raw: raw}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return c, false
	}
	if id, ok := asString(obj["id"]); ok {
		c.ID = id
	} else if obj["id"] != nil {
		c.ID = string(obj["id"])
	}
	c.Type, _ = asString(obj["type"])
	fn := obj["function"]
	c.Name, _ = asString(field(fn, "name"))
	if args := field(fn, "arguments"); args != nil {
		c.Arguments, c.ArgumentsIsString = asString(args)
		if !c.ArgumentsIsString {
			c.Arguments = string(args)
		}
	}
	return c, true
}

// contentText flattens a content value: a string, or an array of parts
// whose "text" fields are joined (the multimodal form).
func contentText(raw json.RawMessage) (string, bool) {
	if s, ok := asString(raw); ok {
		return s, true
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", false
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), true
}

func toolNames(raw json.RawMessage) []string {
	var tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &tools) != nil {
		return nil
	}
	var names []string
	for _, t := range tools {
		names = append(names, t.Function.Name)
	}
	return names
}

func asString(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func asBool(raw json.RawMessage) (bool, bool) {
	var b bool
	if json.Unmarshal(raw, &b) != nil {
		return false, false
	}
	return b, true
}

func isNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}
