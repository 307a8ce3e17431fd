package markdown

import "strings"

// Line classifiers shared by the block parsers. They take a line with its
// indentation already removed ("t") unless they say otherwise. Tabs were
// expanded before parsing, so indentation is a count of spaces.

func indentOf(s string) int {
	n := 0
	for n < len(s) && s[n] == ' ' {
		n++
	}
	return n
}

func isBlank(s string) bool { return indentOf(s) == len(s) }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// interrupts reports whether the full line l ends a paragraph: a blank line
// or the start of another block. Ordered items interrupt whatever their
// number (CommonMark allows only "1."): models often omit the blank line
// before a list, and a list is what they mean.
func interrupts(l string) bool {
	ind := indentOf(l)
	if ind == len(l) {
		return true
	}
	if ind >= 4 {
		return false
	}
	t := l[ind:]
	if t[0] == '>' || isRule(t) || isItemStart(l) {
		return true
	}
	if _, _, _, ok := fenceOpen(t); ok {
		return true
	}
	_, _, ok := heading(t)
	return ok
}

// fenceOpen parses an opening code fence: three or more backticks or tildes
// and an optional info string (which may not contain a backtick after a
// backtick fence, or inline code like ```x``` would open a block).
func fenceOpen(t string) (ch byte, n int, info string, ok bool) {
	if len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return 0, 0, "", false
	}
	ch = t[0]
	for n < len(t) && t[n] == ch {
		n++
	}
	if n < 3 {
		return 0, 0, "", false
	}
	info = strings.TrimSpace(t[n:])
	if ch == '`' && strings.IndexByte(info, '`') >= 0 {
		return 0, 0, "", false
	}
	return ch, n, info, true
}

// fenceClose reports whether the full line l closes a fence of n ch's.
func fenceClose(l string, ch byte, n int) bool {
	ind := indentOf(l)
	if ind >= 4 {
		return false
	}
	k := ind
	for k < len(l) && l[k] == ch {
		k++
	}
	return k-ind >= n && isBlank(l[k:])
}

// heading parses an ATX heading: one to six '#', then a space or the end of
// the line. The optional closing run of '#' is dropped with the opening one.
func heading(t string) (level int, text string, ok bool) {
	for level < len(t) && t[level] == '#' {
		level++
	}
	if level == 0 || level > 6 || (level < len(t) && t[level] != ' ') {
		return 0, "", false
	}
	text = strings.Trim(t[level:], " ")
	j := len(text)
	for j > 0 && text[j-1] == '#' {
		j--
	}
	switch {
	case j == 0:
		text = ""
	case text[j-1] == ' ':
		text = strings.TrimRight(text[:j], " ")
	}
	return level, text, true
}

// isRule reports whether t is a thematic break: three or more of the same
// '-', '*' or '_', optionally separated by spaces.
func isRule(t string) bool {
	if t == "" || (t[0] != '-' && t[0] != '*' && t[0] != '_') {
		return false
	}
	n := 0
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case t[0]:
			n++
		case ' ':
		default:
			return false
		}
	}
	return n >= 3
}

// isTableStart reports whether lines[i] is the header row of a GFM table,
// that is, it contains a pipe and the next line is a delimiter row.
func isTableStart(lines []string, i int) bool {
	return i+1 < len(lines) && strings.IndexByte(lines[i], '|') >= 0 && isTableDelim(lines[i+1])
}

// isTableDelim reports whether l is a delimiter row such as "|---|:--:|".
func isTableDelim(l string) bool {
	pipe, dash := false, false
	for i := 0; i < len(l); i++ {
		switch l[i] {
		case '|':
			pipe = true
		case '-':
			dash = true
		case ':', ' ':
		default:
			return false
		}
	}
	return pipe && dash
}
