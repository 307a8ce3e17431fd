package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// capture is what the HTTP wrapper saw of one request's response: the
// status and headers go-openai does not pass on, error objects in the
// stream that it drops or garbles, and when bytes last arrived.
type capture struct {
	mu        sync.Mutex
	status    int
	header    http.Header
	streamErr string
	lastByte  atomic.Int64 // unix nanoseconds
	end       bodyEnd
	// maxLine bounds a line of the body (and a body that is one JSON
	// document), and the lines that carry no data together: reading past
	// it fails with a *bodyTooLarge. Set before the request, then only read.
	maxLine int
}

// bodyEnd is what go-openai's reader drops of a body that ended cleanly:
// the whole body when it was one JSON document rather than SSE (a server
// that ignored "stream":true, or an error object sent with status 200),
// and an SSE body's last line when no newline ended it.
type bodyEnd struct {
	ended bool
	doc   []byte
	tail  []byte
}

type captureKey struct{}

func withCapture(ctx context.Context, c *capture) context.Context {
	return context.WithValue(ctx, captureKey{}, c)
}

// retryAfter is the wait the server asked for: retry-after-ms, else
// Retry-After in seconds or as an HTTP date.
func (c *capture) retryAfter() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.header == nil {
		return 0
	}
	if v := c.header.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := c.header.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

func (c *capture) shouldRetry() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.header == nil {
		return ""
	}
	return strings.ToLower(c.header.Get("x-should-retry"))
}

func (c *capture) streamError() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.streamErr
}

// document returns the body if it was one JSON document and was read to
// its end.
func (c *capture) document() ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.end.doc, c.end.ended && c.end.doc != nil
}

// tail returns an SSE body's last line if no newline ended it.
func (c *capture) tail() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.end.tail
}

func (c *capture) touch() { c.lastByte.Store(time.Now().UnixNano()) }

func (c *capture) idleFor() time.Duration {
	return time.Since(time.Unix(0, c.lastByte.Load()))
}

// doer wraps the HTTP client go-openai uses, to watch each response.
type doer struct{ base openai.HTTPDoer }

func (d doer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.base.Do(req)
	c, _ := req.Context().Value(captureKey{}).(*capture)
	if err != nil || c == nil {
		return resp, err
	}
	c.mu.Lock()
	c.status, c.header = resp.StatusCode, resp.Header.Clone()
	c.mu.Unlock()
	c.touch()
	resp.Body = &watchedBody{rc: resp.Body, c: c}
	return resp, nil
}

// watchedBody passes the body through unchanged and reads its lines on the
// way: go-openai turns an error after a keep-alive comment, an `event:
// error` frame and llama.cpp's `error:` line into a meaningless error or
// none at all (openai-wire.md §3.3), so the message is kept here. It also
// keeps what go-openai drops at the end (bodyEnd).
type watchedBody struct {
	rc       io.ReadCloser
	c        *capture
	shape    shape
	doc      []byte // the body so far, when it is a JSON document
	line     []byte
	eventErr bool // the last `event:` line said error
	ended    bool
	noData   int   // bytes of the lines that carry no data, so far
	failed   error // a bound passed: every read fails with it
}

// shape is what a body is, told by its first byte that is not a space:
// '{' or '[' opens one JSON document; anything else is read as SSE (data
// lines, comments, or whatever a server got wrong).
type shape int

const (
	shapeUnknown shape = iota
	shapeSSE
	shapeJSON
)

// maxWatchedLine bounds the lines inspected for an error: error objects
// are short, and a long data line is just content.
const maxWatchedLine = 64 << 10

func (b *watchedBody) Read(p []byte) (int, error) {
	if b.failed != nil {
		return 0, b.failed
	}
	n, err := b.rc.Read(p)
	if n > 0 {
		b.c.touch()
		if b.failed = b.scan(p[:n]); b.failed != nil {
			return 0, b.failed // nothing more of this body is read or kept
		}
	}
	if errors.Is(err, io.EOF) && !b.ended {
		b.ended = true
		b.finish()
	}
	return n, err
}

func (b *watchedBody) Close() error { return b.rc.Close() }

