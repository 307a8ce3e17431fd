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
	// A byte that is not UTF-8 ranges as U+FFFD, and is written so. (A
	// range, not an index to len(s): a boundary mutant of that bound spins
	// for ever, and costs CI a timeout.)
	for _, r := range s {
		if r == '\n' || r == '\t' {
			b.WriteRune(r)
		} else if r <= 0x1f {
			b.WriteByte('^')
			b.WriteByte(byte(r) + '@')
		} else if r == 0x7f {
			b.WriteString("^?")
		} else if dangerous(r) {
			fmt.Fprintf(&b, "<U+%04X>", r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isInert is the fast path: most text has nothing to replace. (The checks
// are ifs, not a switch, here and above: mutation testing counts a case's
// condition as code no test runs.)
func isInert(s string) bool {
	for _, r := range s {
		if r <= 0x1f && r != '\n' && r != '\t' || r == 0x7f || r == utf8.RuneError || dangerous(r) {
			return false
		}
	}
	return true
}

// dangerous reports C1 controls (which some terminals take as escapes) and
// the Unicode controls that reorder or hide text: the bidi embeddings,
// overrides and isolates, and the left-to-right, right-to-left and Arabic
// letter marks.
func dangerous(r rune) bool {
	c1 := r >= 0x80 && r <= 0x9f
	bidi := r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f || r == 0x061c
	return c1 || bidi
}

// InertJSON escapes, in JSON text, what a terminal would act on and a JSON
// encoder leaves raw: DEL, C1 controls and the bidirectional controls
// become \uXXXX escapes, and bytes that are not UTF-8 \ufffd. Outside
// strings JSON text is ASCII, so only strings change, and they decode to
// what they held before: the data stays exact, the terminal sees none of
// it. (Encoders escape C0 controls in strings themselves.)
func InertJSON(b []byte) []byte {
	if isInertJSON(b) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	// Ranging over the text, not counting through it: a loop bound a
	// mutation test turns into <= would spin for ever (a mutant that only
	// a timeout ends costs CI minutes).
	s := string(b)
	for i, r := range s {
		if r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD") {
			out = append(out, `\ufffd`...) // a byte that is not UTF-8
		} else if r == 0x7f || dangerous(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = utf8.AppendRune(out, r)
		}
	}
	return out
}

// isInertJSON is the fast path: most JSON has nothing to escape.
func isInertJSON(b []byte) bool {
	for i := 0; i < len(b); {
		if b[i] < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if (r == utf8.RuneError && size == 1) || r == 0x7f || dangerous(r) {
			return false
		}
		i += size
	}
	return true
}
