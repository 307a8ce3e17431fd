// Package transcript turns session state into text people read: markdown
// for export, and plain text made inert for a terminal.
//
// Text from a model or a tool goes to a terminal only through Inert. A
// model can be talked into printing anything, and a terminal obeys escape
// sequences: clearing the screen, setting the window title, writing the
// clipboard (OSC 52), hiding text behind a hyperlink. Inert shows every
// such byte as visible characters instead.
package transcript

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Inert returns s with every character a terminal would act on replaced by
// a visible stand-in: C0 controls but newline and tab in caret notation
// (ESC becomes ^[, CR ^M), DEL as ^?, C1 controls and the bidirectional
// overrides that reorder what is shown as <U+XXXX>, and bytes that are not
// UTF-8 as U+FFFD.
func Inert(s string) string {
	if isInert(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20:
			b.WriteByte('^')
			b.WriteByte(byte(r) + '@')
		case r == 0x7f:
			b.WriteString("^?")
		case dangerous(r):
			fmt.Fprintf(&b, "<U+%04X>", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isInert is the fast path: most text has nothing to replace.
func isInert(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return isInertSlow(s[i:])
		}
		if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

func isInertSlow(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || r == 0x7f || (r < 0x20 && r != '\n' && r != '\t') || dangerous(r) {
			return false
		}
	}
	return utf8.ValidString(s)
}

// dangerous reports C1 controls (which some terminals take as escapes) and
// the Unicode controls that reorder or hide text.
func dangerous(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}
