package tools

import (
	"fmt"
	"unicode/utf8"

	"retrace/state/transcript"
)

// headTail keeps the first and the last bytes of a stream and counts the
// ones between. The start of a command's output says what it did and the
// end how it finished (the failing test, the exit summary); the middle is
// what a cap can drop.
type headTail struct {
	head, tail       []byte
	headMax, tailMax int
	total            int
}

// newHeadTail keeps at most max bytes in all.
func newHeadTail(max int) *headTail {
	return &headTail{headMax: max / 2, tailMax: max - max/2}
}

// Write never fails, so the command never sees a broken pipe.
func (h *headTail) Write(p []byte) (int, error) {
	n := len(p)
	h.total += n
	if room := h.headMax - len(h.head); room > 0 {
		take := min(room, len(p))
		h.head = append(h.head, p[:take]...)
		p = p[take:]
	}
	if len(p) > 0 {
		h.tail = append(h.tail, p...)
		// Trim only once the tail is twice its size, so the copy is
		// amortised over many writes.
		if len(h.tail) > 2*h.tailMax {
			h.tail = append(h.tail[:0], h.tail[len(h.tail)-h.tailMax:]...)
		}
	}
	return n, nil
}

// String is the kept output, valid UTF-8, with a line saying how much was
// cut from the middle if anything was.
func (h *headTail) String() string {
	tail := h.tail
	if len(tail) > h.tailMax {
		tail = tail[len(tail)-h.tailMax:]
	}
	cut := h.total - len(h.head) - len(tail)
	if cut == 0 {
		return validUTF8(append(h.head[:len(h.head):len(h.head)], tail...))
	}
	// The cut may have split runes at both ends; drop the pieces rather
	// than show replacement characters the program never wrote.
	head := dropPartialRune(h.head)
	cut += len(h.head) - len(head)
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
		cut++
	}
	note := fmt.Sprintf("\n[… %s of output cut …]\n", transcript.Count(cut, "byte"))
	return validUTF8(head) + note + validUTF8(tail)
}

// dropPartialRune removes an incomplete rune from the end of b.
func dropPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}
