package markdown

import (
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// decorations are the characters Render adds itself: bullets, the quote bar,
// rules, the ordered list digits it renumbers, the "?" for a character wider
// than a width-1 line, and the replacement for control characters.
const decorations = "•◦│─-?0123456789.)\uFFFD \n"

// checkOutput verifies Render's contract for src rendered at width w: every
// line within w cells, no escape but SGR, no character that is neither from
// the source nor a decoration, and, from width 2 on (at width 1 a wide
// character must give way), every letter and digit of the source present.
// It is one linear pass over sets: the fuzzer's minimiser runs it hundreds
// of thousands of times.
func checkOutput(src, out string, w int) error {
	for i, l := range strings.Split(out, "\n") {
		if got := ansi.StringWidth(l); got > w {
			return fmt.Errorf("line %d is %d cells wide, over %d: %q", i, got, w, l)
		}
	}
	allowed := make(map[rune]bool)
	for _, r := range src + decorations {
		allowed[r] = true
	}
	have := make(map[rune]bool)
	for i := 0; i < len(out); {
		if out[i] == '\x1b' {
			n := sgrLen(out[i:])
			if n == 0 {
				return fmt.Errorf("escape other than SGR at %d in %q", i, out)
			}
			i += n
			continue
		}
		r, size := utf8.DecodeRuneInString(out[i:])
		if !allowed[r] {
			return fmt.Errorf("%q is neither source nor decoration in %q", r, out)
		}
		have[r] = true
		i += size
	}
	if w < 2 {
		return nil
	}
	for _, r := range sourceAlnum(src) {
		if !have[r] {
			return fmt.Errorf("source character %q missing from %q", r, ansi.Strip(out))
		}
	}
	return nil
}

// sgrLen returns the length of the SGR sequence ("\x1b[…m") s starts with,
// or 0 if s starts with any other escape.
func sgrLen(s string) int {
	if len(s) < 3 || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s); i++ {
		switch c := s[i]; {
		case c == 'm':
			return i + 1
		case c != ';' && c != ':' && (c < '0' || c > '9'):
			return 0
		}
	}
	return 0
}

// sourceAlnum returns the letters and digits of src that must survive
// rendering: all but the digits of ordered list markers ("12." or "3)"),
// which are markdown syntax and renumbered.
func sourceAlnum(src string) []rune {
	rs := []rune(src)
	var out []rune
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if unicode.IsLetter(r) {
			out = append(out, r)
			continue
		}
		if !unicode.IsDigit(r) {
			continue
		}
		j := i
		for j < len(rs) && unicode.IsDigit(rs[j]) {
			j++
		}
		if j == len(rs) || (rs[j] != '.' && rs[j] != ')') {
			out = append(out, rs[i:j]...)
		}
		i = j - 1
	}
	return out
}

func FuzzRender(f *testing.F) {
	for _, s := range []string{
		"", "# h", "**a** *b* `c` [d](e) <http://f>", "- a\n  - b\n1. c", "> q\n>> r",
		"```go\nx\n", "    code", "---", "| a | b |\n|---|---|\n| 1 | 2 |",
		"中文 👍🏽 e\u0301 ☺\uFE0F", "a \uFE0Fb *\uFE0F*", "\t\x1b[31mred\r\n\x00",
		"***a**b*", "_a_b_ __c__", "[[[[a]]]](b)", "``` `` ` ```",
		"- 👍🏽 x\n  1. *o* `c`\n     > q\n     > ```\n     > 一二三\n     > ```\n\n> > > **b**",
	} {
		f.Add(s, 40)
		f.Add(s, 3)
	}
	styled := benchStyles()
	f.Fuzz(func(t *testing.T, src string, width int) {
		// Odd widths render styled, even ones unstyled: without escape
		// sequences between runs, grapheme clusters can join across them,
		// which is the harder case for the width contract.
		w, st, plain := width%130, Styles{}, width&1 == 0
		if !plain {
			st = styled
		}
		out := Render(src, w, st)
		if plain && strings.ContainsRune(out, '\x1b') {
			t.Fatalf("escape in unstyled output %q", out)
		}
		if err := checkOutput(sanitize(src), out, max(w, 1)); err != nil {
			t.Fatal(err)
		}
	})
}
