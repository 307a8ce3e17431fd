package llm

import "strings"

// keyMark stands for the API key wherever a server sent it back.
const keyMark = "[the API key]"

// minSecret is the shortest key worth scrubbing. Real providers' keys are
// 32 characters and more; the short ones local servers accept ("ollama",
// "none", "x", "EMPTY") are no secret, and scrubbing them would rewrite
// ordinary words in every reply.
const minSecret = 16

// scrub removes the API key from text a server sent: a server (or a
// proxy) may echo the Authorization header, in an error or in the reply
// itself, and that text is shown, stored and exported. The zero scrub
// changes nothing.
type scrub struct{ key string }

func newScrub(key string) scrub {
	if len(key) < minSecret {
		return scrub{}
	}
	return scrub{key: key}
}

func (s scrub) text(t string) string {
	if s.key == "" {
		return t
	}
	return strings.ReplaceAll(t, s.key, keyMark)
}

// turn scrubs everything a reply carries that came from the server. (Its
// notes are retrace's own words.)
func (s scrub) turn(t Turn) Turn {
	t.Content, t.Reasoning = s.text(t.Content), s.text(t.Reasoning)
	calls := make([]Call, len(t.Calls))
	for i, c := range t.Calls {
		c.ID, c.Name, c.Arguments = s.text(c.ID), s.text(c.Name), s.text(c.Arguments)
		calls[i] = c
	}
	t.Calls = calls
	return t
}

// error scrubs what an error quotes of the server.
func (s scrub) error(e *Error) {
	for _, p := range []*string{&e.Message, &e.Hint, &e.Partial.Content, &e.Partial.Reasoning} {
		*p = s.text(*p)
	}
}

// observer wraps obs so that streamed text reaches it scrubbed: the key
// may arrive split over several deltas, so whatever could be its start is
// held back until the next delta tells. flush hands over what is held
// back once the reply has ended.
func (s scrub) observer(obs Observer) (Observer, func()) {
	if s.key == "" || obs.Delta == nil {
		return obs, func() {}
	}
	held := map[DeltaKind]string{}
	out := obs
	out.Delta = func(kind DeltaKind, text string) {
		buf := s.text(held[kind] + text)
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
