package transcript

import (
	"strings"
	"unicode/utf8"
)

// InertStyled is Inert for text a program has styled itself: its SGR
// sequences (ESC [ parameters m: colours and attributes, which change
// only how the characters after them look) are kept as they are, and
// everything else a terminal would act on is shown as Inert shows it.
// An interface paints its finished screen through it, so a pane that
// forgot to make outside text inert still cannot move the cursor, clear
// the screen, set the title or write the clipboard.
func InertStyled(s string) string {
	if isInertStyled(s) {
		return s
	}
	var b strings.Builder
	for {
		i, n := nextSGR(s)
		if i < 0 {
			if b.Len() == 0 {
				return Inert(s)
			}
			b.WriteString(Inert(s))
			return b.String()
		}
		if b.Len() == 0 {
			b.Grow(len(s) + 16)
		}
		b.WriteString(Inert(s[:i]))
		b.WriteString(s[i : i+n])
		s = s[i+n:]
	}
}

// nextSGR finds the first SGR sequence in s: where it starts and how
// long it is, or -1.
func nextSGR(s string) (int, int) {
	for off := 0; ; {
		i := strings.IndexByte(s[off:], 0x1b)
		if i < 0 {
			return -1, 0
		}
		if n := sgrLen(s[off+i:]); n > 0 {
			return off + i, n
		}
		off += i + 1
	}
}

// sgrLen is the length of the SGR sequence s starts with, or 0: ESC, [,
// parameters of digits, ; and :, then m.
func sgrLen(s string) int {
	if len(s) < 3 || s[0] != 0x1b || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s); i++ {
		c := s[i]
		if c == 'm' {
			return i + 1
		}
		if (c < '0' || c > '9') && c != ';' && c != ':' {
			return 0
		}
	}
	return 0
}

// isInertStyled is the fast path, taken by every frame with nothing to
// show: the text holds no control but SGR sequences, newlines and tabs.
func isInertStyled(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b:
			n := sgrLen(s[i:])
			if n == 0 {
				return false
			}
			i += n
		case c >= 0x20 && c < 0x7f || c == '\n' || c == '\t':
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r < 0x20 || r == 0x7f || r == utf8.RuneError || dangerous(r) {
				return false
			}
			i += size
		}
	}
	return true
}
