package llmserver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"time"
)

// Event is one step of a streamed response: bytes to write (each write is
// flushed, so it leaves as its own TCP segment), a wait, or a connection
// reset. Events are values and may be reused across responses.
type Event interface {
	emit(s *sink) error
}

// errStop ends a stream without an error worth reporting: the connection
// was reset on purpose, or the client went away.
var errStop = errors.New("llmserver: stream stopped")

// sink is where events write. A stream writes to the response; Render and
// Truncate capture into a buffer, where waits are skipped and a reset
// cannot happen.
type sink struct {
	ctx      context.Context
	w        io.Writer
	flush    func() error
	hijack   func() (net.Conn, error) // nil when capturing
	bytewise bool
}

func (s *sink) write(b []byte) error {
	step := len(b)
	if s.bytewise {
		step = 1
	}
	for len(b) > 0 {
		n := min(step, len(b))
		if _, err := s.w.Write(b[:n]); err != nil {
			return err
		}
		if err := s.flush(); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

func (s *sink) capturing() bool { return s.hijack == nil }

// rawEvent is an event that writes fixed bytes.
type rawEvent string

func (r rawEvent) emit(s *sink) error { return s.write([]byte(r)) }

// Data is one SSE event "data: <json>\n\n". The json is written as given,
// so it may be invalid, cut, or hold bytes that are not UTF-8.
func Data(json string) Event { return rawEvent("data: " + json + "\n\n") }

// Done is the terminator "data: [DONE]\n\n".
func Done() Event { return rawEvent("data: [DONE]\n\n") }

// Comment is an SSE comment ": text\n\n", the keep-alive OpenRouter and
// DeepSeek send. go-openai counts it (and its blank line) towards
// EmptyMessagesLimit.
func Comment(text string) Event { return rawEvent(": " + text + "\n\n") }

// Line writes s exactly as given, with no newline added: for framing no
// other helper produces ("event: error\n", "error: {...}\n\n", a line cut
// mid-way, a last line with no trailing newline).
func Line(s string) Event { return rawEvent(s) }

// Unterminated writes e without the newlines that end it: a server that
// closes the stream right after the last event's JSON
// (`...,"finish_reason":"stop"}]}` then EOF). go-openai drops such a last
// line; its JSON is whole, unlike Truncate's.
func Unterminated(e Event) Event { return unterminated{e} }

type unterminated struct{ e Event }

func (u unterminated) emit(s *sink) error {
	b, err := capture(s.ctx, u.e)
	if err != nil {
		return err
	}
	return s.write(bytes.TrimRight(b, "\r\n"))
}

// KeepAlive is n comments in a row.
func KeepAlive(n int, text string) Event {
	return rawEvent(strings.Repeat(": "+text+"\n\n", n))
}

// Seq groups events into one, so a helper can return several.
func Seq(events ...Event) Event { return seq(events) }

type seq []Event

func (q seq) emit(s *sink) error {
	for _, e := range q {
		if err := e.emit(s); err != nil {
			return err
		}
	}
	return nil
}

// Bytewise writes e's bytes one at a time, flushing after each: the
// client's reader sees every TCP-level split, including inside a UTF-8
// character or a JSON escape.
func Bytewise(e Event) Event { return bytewise{e} }

type bytewise struct{ e Event }

func (b bytewise) emit(s *sink) error {
	prev := s.bytewise
	s.bytewise = true
	defer func() { s.bytewise = prev }()
	return b.e.emit(s)
}

// Truncate writes only the first n bytes of e, for a stream that dies in
// the middle of a line. Follow it with nothing (the stream then ends
// cleanly) or with ResetNow.
func Truncate(e Event, n int) Event { return truncate{e, n} }

type truncate struct {
	e Event
	n int
}

func (t truncate) emit(s *sink) error {
	b, err := capture(s.ctx, t.e)
	if err != nil {
		return err
	}
	return s.write(b[:min(t.n, len(b))])
}

// Pause waits d, or until the request's context ends (client cancel or
// server close), whichever is first. It slows a stream down without a
// sleep in the test itself.
func Pause(d time.Duration) Event { return pause(d) }

type pause time.Duration

func (p pause) emit(s *sink) error {
	if s.capturing() {
		return nil
	}
	t := time.NewTimer(time.Duration(p))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-s.ctx.Done():
		return errStop
	}
}

// Block waits until the request's context ends: the client cancelled, or
// the server is closing. A cancel test scripts the stream up to the point
// of interest and then Block.
func Block() Event { return block{} }

type block struct{}

func (block) emit(s *sink) error {
	if s.capturing() {
		return nil
	}
	<-s.ctx.Done()
	return errStop
}

// ResetNow aborts the connection with a TCP RST (SO_LINGER 0, then close)
// in the middle of the stream: go-openai's Recv then fails with a
// *net.OpError, not io.EOF.
func ResetNow() Event { return resetNow{} }

type resetNow struct{}

func (resetNow) emit(s *sink) error {
	if s.capturing() {
		return errors.New("llmserver: ResetNow cannot be captured (inside Truncate or Render)")
	}
	conn, err := s.hijack()
	if err != nil {
		return err
	}
	resetConn(conn)
	return errStop
}

// resetConn closes conn so that the peer gets RST instead of FIN.
func resetConn(conn net.Conn) {
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// Render returns the bytes the events write, skipping Pause and Block.
// Tests use it to assert the exact wire form of a chunk builder. It panics
// on ResetNow, which has no bytes to show.
func Render(events ...Event) string {
	b, err := capture(context.Background(), seq(events))
	if err != nil {
		panic(err)
	}
	return string(b)
}

func capture(ctx context.Context, e Event) ([]byte, error) {
	var buf bytes.Buffer
	err := e.emit(&sink{ctx: ctx, w: &buf, flush: func() error { return nil }})
	return buf.Bytes(), err
}
