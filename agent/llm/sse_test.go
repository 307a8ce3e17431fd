package llm_test

import (
	"bytes"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"retrace/agent/llm"
	"retrace/agent/llmserver"
)

// splitReads is an HTTP client that hands response bodies over in reads
// of its choosing: split(body) gives them in order.
type splitReads func(body []byte) [][]byte

func (split splitReads) Do(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = &reads{parts: split(body)}
	return resp, nil
}

// reads gives one part per Read.
type reads struct{ parts [][]byte }

func (r *reads) Read(p []byte) (int, error) {
	if len(r.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.parts[0])
	if r.parts[0] = r.parts[0][n:]; len(r.parts[0]) == 0 {
		r.parts = r.parts[1:]
	}
	return n, nil
}

func (r *reads) Close() error { return nil }

// oneByte splits a body into single bytes.
func oneByte(body []byte) [][]byte {
	var parts [][]byte
	for i := range body {
		parts = append(parts, body[i:i+1])
	}
	return parts
}

// halfLines splits a body so that each line comes in two reads, and the
// newlines ending it start the read after: "\n\nerror: {\"me", "ssage\"…}".
func halfLines(body []byte) [][]byte {
	var parts [][]byte
	for start := 0; start < len(body); {
		i := start
		for i < len(body) && body[i] == '\n' {
			i++
		}
		end := len(body)
		if j := bytes.IndexByte(body[i:], '\n'); j >= 0 {
			end = i + j
		}
		mid := i + (end-i)/2
		if mid > start {
			parts = append(parts, body[start:mid])
		}
		if end > mid {
			parts = append(parts, body[mid:end])
		}
		start = end
	}
	return parts
}

func TestSplitters(t *testing.T) {
	body := []byte("data: ab\n\nerror: {x}\n\n")
	want := [][]byte{[]byte("data"), []byte(": ab"), []byte("\n\nerror"), []byte(": {x}"), []byte("\n\n")}
	if got := halfLines(body); !reflect.DeepEqual(got, want) {
		t.Fatalf("halfLines = %q", got)
	}
	if got := oneByte([]byte("ab\n")); !reflect.DeepEqual(got, [][]byte{[]byte("a"), []byte("b"), []byte("\n")}) {
		t.Fatalf("oneByte = %q", got)
	}
}

// Errors go-openai loses are still read, however the bytes are split
// into reads.
func TestStreamErrorsWhateverTheReads(t *testing.T) {
	for name, tail := range map[string][]llmserver.Event{
		"llama.cpp error:": {llmserver.ErrorField("overloaded"), llmserver.Done()},
		"event: error":     {llmserver.ErrorEvent("overloaded", "server_error")},
		"error: as text":   {llmserver.Line("error: overloaded\n\n"), llmserver.Done()},
	} {
		for how, split := range map[string]splitReads{"one byte": oneByte, "half lines": halfLines} {
			t.Run(name+" "+how, func(t *testing.T) {
				h := newHarness(t, func(c *llm.Config) { c.HTTPClient = split })
				h.srv.Enqueue(llmserver.Stream(append([]llmserver.Event{c.Role(), c.Text("so far")}, tail...)...))
				_, err := h.stream(t, false)
				if e := wantKind(t, err, llm.KindStream); e.Message != "overloaded" || e.Partial.Content != "so far" {
					t.Fatalf("message %q partial %q", e.Message, e.Partial.Content)
				}
			})
		}
	}
}

// An `event: error` whose data is {"message":...} with no "error" key
// (no shape go-openai knows) still ends the turn with that message.
func TestEventErrorWithBareMessage(t *testing.T) {
	h := newHarness(t)
	h.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("so far"),
		llmserver.Line("event: error\n"), llmserver.Data(`{"message":"overloaded"}`)))
	_, err := h.stream(t, false)
	if e := wantKind(t, err, llm.KindStream); e.Message != "overloaded" {
		t.Fatalf("message %q", e.Message)
	}
	// Another event name is not an error.
	h.srv.Enqueue(llmserver.Stream(c.Role(), llmserver.Line("event: message\n"), llmserver.Data(`{"message":"hello"}`),
		c.Text("answer"), c.Finish("stop"), llmserver.Done()))
	if turn := h.ok(t, false); turn.Content != "answer" {
		t.Fatalf("content %q", turn.Content)
	}
}

// errorLine is llama.cpp's `error:` line padded to n bytes, newline not
// counted.
func errorLine(t *testing.T, n int) string {
	t.Helper()
	head, tail := `error: {"message":"overloaded","pad":"`, `"}`
	line := head + strings.Repeat("x", n-len(head)-len(tail)) + tail
	if len(line) != n {
		t.Fatalf("built %d bytes, want %d", len(line), n)
	}
	return line
}