// scan reads p on its way to go-openai, or fails when the body passes
// what a reply within its bounds needs: a line, or a JSON document, past
// maxLine, or as much in lines that carry no data. Whatever go-openai
// reads is buffered a line at a time (and its lines of no data all
// together), so these bound its memory as well as the watcher's.
func (b *watchedBody) scan(p []byte) error {
	if b.shape == shapeUnknown {
		if rest := bytes.TrimLeft(p, " \t\r\n"); len(rest) > 0 {
			b.shape = shapeSSE
			if rest[0] == '{' || rest[0] == '[' {
				b.shape = shapeJSON
			}
		}
	}
	if b.shape == shapeJSON {
		if b.past(len(b.doc) + len(p)) {
			return &bodyTooLarge{what: "a JSON reply", limit: b.c.maxLine}
		}
		b.doc = append(b.doc, p...)
		return nil
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			i = len(p)
		}
		if b.past(len(b.line) + i) {
			return &bodyTooLarge{what: "a line", limit: b.c.maxLine}
		}
		b.line = append(b.line, p[:i]...)
		if i == len(p) {
			return nil
		}
		if err := b.endLine(); err != nil {
			return err
		}
		b.line, p = b.line[:0], p[i+1:]
	}
	return nil
}

// past reports whether n bytes pass the bound.
func (b *watchedBody) past(n int) bool { return b.c.maxLine > 0 && n > b.c.maxLine }

func (b *watchedBody) endLine() error {
	line := bytes.TrimSpace(b.line)
	if len(line) > 0 && !bytes.HasPrefix(line, []byte("data:")) {
		if b.noData += len(line); b.past(b.noData) {
			return &bodyTooLarge{what: "lines that carry no data (comments, event names)", limit: b.c.maxLine}
		}
	}
	if len(line) <= maxWatchedLine {
		b.inspect(line)
	}
	return nil
}

// finish keeps what go-openai drops of a body that ended: a JSON document
// whole, and a last line no newline ended.
func (b *watchedBody) finish() {
	end := bodyEnd{ended: true}
	// Ifs, not a tagless switch, so that mutation testing runs their
	// conditions (go-gremlins/gremlins#298).
	if b.shape == shapeJSON {
		end.doc = b.doc
	} else if len(bytes.TrimSpace(b.line)) > 0 {
		_ = b.endLine() // the body has ended: nothing more is read
		end.tail = bytes.Clone(b.line)
	}
	b.c.mu.Lock()
	b.c.end = end
	b.c.mu.Unlock()
}

func (b *watchedBody) inspect(line []byte) {
	var msg string
	switch {
	case bytes.HasPrefix(line, []byte("data:")):
		payload := bytes.TrimSpace(line[len("data:"):])
		if string(payload) == "[DONE]" {
			return
		}
		if b.eventErr {
			b.eventErr = false
			if msg = errorMessage(payload); msg == "" {
				msg = messageField(payload)
			}
		} else if bytes.Contains(payload, []byte(`"error`)) {
			msg = errorMessage(payload)
		}
	case bytes.HasPrefix(line, []byte("error:")):
		// llama.cpp sends the error object itself, {"code":500,"message":...}.
		payload := bytes.TrimSpace(line[len("error:"):])
		if msg = errorMessage(payload); msg == "" {
			msg = messageField(payload)
		}
		if msg == "" {
			msg = string(payload)
		}
	case bytes.HasPrefix(line, []byte("event:")):
		b.eventErr = string(bytes.TrimSpace(line[len("event:"):])) == "error"
	case bytes.HasPrefix(line, []byte("{")):
		msg = errorMessage(line)
	}
	if msg != "" {
		b.c.mu.Lock()
		if b.c.streamErr == "" {
			b.c.streamErr = msg
		}
		b.c.mu.Unlock()
	}
}

// errorMessage returns the message of an error object in any of the shapes
// servers use, or "" if b holds none: {"error":{"message":...}},
// {"error":"text"}, vLLM's old {"object":"error","message":...}, and
// {"error_message":...}.
func errorMessage(b []byte) string {
	var doc struct {
		Error        json.RawMessage `json:"error"`
		Object       string          `json:"object"`
		Message      json.RawMessage `json:"message"`
		ErrorMessage string          `json:"error_message"`
	}
	if json.Unmarshal(b, &doc) != nil {
		return ""
	}
	switch {
	case len(doc.Error) > 0 && string(doc.Error) != "null":
		var s string
		if json.Unmarshal(doc.Error, &s) == nil {
			return s
		}
		if m := messageField(doc.Error); m != "" {
			return m
		}
		return "unspecified error"
	case doc.Object == "error":
		return textOf(doc.Message)
	case doc.ErrorMessage != "":
		return doc.ErrorMessage
	}
	return ""
}

// messageField reads "message" from an object; it may be a string or a
// list of strings.
func messageField(b []byte) string {
	var doc struct {
		Message json.RawMessage `json:"message"`
	}
	if json.Unmarshal(b, &doc) != nil {
		return ""
	}
	return textOf(doc.Message)
}

func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return strings.Join(list, "; ")
	}
	return ""
}
