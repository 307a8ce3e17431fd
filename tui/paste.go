package tui

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A paste longer than this is folded: the input shows one line standing
// for it, and the whole text is kept aside until the message is sent.
// Drawn inline, a log of 40,000 lines made every key press re-wrap it all
// and took a hundred PgUps to scroll past.
const (
	foldBytes = 2000
	foldLines = 20
)

// pastes are the folded pastes of the draft: each stands in the input as
// its marker and is put back in its place when the message is sent.
type pastes struct {
	markers []string
	texts   []string
}

// fold keeps text aside and returns the marker that stands for it in the
// input. cutFrom is the size of the paste before the cap cut it, or 0.
func (p *pastes) fold(text string, cutFrom int) string {
	n := len(p.markers) + 1
	what := approxSize(len(text)) + ", " + lineCount(text)
	if cutFrom > 0 {
		what = fmt.Sprintf("the first %s of %s, %s", approxSize(len(text)), approxSize(cutFrom), what[strings.Index(what, ", ")+2:])
	}
	marker := "[pasted " + what + "]"
	if n > 1 {
		marker = fmt.Sprintf("[paste %d: %s]", n, what)
	}
	p.markers, p.texts = append(p.markers, marker), append(p.texts, text)
	return marker
}

// expand puts each paste back in place of its marker. A marker the person
// edited away is a paste they took out: it is not sent.
func (p *pastes) expand(draft string) string {
	if len(p.markers) == 0 {
		return draft
	}
	pairs := make([]string, 0, 2*len(p.markers))
	for i, m := range p.markers {
		pairs = append(pairs, m, p.texts[i])
	}
	return strings.NewReplacer(pairs...).Replace(draft)
}

func (p *pastes) reset() { p.markers, p.texts = nil, nil }

// folds says whether a paste is long enough to fold.
func folds(text string) bool {
	return len(text) > foldBytes || strings.Count(text, "\n") >= foldLines
}

// capPaste cuts text to room bytes, on a character boundary.
func capPaste(text string, room int) string {
	if len(text) <= room {
		return text
	}
	cut := max(room, 0)
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut]
}

// approxSize is a size as a person reads it at a glance: "812 bytes",
// "12.3 KiB", "1.5 MiB".
func approxSize(n int) string {
	switch {
	case n < 1<<10:
		return strconv.Itoa(n) + " bytes"
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// lineCount is "1 line", "40,213 lines": how many lines text holds.
func lineCount(text string) string {
	return linesOf(strings.Count(strings.TrimSuffix(text, "\n"), "\n") + 1)
}

// linesOf is n lines, in words: "1 line", "40,213 lines".
func linesOf(n int) string {
	if n == 1 {
		return "1 line"
	}
	return grouped(n) + " lines"
}

// grouped writes n with thousands separated: 40,213.
func grouped(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