// An error line is read up to 64 KiB (65,536 bytes); a longer line is
// content, not an error object, and is not kept.
func TestErrorLineBound(t *testing.T) {
	h := newHarness(t, func(c *llm.Config) { c.MaxTries = 1 })
	h.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("so far"), llmserver.Line(errorLine(t, 65536)+"\n\n"), llmserver.Done()))
	_, err := h.stream(t, false)
	if e := wantKind(t, err, llm.KindStream); e.Message != "overloaded" {
		t.Fatalf("message %.80q", e.Message)
	}
	h.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("so far"), llmserver.Line(errorLine(t, 65537)+"\n\n"), llmserver.Done()))
	_, err = h.stream(t, false)
	wantKind(t, err, llm.KindIncomplete)

	// An error go-openai decodes itself is reported whatever its size.
	pad := strings.Repeat("x", 70000)
	h.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("so far"),
		llmserver.Data(`{"error":{"message":"overloaded","type":"server_error"},"pad":"`+pad+`"}`)))
	_, err = h.stream(t, false)
	if e := wantKind(t, err, llm.KindStream); e.Message != "overloaded" || e.Partial.Content != "so far" {
		t.Fatalf("message %.80q partial %q", e.Message, e.Partial.Content)
	}
}

// How a stream ends decides what the caller gets.
func TestStreamEnds(t *testing.T) {
	h := newHarness(t, func(c *llm.Config) { c.MaxTries = 1 })

	// [DONE] without its newline, after a finished reply, is a clean end.
	h.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("hello"), c.Finish("stop"), llmserver.Line("data: [DONE]")))
	if turn := h.ok(t, false); turn.Content != "hello" || turn.Finish != "stop" {
		t.Fatalf("turn %+v", turn)
	}

	// A last event whose JSON is whole, with no newline after it, is read
	// (go-openai drops it): the finish in it arrived. TestLastEventWithoutNewline
	// has the variations.
	finish := strings.TrimSuffix(llmserver.Render(c.Finish("stop")), "\n\n")
	h.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("hello"), llmserver.Line(finish)))
	if turn := h.ok(t, false); turn.Content != "hello" || turn.Finish != "stop" {
		t.Fatalf("turn %+v", turn)
	}

	// The same event cut inside its JSON never said it was finished.
	h.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("hello"), llmserver.Line(finish[:len(finish)-3])))
	_, err := h.stream(t, false)
	if e := wantKind(t, err, llm.KindIncomplete); e.Partial.Content != "hello" {
		t.Fatalf("partial %q", e.Partial.Content)
	}

	// A chunk that is not JSON.
	h.srv.Enqueue(llmserver.Stream(c.Role(), llmserver.Data("not json"), c.Finish("stop"), llmserver.Done()))
	_, err = h.stream(t, false)
	if e := wantKind(t, err, llm.KindStream); e.Message != "the server sent a chunk that is not JSON: not json" {
		t.Fatalf("message %q", e.Message)
	}

	// The server aborting the reply.
	for _, reason := range []string{"abort", "cancelled", "canceled"} {
		h.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("so far"), c.Finish(reason), llmserver.Done()))
		_, err = h.stream(t, false)
		e := wantKind(t, err, llm.KindIncomplete)
		if e.Message != "the server aborted the reply (finish_reason "+reason+")" || e.Partial.Content != "so far" {
			t.Fatalf("%s: message %q partial %q", reason, e.Message, e.Partial.Content)
		}
	}

	// The token limit hit in text: the text is the answer, with a note.
	h.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("a long ans"), c.Finish("length"), llmserver.Done()))
	turn := h.ok(t, false)
	if turn.Content != "a long ans" || len(turn.Notes) != 1 || turn.Notes[0] != "the reply was cut off at the token limit" {
		t.Fatalf("turn %+v", turn)
	}

	// Chunks with no choices (usage, Azure's filter results) and choices
	// other than the first are not content.
	h.srv.Enqueue(llmserver.Stream(c.Role(), c.Chunk(`"choices":[]`), c.Text("one"),
		c.Chunk(`"choices":[{"index":1,"delta":{"content":"two"},"finish_reason":null}]`),
		c.Finish("stop"), c.Chunk(`"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}`), llmserver.Done()))
	turn = h.ok(t, false)
	if turn.Content != "one" || turn.Usage.PromptTokens != 5 || turn.Usage.CompletionTokens != 1 {
		t.Fatalf("turn %+v", turn)
	}
}

// A server that goes silent for longer than IdleTimeout loses the reply
// even if it would have gone on later; comments sent while it thinks keep
// the reply alive however long it takes.
func TestIdleTimeoutBounds(t *testing.T) {
	h := newHarness(t, func(c *llm.Config) { c.IdleTimeout = 100 * time.Millisecond; c.MaxTries = 1 })
	h.srv.Enqueue(llmserver.Stream(c.Role(), llmserver.Pause(700*time.Millisecond), c.Text("late"), c.Finish("stop"), llmserver.Done()))
	_, err := h.stream(t, false)
	if e := wantKind(t, err, llm.KindIncomplete); e.Message != "the connection broke mid-reply: no data from the server" ||
		e.Hint != "the server went silent; it may be overloaded" {
		t.Fatalf("%v", e)
	}

	// 1.5 s of thinking, with a comment every 250 ms, against a 1 s limit.
	h = newHarness(t, func(c *llm.Config) { c.IdleTimeout = time.Second; c.MaxTries = 1 })
	var events []llmserver.Event
	for range 6 {
		events = append(events, llmserver.Comment("keep-alive"), llmserver.Pause(250*time.Millisecond))
	}
	h.srv.Enqueue(llmserver.Stream(append(append([]llmserver.Event{c.Role()}, events...), c.Text("slow"), c.Finish("stop"), llmserver.Done())...))
	if turn := h.ok(t, false); turn.Content != "slow" {
		t.Fatalf("content %q", turn.Content)
	}
}
