package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"
	"syscall"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Kind sorts failures by what the caller should do about them.
type Kind int

// The kinds of failure.
const (
	KindUnknown         Kind = iota
	KindAuth                 // the key was rejected: fix the key
	KindModel                // the model does not exist there: fix --model
	KindEndpoint             // not an OpenAI-compatible API at that URL: fix --base-url
	KindQuota                // out of quota or credits: nothing a retry fixes
	KindRateLimit            // still rate limited after retrying, or asked to wait too long
	KindServer               // the server kept failing
	KindNetwork              // the server could not be reached
	KindBadRequest           // the server refused the request
	KindContextOverflow      // the conversation does not fit the model's window
	KindStream               // the server reported an error in the middle of its reply
	KindIncomplete           // the reply ended without saying it was finished
	KindEmpty                // the model finished without an answer or a tool call
	KindCanceled             // the caller cancelled
	KindTooLarge             // the reply passed what one reply may carry: raise the bound, or fix the model
)

// Error is a failed model call, with a message a person can act on.
type Error struct {
	Kind    Kind
	Status  int    // HTTP status, 0 when there was none
	Message string // what the server said, if anything
	Hint    string // what to do about it
	// Partial is what streamed before the failure: text and reasoning are
	// kept; tool calls never are. Of a reply past the bound (KindTooLarge),
	// only the text's first 64 KiB.
	Partial Turn
	// RetryAfter is how long the server asked to wait, if it did.
	RetryAfter time.Duration
	retryable  bool
	err        error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.summary())
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Hint != "" {
		b.WriteString(" (")
		b.WriteString(e.Hint)
		b.WriteString(")")
	}
	return b.String()
}

func (e *Error) summary() string {
	status := ""
	if e.Status > 0 {
		status = fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	switch e.Kind {
	case KindAuth:
		return "the endpoint rejected the API key" + status
	case KindModel:
		return "the model is not available" + status
	case KindEndpoint:
		return "this does not look like an OpenAI-compatible API" + status
	case KindQuota:
		return "out of quota" + status
	case KindRateLimit:
		return "rate limited" + status
	case KindServer:
		return "the model server failed" + status
	case KindNetwork:
		return "cannot reach the model server"
	case KindBadRequest:
		return "the endpoint refused the request" + status
	case KindContextOverflow:
		return "the conversation is longer than the model's context window" + status
	case KindStream:
		return "the model server reported an error mid-reply"
	case KindIncomplete:
		return "the reply was cut off"
	case KindEmpty:
		return "the model finished without an answer"
	case KindCanceled:
		return "cancelled"
	case KindTooLarge:
		return "the reply is too large"
	}
	return "the model call failed" + status
}

// Unwrap gives the underlying error, if any.
func (e *Error) Unwrap() error { return e.err }

// classify turns what go-openai returned for a request into an *Error.
// The captured response (headers and status) fills what go-openai drops.
func classify(err error, cap *capture, cfg Config) *Error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &Error{Kind: KindCanceled, err: err}
	}
	e := &Error{err: err}
	if cap != nil {
		e.Status = cap.status
		e.RetryAfter = cap.retryAfter()
	}
	var reqErr *openai.RequestError
	var apiErr *openai.APIError
	code, typ := "", ""
	switch {
	// RequestError first: for a body like {"error":"text"} go-openai also
	// wraps an empty APIError with status 0 (openai-wire.md §4.3).
	case errors.As(err, &reqErr):
		e.Status = max(e.Status, reqErr.HTTPStatusCode)
		e.Message = bodyMessage(reqErr.Body)
	case errors.As(err, &apiErr):
		e.Status = max(e.Status, apiErr.HTTPStatusCode)
		e.Message = apiErr.Message
		code, typ = fmt.Sprint(apiErr.Code), apiErr.Type
	default:
		return networkError(err, cfg)
	}
	kindByStatus(e, code, typ, cfg)
	if cap != nil && cap.shouldRetry() == "false" {
		e.retryable = false
	} else if cap != nil && cap.shouldRetry() == "true" {
		e.retryable = true
	}
	return e
}

