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
	b.Grow(len(s) + 16)
	plain := 0 // where the text not written yet starts
	// Each step moves on by at least a byte, whatever it finds: a loop
	// that could stand still would hang the interface.
	for i := 0; i < len(s); {
		n := sgrLen(s[i:]) // 0 unless an SGR sequence starts at i
		if n > 0 {
			b.WriteString(Inert(s[plain:i]))
			b.WriteString(s[i : i+n])
			plain = i + n
		}
		i += max(n, 1)
	}
	b.WriteString(Inert(s[plain:]))
	return b.String()
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
		step := 1
		switch c := s[i]; {
		case c == 0x1b:
			if step = sgrLen(s[i:]); step == 0 {
				return false
			}
		case c >= 0x20 && c < 0x7f || c == '\n' || c == '\t':
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r < 0x20 || r == 0x7f || r == utf8.RuneError || dangerous(r) {
				return false
			}
			step = size
		}
		i += max(step, 1) // on by a byte at least, as above
	}
	return true
}
