package markdown

import (
	"strings"
	"unicode/utf8"
)

// Render renders markdown source as styled terminal text at most width cells
// wide: every line's ansi.StringWidth is <= width. Lines are joined by "\n"
// with no trailing newline. The source is expected to be safe text already
// (the caller replaced control characters); whatever slips through is shown
// as U+FFFD, so the output holds only the source's text, layout spaces and
// decorations, and the styles' SGR sequences. A width below 1 is taken as 1.
func Render(src string, width int, s Styles) string {
	width = max(width, 1)
	src = sanitize(src)
	if isBlank(strings.TrimRight(src, "\n ")) {
		return ""
	}
	blocks := parseBlocks(strings.Split(src, "\n"), 0)
	r := renderer{
		avail: width,
		pal:   newPalette(&s),
		out:   make([]byte, 0, 2*len(src)+256),
	}
	r.blocks(blocks, true, baseText)
	return string(r.out)
}

// tabStop is the column multiple tabs expand to. Terminals disagree on what a
// tab is worth and ansi.StringWidth counts it as zero, so tabs never reach
// the output.
const tabStop = 4

// sanitize normalises line endings, expands tabs and replaces invalid UTF-8
// and control characters (C0, DEL, C1) with U+FFFD. Clean input, the usual
// case, is returned without copying; otherwise printable text is copied
// byte by byte, since replies with tab-indented code take this path often.
func sanitize(src string) string {
	if isClean(src) {
		return src
	}
	buf := make([]byte, 0, len(src)+len(src)/4)
	col := 0 // characters since the line start, for tab stops
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c >= 0x20 && c < 0x7f:
			buf = append(buf, c)
			col++
			i++
		case c == '\n' || c == '\r':
			buf = append(buf, '\n')
			col = 0
			i++
			if c == '\r' && i < len(src) && src[i] == '\n' {
				i++ // CRLF is one line ending
			}
		case c == '\t':
			n := tabStop - col%tabStop
			buf = append(buf, spaces(n)...)
			col += n
			i++
		case c < utf8.RuneSelf:
			buf = utf8.AppendRune(buf, utf8.RuneError)
			col++
			i++
		default:
			r, size := utf8.DecodeRuneInString(src[i:])
			if r == utf8.RuneError || r <= 0x9f {
				buf = utf8.AppendRune(buf, utf8.RuneError)
			} else {
				buf = append(buf, src[i:i+size]...)
			}
			col++
			i += size
		}
	}
	return string(buf)
}

// isClean reports whether src needs no sanitising.
func isClean(src string) bool {
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\n':
		case c < 0x20 || c == 0x7f:
			return false
		case c == 0xc2 && i+1 < len(src) && src[i+1] >= 0x80 && src[i+1] <= 0x9f:
			return false // a C1 control, U+0080..U+009F
		}
	}
	return utf8.ValidString(src)
}

const spaceRun = "                                                                "

// spaces returns n spaces, without allocating for the usual small n.
func spaces(n int) string {
	if n <= 0 {
		return ""
	}
	if n <= len(spaceRun) {
		return spaceRun[:n]
	}
	return strings.Repeat(" ", n)
}
