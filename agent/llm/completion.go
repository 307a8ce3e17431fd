package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"retrace/state"
)

// completion is a whole chat.completion: the reply of a server that
// ignores "stream":true. It is decoded as leniently as a chunk.
type completion struct {
	Choices *[]struct {
		Index        int      `json:"index"`
		Message      *message `json:"message"`
		Delta        *message `json:"delta"` // a lone chunk sent as the body
		FinishReason *string  `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// message is a completion's message. Content is text, null, or a list of
// parts (Mistral's [{"type":"text","text":…}]).
type message struct {
	Content          json.RawMessage `json:"content"`
	ReasoningContent *string         `json:"reasoning_content"`
	Reasoning        *string         `json:"reasoning"`
	ToolCalls        []toolDelta     `json:"tool_calls"`
	FunctionCall     *functionDelta  `json:"function_call"`
}

// document turns a body that was one JSON document instead of an SSE
// stream into the Turn: a completion is the whole reply, shown as it
// arrived, in one piece; an error object is the server's error. Neither
// is retried, except a document cut short.
func (r *reader) document(doc []byte, cfg Config) (Turn, bool, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	var raw json.RawMessage
	err := dec.Decode(&raw)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return Turn{}, r.shown, &Error{Kind: KindIncomplete, retryable: true, err: err,
			Message: "the server's JSON reply ended before it was whole", Hint: "the connection may have dropped"}
	}
	if err == nil && dec.More() {
		err = errors.New("more than one JSON document")
	}
	if err == nil {
		if msg := errorMessage(raw); msg != "" {
			return Turn{}, r.shown, statusOKError(raw, msg)
		}
		err = r.completion(raw)
	}
	var e *Error
	if errors.As(err, &e) {
		return Turn{}, r.shown, e // past the bounds of a reply
	}
	if err != nil {
		return Turn{}, r.shown, &Error{Kind: KindEndpoint, Status: http.StatusOK, err: err,
			Message: "the server answered with JSON that is not a chat completion (" + err.Error() + "): " + clip(string(doc), 120),
			Hint:    fmt.Sprintf("check --base-url (now %s); OpenAI-compatible URLs usually end in /v1", cfg.BaseURL)}
	}
	return r.turn()
}

// completion folds a chat.completion into the reader, as if it had been
// streamed as one chunk.
func (r *reader) completion(raw json.RawMessage) error {
	var c completion
	if err := json.Unmarshal(raw, &c); err != nil {
		return err
	}
	if c.Choices == nil {
		return errors.New(`no "choices"`)
	}
	if c.Usage != nil {
		r.usage = state.Usage{PromptTokens: c.Usage.PromptTokens, CompletionTokens: c.Usage.CompletionTokens}
	}
	for _, choice := range *c.Choices {
		m := choice.Message
		if m == nil {
			m = choice.Delta
		}
		if choice.Index != 0 || m == nil {
			continue // we ask for one choice
		}
		d, err := m.delta()
		if err != nil {
			return err
		}
		if err := r.delta(d); err != nil {
			return err
		}
		if f := choice.FinishReason; f != nil && *f != "" {
			r.finish = *f
		}
	}
	return nil
}

func (m *message) delta() (*delta, error) {
	d := &delta{ReasoningContent: m.ReasoningContent, Reasoning: m.Reasoning, ToolCalls: m.ToolCalls, FunctionCall: m.FunctionCall}
	raw := bytes.TrimSpace(m.Content)
	if len(raw) == 0 || string(raw) == "null" {
		return d, nil
	}
	var text string
	if json.Unmarshal(raw, &text) != nil {
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(raw, &parts); err != nil {
			return nil, fmt.Errorf("message content is neither text nor a list of parts: %w", err)
		}
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" || p.Type == "" {
				b.WriteString(p.Text)
			}
		}
		text = b.String()
	}
	d.Content = &text
	return d, nil
}

// statusOKError is an error object a server sent with status 200 in place
// of a reply, as some proxies do. It is what the server said, not a reply
// cut off, and retrying a server that answers like this does not help; a
// context overflow is told apart so the caller can summarise.
func statusOKError(raw []byte, msg string) *Error {
	e := &Error{Kind: KindServer, Status: http.StatusOK, Message: msg,
		Hint: "the server sent this error in place of a reply; retrace does not retry it"}
	var doc struct {
		Error json.RawMessage `json:"error"`
		Code  any             `json:"code"`
		Type  any             `json:"type"`
	}
	_ = json.Unmarshal(raw, &doc)
	fields := struct {
		Code any `json:"code"`
		Type any `json:"type"`
	}{doc.Code, doc.Type}
	_ = json.Unmarshal(doc.Error, &fields) // a bare-string error leaves the top level's
	code, typ := "", ""
	if fields.Code != nil {
		code = fmt.Sprint(fields.Code)
	}
	if s, ok := fields.Type.(string); ok {
		typ = s
	}
	if isOverflow(code, typ, msg) {
		e.Kind, e.Hint = KindContextOverflow, ""
	}
	return e
}
