package tools

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"retrace/state/transcript"
)

// shorten cuts s to at most n bytes (on a rune boundary) and marks the cut
// with an ellipsis, for echoing untrusted values back in one line.
func shorten(s string, n int) string { return transcript.Shorten(s, n) }

// cutUTF8 cuts b to at most n bytes without splitting a rune.
func cutUTF8(b []byte, n int) []byte {
	if n >= len(b) {
		return b
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return b[:n]
}

// sizeString says a size the way the caps are stated: "64 KiB".
func sizeString(n int) string { return transcript.Size(int64(n)) }

// ensureNewline ends s with a newline so a note can follow on its own line.
func ensureNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// capped collects result lines up to a byte budget, so a listing or a
// search can stop adding lines once it is full and say so.
type capped struct {
	b     strings.Builder
	max   int
	lines int
	full  bool
}

// add appends line and a newline, or marks the output full when that would
// go past the budget. It reports whether the line was added.
func (c *capped) add(line string) bool {
	if c.full || c.b.Len()+len(line)+1 > c.max {
		c.full = true
		return false
	}
	c.b.WriteString(line)
	c.b.WriteByte('\n')
	c.lines++
	return true
}

// validUTF8 replaces invalid UTF-8 with U+FFFD: the model's API takes only
// valid text, and files and programs may hold anything.
func validUTF8(b []byte) string {
	return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
}

// quotePath shows a path of the workspace as one unambiguous line: as it
// is, or Go-quoted ("a\nb.txt") when strconv.Quote would change it, that
// is when it holds a control or other non-printing character, bytes that
// are not UTF-8, a double quote or a backslash. A file may be named with
// a newline; shown as it is, it would read as two entries. Since a plain
// path never starts with a quote, a quoted one cannot be mistaken for it.
func quotePath(p string) string {
	if q := strconv.Quote(p); q[1:len(q)-1] != p {
		return q
	}
	return p
}
