package tui

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"retrace/state/transcript"
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
	what := transcript.ApproxSize(int64(len(text))) + ", " + lineCount(text)
	if cutFrom > 0 {
		what = fmt.Sprintf("the first %s of %s, %s", transcript.ApproxSize(int64(len(text))), transcript.ApproxSize(int64(cutFrom)), what[strings.Index(what, ", ")+2:])
	}
	marker := "[pasted " + what + "]"
	if n > 1 {
		marker = fmt.Sprintf("[paste %d: %s]", n, what)
	}
	p.markers, p.texts = append(p.markers, marker), append(p.texts, text)
	return marker
}

// expand puts each paste back in place of its marker, in one pass over
// the draft: a marker the person edited away is a paste they took out,
// and is not sent; a second copy of a marker (typed, or inside a paste)
// stays text, so no paste is sent twice.
func (p *pastes) expand(draft string) string {
	type at struct{ pos, i int }
	var found []at
	for i, m := range p.markers {
		if pos := strings.Index(draft, m); pos >= 0 {
			found = append(found, at{pos, i})
		}
	}
	if len(found) == 0 {
		return draft
	}
	sort.Slice(found, func(a, b int) bool { return found[a].pos < found[b].pos })
	var b strings.Builder
	last := 0
	for _, f := range found {
		if f.pos < last {
			continue // overlaps the marker before it
		}
		b.WriteString(draft[last:f.pos])
		b.WriteString(p.texts[f.i])
		last = f.pos + len(p.markers[f.i])
	}
	b.WriteString(draft[last:])
	return b.String()
}

// drop forgets paste i.
func (p *pastes) drop(i int) {
	p.markers = append(p.markers[:i:i], p.markers[i+1:]...)
	p.texts = append(p.texts[:i:i], p.texts[i+1:]...)
}

// whole keeps markers whole across an edit of the draft from before to
// after: a deletion that reaches into a marker takes the whole marker
// (and its paste) with it, and text typed inside one goes after it. It
// returns the draft to keep and the byte offset for the cursor, or ok
// false when the edit touched no marker.
func (p *pastes) whole(before, after string) (draft string, cursor int, ok bool) {
	if len(p.markers) == 0 || before == after {
		return "", 0, false
	}
	// The first character that differs, and how many bytes went or came.
	at := 0
	for at < len(before) && at < len(after) {
		r1, n1 := utf8.DecodeRuneInString(before[at:])
		r2, _ := utf8.DecodeRuneInString(after[at:])
		if r1 != r2 {
			break
		}
		at += n1
	}
	if len(after) < len(before) {
		gone := len(before) - len(after)
		if before[at+gone:] != after[at:] {
			return "", 0, false // not one deletion
		}
		lo, hi, hit := at, at+gone, false
		for i := len(p.markers) - 1; i >= 0; i-- {
			s := strings.Index(before, p.markers[i])
			if e := s + len(p.markers[i]); s >= 0 && s < hi && lo < e {
				lo, hi, hit = min(lo, s), max(hi, e), true
				p.drop(i)
			}
		}
		if !hit {
			return "", 0, false
		}
		return before[:lo] + before[hi:], lo, true
	}
	added := len(after) - len(before)
	if after[at+added:] != before[at:] {
		return "", 0, false // not one insertion
	}
	for _, m := range p.markers {
		if s := strings.Index(before, m); s >= 0 && s < at && at < s+len(m) {
			e := s + len(m)
			return before[:e] + after[at:at+added] + before[e:], e + added, true
		}
	}
	return "", 0, false
}

// refold puts back the markers of the pastes a text (from the editor)
// still holds whole, and forgets the others.
func (p *pastes) refold(text string) string {
	for i := len(p.texts) - 1; i >= 0; i-- {
		if strings.Contains(text, p.texts[i]) {
			text = strings.Replace(text, p.texts[i], p.markers[i], 1)
		} else {
			p.drop(i)
		}
	}
	return text
}

func (p *pastes) reset() { p.markers, p.texts = nil, nil }

// folds says whether a paste is long enough to fold.
func folds(text string) bool {
	return len(text) > foldBytes || strings.Count(text, "\n") >= foldLines
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