var overflowText = regexp.MustCompile(`(?i)maximum context length|context length exceeded|context_length_exceeded|exceeds? the available context|exceed_context_size|context window|too many tokens|prompt is too long`)

// isOverflow tells a context overflow by its code, its type (llama.cpp)
// or its text.
func isOverflow(code, typ, msg string) bool {
	return code == "context_length_exceeded" || typ == "exceed_context_size_error" || overflowText.MatchString(msg)
}

// kindByStatus sets the kind, hint and retryability from the status and
// what the body said.
func kindByStatus(e *Error, code, typ string, cfg Config) {
	msg := e.Message
	// A chain of ifs, not a tagless switch: gremlins v0.6.0 never runs
	// the mutants of a switch's case conditions (go-gremlins/gremlins#298),
	// and these decide which failures are retried.
	if isOverflow(code, typ, msg) {
		e.Kind = KindContextOverflow
	} else if e.Status == 401 || e.Status == 403 {
		e.Kind, e.Hint = KindAuth, "check the API key: OPENAI_API_KEY, --api-key, or api_key_env in the config file"
	} else if e.Status == 402 || code == "insufficient_quota" {
		e.Kind, e.Hint = KindQuota, "add credits or raise the quota with your provider; retrying will not help"
	} else if e.Status == 404 && (code == "model_not_found" || strings.Contains(strings.ToLower(msg), "model")) {
		e.Kind, e.Hint = KindModel, fmt.Sprintf("model %q is not served at %s; check --model or RETRACE_MODEL", cfg.Model, cfg.BaseURL)
	} else if e.Status == 404 || e.Status == 405 {
		e.Kind, e.Hint = KindEndpoint, fmt.Sprintf("check --base-url (now %s); OpenAI-compatible URLs usually end in /v1", cfg.BaseURL)
	} else if e.Status == 429 {
		e.Kind, e.retryable = KindRateLimit, true
		e.Hint = "the server asked to slow down; retry later"
	} else if e.Status == 408 || e.Status == 409 || e.Status >= 500 {
		e.Kind, e.retryable = KindServer, true
		e.Hint = "the server had a problem; try again, or check its logs"
	} else if e.Status == 200 {
		// A 200 whose body was an error object (go-openai decodes it as an
		// error when it ends in a newline).
		e.Kind = KindStream
	} else {
		e.Kind, e.Hint = KindBadRequest, "the server explained why above"
	}
	if msg == "" && e.Kind == KindEndpoint {
		e.Message = "no OpenAI-style error in the response"
	}
}

func networkError(err error, cfg Config) *Error {
	e := &Error{Kind: KindNetwork, err: err, Message: err.Error(),
		Hint: fmt.Sprintf("is the server at %s running, and is --base-url right?", cfg.BaseURL)}
	var netErr net.Error
	var opErr *net.OpError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		e.retryable = true
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		e.retryable = true
	case errors.As(err, &opErr), errors.As(err, &netErr):
		e.retryable = true
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		e.retryable = false
		e.Hint = fmt.Sprintf("the host in --base-url (%s) does not resolve", cfg.BaseURL)
	}
	return e
}

// bodyMessage digs a message out of a body that is not the standard error
// envelope: vLLM's old top-level {"object":"error","message":...}, a bare
// {"error":"text"}, HTML from a proxy, or plain text.
func bodyMessage(body []byte) string {
	if m := errorMessage(body); m != "" {
		return m
	}
	s := strings.TrimSpace(string(body))
	if strings.HasPrefix(s, "<") {
		return "an HTML page (" + clip(stripTags(s), 120) + ")"
	}
	return clip(s, 200)
}

var tags = regexp.MustCompile(`<[^>]*>`)

func stripTags(s string) string {
	return strings.Join(strings.Fields(tags.ReplaceAllString(s, " ")), " ")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
