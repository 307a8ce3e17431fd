package markdown

import (
	"sync"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Width arithmetic. Everything measured here is plain text (never styled),
// split at points where the output may put an SGR sequence or a space.
//
// ansi.StringWidth measures a styled line segment by segment: grapheme
// clusters do not continue across an escape sequence. A segment that begins
// with a zero-width cluster (a lone combining mark or variation selector)
// may however join the space before it ("␠\uFE0F" is two cells), so measure
// counts such a start as one cell. Over-counting by one in that rare case is
// harmless; under-counting would break the width contract.

// measure returns the cells s takes when placed after arbitrary text.
func measure(s string) int {
	w := 0
	for i := 0; i < len(s); {
		n, cw := simpleAt(s, i)
		if n == 0 {
			if i == 0 {
				return measureSlow(s)
			}
			// i is a cluster boundary: the cluster before it was simple.
			return w + ansi.StringWidth(s[i:])
		}
		w += cw
		i += n
	}
	return w
}

func measureSlow(s string) int {
	w := ansi.StringWidth(s)
	if s[0] >= utf8.RuneSelf {
		if _, cw := ansi.FirstGraphemeCluster(s, ansi.GraphemeWidth); cw == 0 {
			w++
		}
	}
	return w
}

// cluster returns the first grapheme cluster of non-empty s and its width,
// counting a zero-width cluster as one cell for the reason above.
func cluster(s string) (string, int) {
	if n, w := simpleAt(s, 0); n > 0 {
		return s[:n], w
	}
	c, w := ansi.FirstGraphemeCluster(s, ansi.GraphemeWidth)
	if c == "" {
		c = s[:1] // cannot happen on valid UTF-8; never loop
	}
	return c, max(w, 1)
}

// simpleAt returns the length and width of the grapheme cluster at s[i]
// when it is a single ASCII byte or simple rune (see simpleWidth) and what
// follows cannot extend it; otherwise 0, 0 and the caller asks ansi.
//
// This fast path is what keeps Render cheap: ansi.StringWidth segments every
// character with the full Unicode grapheme rules, which costs far more than
// the rest of rendering. Printable ASCII is one cell (sanitize removed the
// controls); a simple rune has a known width.
func simpleAt(s string, i int) (n, w int) {
	if c := s[i]; c < utf8.RuneSelf {
		n, w = 1, 1
	} else {
		r, size := utf8.DecodeRuneInString(s[i:])
		if w = simpleWidth(r); w < 0 {
			return 0, 0
		}
		n = size
	}
	if j := i + n; j < len(s) && s[j] >= utf8.RuneSelf {
		if r, _ := utf8.DecodeRuneInString(s[j:]); simpleWidth(r) < 0 {
			return 0, 0 // possibly a combining mark, a variation selector, …
		}
	}
	return n, w
}

// Ranges of the simple-rune table, classified at first use.
const (
	loFirst, loEnd = 0xA0, 0x500    // Latin-1 to Cyrillic
	hiFirst, hiEnd = 0x2000, 0x27C0 // punctuation to dingbats
)

var simpleTable struct {
	once sync.Once
	lo   [loEnd - loFirst]int8
	hi   [hiEnd - hiFirst]int8
}

// simpleWidth returns the width of r if r is simple, or -1. A simple rune
// is a grapheme cluster on its own next to ASCII or any other simple rune,
// and one or two cells wide. The common text ranges are classified once,
// by ansi itself, so the table agrees with ansi.StringWidth under any
// RUNEWIDTH_EASTASIAN setting. CJK ideographs, kana, Hangul syllables and
// fullwidth forms are wide and stand alone by their Unicode properties
// (TestSimpleRangesAgreeWithAnsi checks every one of them).
func simpleWidth(r rune) int {
	switch {
	case r >= loFirst && r < loEnd:
		simpleTable.once.Do(buildSimpleTable)
		return int(simpleTable.lo[r-loFirst])
	case r >= hiFirst && r < hiEnd:
		simpleTable.once.Do(buildSimpleTable)
		return int(simpleTable.hi[r-hiFirst])
	case r >= 0x4E00 && r <= 0x9FFF, // CJK unified ideographs
		r >= 0x3001 && r <= 0x3029, // CJK punctuation, before the combining tone marks
		r >= 0x3041 && r <= 0x3096, // hiragana, before the combining sound marks
		r >= 0x30A1 && r <= 0x30FF, // katakana
		r >= 0xAC00 && r <= 0xD7A3, // Hangul syllables (trailing jamo are not simple)
		r >= 0xFF01 && r <= 0xFF60: // fullwidth forms
		return 2
	}
	return -1
}

func buildSimpleTable() {
	for r := rune(loFirst); r < loEnd; r++ {
		simpleTable.lo[r-loFirst] = classifySimple(r)
	}
	for r := rune(hiFirst); r < hiEnd; r++ {
		simpleTable.hi[r-hiFirst] = classifySimple(r)
	}
}

// classifySimple asks ansi whether r stands alone on both sides and how wide
// it is; -1 for anything that joins (marks, joiners, prepended characters)
// or is not one or two cells.
func classifySimple(r rune) int8 {
	s := string(r)
	w := ansi.StringWidth(s)
	if w < 1 || w > 2 {
		return -1
	}
	if c, _ := ansi.FirstGraphemeCluster(s+"a", ansi.GraphemeWidth); c != s {
		return -1
	}
	if c, _ := ansi.FirstGraphemeCluster("a"+s, ansi.GraphemeWidth); c != "a" {
		return -1
	}
	return int8(w)
}

// breakAt returns the index of the first line break opportunity in t: a
// '\n' (hard break) or a space. A space that starts a grapheme cluster with
// what follows is not one: splitting there would change the width.
func breakAt(t string) int {
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '\n':
			return i
		case ' ':
			if !joinsNext(t, i) {
				return i
			}
		}
	}
	return len(t)
}

// spaceRunEnd returns the end of the run of breaking spaces starting at j.
func spaceRunEnd(t string, j int) int {
	k := j + 1
	for k < len(t) && t[k] == ' ' && !joinsNext(t, k) {
		k++
	}
	return k
}

// joinsNext reports whether the space at t[i] forms one cluster with the
// character after it.
func joinsNext(t string, i int) bool {
	if i+1 == len(t) || t[i+1] < utf8.RuneSelf {
		return false
	}
	if r, _ := utf8.DecodeRuneInString(t[i+1:]); simpleWidth(r) >= 0 {
		return false
	}
	c, _ := ansi.FirstGraphemeCluster(t[i:], ansi.GraphemeWidth)
	return len(c) > 1
}

// Decoration widths, measured rather than assumed: with RUNEWIDTH_EASTASIAN
// set the box-drawing characters are two cells wide.
var (
	barWidth  = ansi.StringWidth("│")
	ruleWidth = ansi.StringWidth("─")
)

// bullets are the unordered list markers by nesting depth.
var bullets = [...]string{"•", "◦"}

// minInner is the width a container keeps for its content when its prefix
// (bullet, quote bar, code indent) would leave less: the prefix is cut
// instead, so deep nesting at narrow widths stays readable and in bounds.
func minInner(avail int) int {
	return min(avail, max(2, min(10, avail/2)))
}
