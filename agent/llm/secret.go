package llm

import (
	"bytes"
	"strings"
)

// keyMark stands for the API key wherever a server sent it back.
const keyMark = "[the API key]"

// minSecret is the shortest key worth scrubbing. Real providers' keys are
// 32 characters and more; the short ones local servers accept ("ollama",
// "none", "x", "EMPTY") are no secret, and scrubbing them would rewrite
// ordinary words in every reply.
const minSecret = 16

// Scrub removes the API key from text that is shown, stored and
// exported: a server (or a proxy) may echo the Authorization header, in an
// error or in the reply itself, and a tool may read a file that holds the
// key. It is the one place that decides what counts as a secret. The zero
// Scrub changes nothing.
type Scrub struct{ key string }

// NewScrub scrubs key, unless it is too short to be a secret.
func NewScrub(key string) Scrub {
	if len(key) < minSecret {
		return Scrub{}
	}
	return Scrub{key: key}
}

// Text is t with the key replaced by a mark that says what stood there.
func (s Scrub) Text(t string) string {
	if s.key == "" {
		return t
	}
	return strings.ReplaceAll(t, s.key, keyMark)
}

// In reports whether b holds the key.
func (s Scrub) In(b []byte) bool {
	return s.key != "" && bytes.Contains(b, []byte(s.key))
}

// turn scrubs everything a reply carries that came from the server. (Its
// notes are retrace's own words.)
func (s Scrub) turn(t Turn) Turn {
	t.Content, t.Reasoning = s.Text(t.Content), s.Text(t.Reasoning)
	calls := make([]Call, len(t.Calls))
	for i, c := range t.Calls {
		c.ID, c.Name, c.Arguments = s.Text(c.ID), s.Text(c.Name), s.Text(c.Arguments)
		calls[i] = c
	}
	t.Calls = calls
	return t
}

// error scrubs what an error quotes of the server.
func (s Scrub) error(e *Error) {
	for _, p := range []*string{&e.Message, &e.Hint, &e.Partial.Content, &e.Partial.Reasoning} {
		*p = s.Text(*p)
	}
}

// observer wraps obs so that streamed text reaches it scrubbed: the key
// may arrive split over several deltas, so whatever could be its start is
// held back until the next delta tells. flush hands over what is held
// back once the reply has ended.
func (s Scrub) observer(obs Observer) (Observer, func()) {
	if s.key == "" || obs.Delta == nil {
		return obs, func() {}
	}
	held := map[DeltaKind]string{}
	out := obs
	out.Delta = func(kind DeltaKind, text string) {
		buf := s.Text(held[kind] + text)
		n := heldBack(buf, s.key)
		held[kind] = buf[len(buf)-n:]
		if head := buf[:len(buf)-n]; head != "" {
			obs.Delta(kind, head)
		}
	}
	flush := func() {
		for _, kind := range []DeltaKind{Reasoning, Content} {
			if t := held[kind]; t != "" {
				obs.Delta(kind, t)
				held[kind] = ""
			}
		}
	}
	return out, flush
}

// heldBack is the length of the longest end of buf that is the start of
// key, short of the whole key.
func heldBack(buf, key string) int {
	for n := min(len(buf), len(key)-1); n > 0; n-- {
		if strings.HasPrefix(key, buf[len(buf)-n:]) {
			return n
		}
	}
	return 0
}
