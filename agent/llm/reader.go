package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"retrace/state"
)

// reader folds a stream's chunks into a Turn, within the bounds of one
// reply.
type reader struct {
	obs       Observer
	bound     bounds
	size      int // bytes of the reply taken so far (see take)
	content   strings.Builder
	reasoning strings.Builder
	calls     assembler
	finish    string
	usage     state.Usage
	shown     bool
	chunkErr  string // an error object carried inside a chunk (OpenRouter)
	notes     []string
	// idle counts the bytes of chunks that added nothing to the reply
	// (an empty delta, a role alone): a few are how servers open and
	// close a stream, and a stream of them would never end a reply.
	idle int
}

// consume decodes one raw chunk.
func (r *reader) consume(raw []byte) error {
	var ch chunk
	if err := json.Unmarshal(raw, &ch); err != nil {
		return &Error{Kind: KindStream, Message: "the server sent a chunk that is not JSON: " + clip(string(raw), 120), err: err}
	}
	if len(ch.Error) > 0 && string(ch.Error) != "null" {
		msg := errorMessage(raw)
		if msg == "" {
			msg = "unspecified error"
		}
		r.chunkErr = msg
		return r.streamError(msg)
	}
	if ch.Usage != nil {
		r.usage = state.Usage{PromptTokens: ch.Usage.PromptTokens, CompletionTokens: ch.Usage.CompletionTokens}
	}
	size, finish := r.size, r.finish
	defer func() {
		if r.size == size && r.finish == finish && ch.Usage == nil {
			r.idle += len(raw)
		}
	}()
	if r.idle > r.bound.maxLine() {
		return r.tooLarge(fmt.Sprintf("more than %s of chunks that add nothing to the reply", sizeOf(r.bound.maxLine())),
			"the server keeps the stream open without answering; try again, or another server")
	}
	for _, choice := range ch.Choices {
		if choice.Index != 0 {
			continue // we ask for one choice; a server sending more is ignored
		}
		if d := choice.Delta; d != nil {
			if err := r.delta(d); err != nil {
				return err
			}
		}
		if f := choice.FinishReason; f != nil && *f != "" {
			r.finish = *f
		}
	}
	return nil
}

// delta folds one delta into the reply, or fails when it would take the
// reply past its bounds: nothing of it is kept then.
func (r *reader) delta(d *delta) error {
	// Thinking first: a delta or a whole message that holds both thought
	// before it answered.
	for _, rs := range []*string{d.ReasoningContent, d.Reasoning} {
		if rs != nil && *rs != "" {
			if err := r.take(len(*rs), "its thinking"); err != nil {
				return err
			}
			r.reasoning.WriteString(*rs)
			r.emit(Reasoning, *rs)
		}
	}
	if d.Content != nil && *d.Content != "" {
		if err := r.take(len(*d.Content), "its text"); err != nil {
			return err
		}
		r.content.WriteString(*d.Content)
		r.emit(Content, *d.Content)
	}
	if len(d.ToolCalls) > 0 {
		if err := r.calls.add(d.ToolCalls, r); err != nil {
			return err
		}
	}
	if fc := d.FunctionCall; fc != nil {
		// The legacy function_call delta: one call, no index, no id.
		zero := 0
		return r.calls.add([]toolDelta{{Index: &zero, Function: *fc}}, r)
	}
	return nil
}

func (r *reader) emit(kind DeltaKind, text string) {
	r.shown = true
	if r.obs.Delta != nil {
		r.obs.Delta(kind, text)
	}
}

func (r *reader) partial() Turn {
	return Turn{Content: r.content.String(), Reasoning: r.reasoning.String(), Usage: r.usage}
}

func (r *reader) streamError(msg string) *Error {
	if msg == "" {
		msg = "an error the server sent could not be read"
	}
	return &Error{Kind: KindStream, Message: msg, Partial: r.partial(),
		Hint: "the reply so far is kept; try again"}
}

// end decides what a stream that stopped means.
func (r *reader) end(ctx context.Context, err error, cap *capture, c *Client) (Turn, bool, error) {
	var big *bodyTooLarge
	if errors.As(err, &big) {
		return Turn{}, r.shown, r.oversizedBody(big)
	}
	if doc, ok := cap.document(); ok {
		return r.document(doc, c.cfg)
	}
	var apiErr *openai.APIError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.Is(err, io.EOF):
		if err := r.lastLine(cap.tail()); err != nil {
			return Turn{}, r.shown, err
		}
		if r.finish == "" {
			if msg := cap.streamError(); msg != "" {
				return Turn{}, r.shown, r.streamError(msg) // llama.cpp's `error:` line, then [DONE]
			}
			return Turn{}, r.shown, &Error{Kind: KindIncomplete, retryable: true, Partial: r.partial(),
				Message: "the stream ended without a finish_reason", Hint: "the connection may have dropped"}
		}
		return r.turn()
	case errors.As(err, &apiErr) && apiErr.HTTPStatusCode == 0, errors.As(err, &syntaxErr):
		msg := cap.streamError()
		if msg == "" && apiErr != nil {
			msg = apiErr.Message
		}
		return Turn{}, r.shown, r.streamError(msg)
	}
	e := c.failure(ctx, err, cap)
	e.Partial = r.partial()
	if e.Kind == KindNetwork {
		e.Kind = KindIncomplete
		e.Message = "the connection broke mid-reply: " + err.Error()
		if !errors.Is(context.Cause(ctx), errIdle) {
			e.Hint = "the connection dropped; try again"
		}
	}
	return Turn{}, r.shown, e
}

// lastLine reads the last line of a stream that closed without a newline
// after it, which go-openai drops: a data line whose JSON is whole is a
// chunk like any other. A line cut short, [DONE] and anything else add
// nothing: whether the reply is whole is then up to the finish_reason
// that came before.
func (r *reader) lastLine(line []byte) error {
	payload, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:"))
	if !ok {
		return nil
	}
	payload = bytes.TrimSpace(payload)
	if string(payload) == "[DONE]" || !json.Valid(payload) {
		return nil
	}
	return r.consume(payload)
}

// turn checks a reply that ended as a reply should (a stream that reached
// a finish_reason, or a whole JSON completion) and returns its Turn.
func (r *reader) turn() (Turn, bool, error) {
	t := r.partial()
	t.Finish = r.finish
	t.Notes = append(r.notes, r.calls.notes...)
	switch r.finish {
	case "error":
		return Turn{}, r.shown, r.streamError(r.chunkErr)
	case "abort", "cancelled", "canceled":
		return Turn{}, r.shown, &Error{Kind: KindIncomplete, Partial: t, Message: "the server aborted the reply (finish_reason " + r.finish + ")"}
	case "length":
		if len(r.calls.calls) > 0 {
			return Turn{}, r.shown, &Error{Kind: KindIncomplete, Partial: t,
				Message: "the reply hit the token limit in the middle of a tool call; the call was not run",
				Hint:    "the model's output limit is too small for this call"}
		}
		t.Notes = append(t.Notes, "the reply was cut off at the token limit")
	case "content_filter":
		t.Notes = append(t.Notes, "the provider's content filter stopped the reply")
	}
	t.Calls = r.calls.finish()
	if r.finish == "tool_calls" && len(t.Calls) == 0 {
		t.Notes = append(t.Notes, "the server said tool_calls but sent none")
	}
	if t.Content == "" && len(t.Calls) == 0 {
		return Turn{}, r.shown, &Error{Kind: KindEmpty, Partial: t,
			Message: "no text and no tool call (finish_reason " + r.finish + ")", Hint: "try again, or another model"}
	}
	return t, r.shown, nil
}
