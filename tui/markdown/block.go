package markdown

import "strings"

// blockKind says what a parsed block is.
type blockKind uint8

const (
	kindParagraph blockKind = iota
	kindHeading
	kindCode
	kindRule
	kindQuote
	kindList
	kindTable
)

// maxNesting bounds container nesting (quotes, lists). Deeper markers are
// shown as text: a fuzzer's ">>>>…" must not cost a frame per level.
const maxNesting = 24

// block is one parsed block. Only the fields of its kind are set.
type block struct {
	kind blockKind

	text  string   // paragraph, heading: inline source, soft breaks joined
	lines []string // code, table: raw lines
	info  string   // code: the fence's info string

	children []block   // quote
	items    [][]block // list: the blocks of each item

	ordered bool // list
	start   int  // list: number of the first item
	delim   byte // list: '.' or ')' after the number
	loose   bool // list: items separated by blank lines
}

// parseBlocks parses lines (already stripped of any container prefix) into
// blocks. depth counts enclosing containers.
func parseBlocks(lines []string, depth int) []block {
	var out []block
	for i := 0; i < len(lines); {
		line := lines[i]
		ind := indentOf(line)
		if ind == len(line) {
			i++
			continue
		}
		if ind >= 4 {
			b, n := parseIndentedCode(lines[i:])
			out = append(out, b)
			i += n
			continue
		}
		t := line[ind:]
		if ch, n, info, ok := fenceOpen(t); ok {
			b, used := parseFence(lines[i+1:], ind, ch, n, info)
			out = append(out, b)
			i += 1 + used
			continue
		}
		if _, text, ok := heading(t); ok {
			if text != "" {
				out = append(out, block{kind: kindHeading, text: text})
			}
			i++
			continue
		}
		if isRule(t) {
			out = append(out, block{kind: kindRule})
			i++
			continue
		}
		if depth < maxNesting && t[0] == '>' {
			b, n := parseQuote(lines[i:], depth)
			out = append(out, b)
			i += n
			continue
		}
		if depth < maxNesting {
			if m, ok := listMarker(line); ok {
				b, n := parseList(lines[i:], m, depth)
				out = append(out, b)
				i += n
				continue
			}
		}
		var b block
		var n int
		if isTableStart(lines, i) {
			b, n = parseTable(lines[i:])
		} else {
			b, n = parseParagraph(lines[i:])
		}
		out = append(out, b)
		i += n
	}
	return out
}

// parseTable collects a GFM table: the header and delimiter rows, then rows
// up to a blank line or a line without a pipe.
func parseTable(lines []string) (block, int) {
	n := 2
	for n < len(lines) && !isBlank(lines[n]) && strings.IndexByte(lines[n], '|') >= 0 {
		n++
	}
	return block{kind: kindTable, lines: lines[:n]}, n
}

// parseParagraph collects paragraph lines until a blank line or a line that
// starts another block, and joins them: soft breaks become spaces, a line
// ending in two spaces or a backslash keeps a hard break ("\n").
func parseParagraph(lines []string) (block, int) {
	n := 1
	size := len(lines[0])
	for n < len(lines) && !interrupts(lines[n]) && !isTableStart(lines, n) {
		size += len(lines[n]) + 1
		n++
	}
	var b strings.Builder
	b.Grow(size)
	for k, l := range lines[:n] {
		last := k == n-1
		hard := !last && strings.HasSuffix(l, "  ")
		l = strings.TrimRight(strings.TrimLeft(l, " "), " ")
		b.WriteString(l)
		switch {
		case last:
		case hard || strings.HasSuffix(l, "\\"):
			b.WriteByte('\n')
		default:
			b.WriteByte(' ')
		}
	}
	return block{kind: kindParagraph, text: b.String()}, n
}

func parseIndentedCode(lines []string) (block, int) {
	n := 0
	for n < len(lines) && (isBlank(lines[n]) || indentOf(lines[n]) >= 4) {
		n++
	}
	code := make([]string, n)
	for k, l := range lines[:n] {
		if len(l) > 4 {
			code[k] = l[4:]
		}
	}
	return block{kind: kindCode, lines: trimBlankTail(code)}, n
}

// parseFence collects the lines of a fenced block opened at indent ind. An
// unterminated fence takes every remaining line: the reply is still streaming
// and what there is must already look like code.
func parseFence(lines []string, ind int, ch byte, n int, info string) (block, int) {
	b := block{kind: kindCode, info: info}
	for k, l := range lines {
		if fenceClose(l, ch, n) {
			b.lines = dedentAll(lines[:k], ind)
			return b, k + 1
		}
	}
	b.lines = trimBlankTail(dedentAll(lines, ind))
	return b, len(lines)
}

// dedentAll removes up to ind leading spaces from every line, as CommonMark
// does for the content of an indented fence.
func dedentAll(lines []string, ind int) []string {
	if ind == 0 {
		return lines
	}
	out := make([]string, len(lines))
	for k, l := range lines {
		out[k] = l[min(ind, indentOf(l)):]
	}
	return out
}

func trimBlankTail(lines []string) []string {
	for len(lines) > 0 && isBlank(lines[len(lines)-1]) {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// parseQuote collects "> " lines, and lazy continuation lines of a quoted
// paragraph, then parses their content as blocks.
func parseQuote(lines []string, depth int) (block, int) {
	var inner []string
	var lz lazyState
	n := 0
	for ; n < len(lines); n++ {
		l := lines[n]
		ind := indentOf(l)
		if ind < 4 && ind < len(l) && l[ind] == '>' {
			rest := l[ind+1:]
			if rest != "" && rest[0] == ' ' {
				rest = rest[1:]
			}
			inner = append(inner, rest)
			lz.feed(rest)
			continue
		}
		if ind == len(l) || !lz.para || interrupts(l) {
			break
		}
		inner = append(inner, l)
	}
	return block{kind: kindQuote, children: parseBlocks(inner, depth+1)}, n
}

// lazyState follows the content of a container line by line to know whether
// an unprefixed line may continue it lazily (only a paragraph may be
// continued) and whether a fence is open (a fence's content never is).
type lazyState struct {
	inFence bool
	ch      byte
	n       int
	para    bool
}

func (s *lazyState) feed(content string) {
	ind := indentOf(content)
	switch {
	case s.inFence:
		s.inFence = !fenceClose(content, s.ch, s.n)
		s.para = false
	case ind == len(content):
		s.para = false
	case ind >= 4:
		// An indented line continues a paragraph, or is indented code.
	default:
		t := content[ind:]
		if ch, n, _, ok := fenceOpen(t); ok {
			s.inFence, s.ch, s.n, s.para = true, ch, n, false
			return
		}
		_, _, h := heading(t)
		s.para = !h && !isRule(t)
	}
}
