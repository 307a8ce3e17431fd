package llm

import (
	"fmt"
	"unicode/utf8"
)

// What one reply may carry. A model's reply is bounded by its output
// tokens: the largest today's models write in one reply is about 128,000
// tokens, some 500 KiB of code or prose (a write_file of a big source
// file, or a long answer, is a few hundred KiB). A server that sends far
// more is looping or hostile, and everything a reply carries is held in
// memory, stored in the session and sent back with every later request:
// 200 MiB of it took 2.2 GB to read and a 209 MB request to go on. So the
// client stops reading where a reply passes the bound, and the request
// fails with an error that says so.
const (
	// DefaultMaxReply is the most one reply may carry when
	// Config.MaxReply is zero: its text, its thinking and its tool calls'
	// names and arguments together, in bytes. One bound for all of them,
	// not one for each: what costs is their sum, and a bound per call
	// would let a reply of many calls carry that many times as much.
	DefaultMaxReply = 2 << 20
	// DefaultMaxCalls is the most tool calls one reply may make when
	// Config.MaxCalls is zero. Models call a handful of tools at once,
	// rarely a few dozen; each call is run, checkpointed and answered,
	// so thousands of them are a loop, not a plan.
	DefaultMaxCalls = 128
	// keptOfOversized is how much of a reply past the bound is kept as
	// its partial text, for the user to see what the model was doing.
	keptOfOversized = 64 << 10
)

// bounds are the limits of one reply, and the server they are told about.
type bounds struct {
	reply  int // bytes of text, thinking and calls together
	calls  int
	server string
}

// maxLine is the longest line a reply within the bound may need: one
// event of a stream, or a whole reply sent as one JSON document, whose
// text JSON escapes, once or twice for arguments. The lines that carry
// no data (comments, event names) may take as much together.
func (b bounds) maxLine() int { return max(4*b.reply, 1<<20) }

// take makes room for n more bytes of the reply, or fails with the error
// of a reply past the bound; where names the part of the reply that
// passed it.
func (r *reader) take(n int, where string) error {
	if n > r.bound.reply-r.size {
		return r.tooLarge(fmt.Sprintf("a reply past %s, the most one reply may carry (its text, thinking and tool calls together), in %s",
			sizeOf(r.bound.reply), where), raiseBound)
	}
	r.size += n
	return nil
}

const raiseBound = "if the model is meant to send this much, raise max_reply_mib in the config file; more often a reply this long is a model repeating itself"

// tooLarge is the error of a reply that passed a bound: not retried, with
// no call to run, and no more of the reply than its beginning; what says
// what the server sent.
func (r *reader) tooLarge(what, hint string) *Error {
	p := r.partial()
	p.Content = clipUTF8(p.Content, keptOfOversized)
	p.Reasoning = ""
	return &Error{Kind: KindTooLarge, Partial: p, Hint: hint,
		Message: fmt.Sprintf("%s sent %s; retrace stopped reading it", r.bound.server, what)}
}

// tooManyCalls is the error of a reply past the cap on calls.
func (r *reader) tooManyCalls() *Error {
	e := r.tooLarge(fmt.Sprintf("a reply of more than %d tool calls, the most retrace runs from one reply", r.bound.calls),
		"the model may be stuck in a loop; ask for fewer steps at a time, or try another model")
	e.Message += ", and ran none of them"
	return e
}

// bodyTooLarge is what reading a response body fails with when it passes
// what a reply within the bound needs: a line too long, or too much that
// carries no data.
type bodyTooLarge struct {
	what  string
	limit int
}

func (e *bodyTooLarge) Error() string {
	return fmt.Sprintf("%s of more than %s", e.what, sizeOf(e.limit))
}

// oversizedBody is the error of a response whose body passed what a
// reply within the bound needs.
func (r *reader) oversizedBody(big *bodyTooLarge) *Error {
	return r.tooLarge(fmt.Sprintf("%s, more than a reply within %s (the most one reply may carry) needs", big, sizeOf(r.bound.reply)), raiseBound)
}

// sizeOf says a size in MiB or KiB.
func sizeOf(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	if n >= 1<<10 && n%(1<<10) == 0 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// clipUTF8 cuts s to at most n bytes, at the start of a character.
func clipUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
