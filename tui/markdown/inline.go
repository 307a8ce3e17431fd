package markdown

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// span is a run of inline text with its attribute bits (stBold, …).
type span struct {
	text string
	st   uint8
}

// maxLinkNesting bounds recursion into link text; deeper brackets are text.
const maxLinkNesting = 4

// maxAutolink bounds the scan for the end of an autolink, so a reply full
// of unmatched "<" stays linear; real URLs are much shorter.
const maxAutolink = 2000

// delim is an emphasis delimiter run ("*", "__", …) awaiting a partner. The
// runs form a doubly linked list (prev, next) so matched runs and the runs
// between them can be dropped as CommonMark's algorithm requires.
type delim struct {
	node        int  // index of the run's span
	ch          byte // '*' or '_'
	n, orig     int  // characters left, characters in the source run
	open, close bool // can open, can close emphasis
	prev, next  int
}

// inlineParser turns one paragraph's source into spans.
type inlineParser struct {
	s     string
	nodes []span
	ds    []delim
	// brackets[i] is the index of the ']' matching a '[' at i, parens[i]
	// of the ')' matching a '(' at i, or -1. Each is computed in one pass
	// when first needed, so a reply full of unmatched brackets or
	// parentheses is not scanned once per bracket.
	brackets, parens []int32
	// noClose[n] > 0 records that no backtick run of length n starts at or
	// after byte noClose[n]-1, so unmatched runs are not searched twice.
	noClose [16]int
}

// parseInline appends the spans of s to out. depth counts enclosing links.
func parseInline(s string, depth int, out []span) []span {
	p := inlineParser{s: s, nodes: out}
	p.scan(depth)
	p.emphasis()
	// Unmatched delimiter characters remain as text.
	for _, d := range p.ds {
		p.nodes[d.node].text = p.nodes[d.node].text[:d.n]
	}
	return p.nodes
}

func (p *inlineParser) text(from, to int) {
	if to > from {
		p.nodes = append(p.nodes, span{text: p.s[from:to]})
	}
}

func (p *inlineParser) scan(depth int) {
	s := p.s
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		next := -1 // where the text resumes after a construct at i
		switch c {
		case '\\':
			if i+1 < len(s) && (isASCIIPunct(s[i+1]) || s[i+1] == '\n') {
				p.text(start, i)
				p.nodes = append(p.nodes, span{text: s[i+1 : i+2]})
				next = i + 2
			}
		case '`':
			n := runLen(s, i, '`')
			if j := p.codeClose(i+n, n); j >= 0 {
				p.text(start, i)
				p.nodes = append(p.nodes, span{text: codeContent(s[i+n : j]), st: stCode})
				next = j + n
			} else {
				i += n // the run is literal text; skip it whole
				continue
			}
		case '*', '_':
			p.text(start, i)
			next = p.delimRun(i, c)
		case '[', '!':
			if depth < maxLinkNesting {
				next = p.link(i, start, depth)
			}
		case '<':
			next = p.autolink(i, start)
		}
		if next < 0 {
			i++
			continue
		}
		i, start = next, next
	}
	p.text(start, len(s))
}

// delimRun records the run of c at i and returns where text resumes.
func (p *inlineParser) delimRun(i int, c byte) int {
	s := p.s
	n := runLen(s, i, c)
	before, after := ' ', ' ' // the ends of the text count as white space
	if i > 0 {
		before, _ = utf8.DecodeLastRuneInString(s[:i])
	}
	if i+n < len(s) {
		after, _ = utf8.DecodeRuneInString(s[i+n:])
	}
	left := !unicode.IsSpace(after) && (!isPunct(after) || unicode.IsSpace(before) || isPunct(before))
	right := !unicode.IsSpace(before) && (!isPunct(before) || unicode.IsSpace(after) || isPunct(after))
	open, close := left, right
	if c == '_' {
		// Underscores do not emphasise inside words: snake_case_names.
		open = left && (!right || isPunct(before))
		close = right && (!left || isPunct(after))
	}
	p.nodes = append(p.nodes, span{text: s[i : i+n]})
	if open || close {
		p.ds = append(p.ds, delim{node: len(p.nodes) - 1, ch: c, n: n, orig: n, open: open, close: close})
	}
	return i + n
}

// codeClose returns the start of the next backtick run of exactly n at or
// after from, or -1.
func (p *inlineParser) codeClose(from, n int) int {
	s := p.s
	if n < len(p.noClose) && p.noClose[n] > 0 && from >= p.noClose[n]-1 {
		return -1
	}
	for j := from; j < len(s); {
		k := strings.IndexByte(s[j:], '`')
		if k < 0 {
			break
		}
		j += k
		m := runLen(s, j, '`')
		if m == n {
			return j
		}
		j += m
	}
	if n < len(p.noClose) {
		p.noClose[n] = from + 1
	}
	return -1
}

// codeContent applies CommonMark's code span normalisation: line endings
// become spaces, and one space is stripped from each end when both ends
// have one, which is how a span shows a backtick at its edge.
func codeContent(c string) string {
	if strings.IndexByte(c, '\n') >= 0 {
		c = strings.ReplaceAll(c, "\n", " ")
	}
	if len(c) >= 2 && c[0] == ' ' && c[len(c)-1] == ' ' && strings.Trim(c, " ") != "" {
		c = c[1 : len(c)-1]
	}
	return c
}

// link parses "[text](url)" or "![alt](url)" at i. The text is rendered, then
// the URL in parentheses unless it is the text itself. It returns where text
// resumes, or -1 when there is no complete link at i.
func (p *inlineParser) link(i, start, depth int) int {
	s := p.s
	lb := i
	if s[i] == '!' {
		if i+1 == len(s) || s[i+1] != '[' {
			return -1
		}
		lb = i + 1
	}
	if p.brackets == nil {
		p.brackets = matchPairs(s, '[', ']', false)
	}
	rb := int(p.brackets[lb])
	if rb < 0 || rb+1 == len(s) || s[rb+1] != '(' {
		return -1
	}
	if p.parens == nil {
		p.parens = matchPairs(s, '(', ')', true)
	}
	end := int(p.parens[rb+1])
	if end < 0 {
		return -1
	}
	text := s[lb+1 : rb]
	url := strings.TrimSpace(s[rb+2 : end])
	if len(url) >= 2 && url[0] == '<' && url[len(url)-1] == '>' {
		url = url[1 : len(url)-1]
	}
	p.text(start, i)
	if text != "" {
		p.nodes = parseInline(text, depth+1, p.nodes)
	}
	switch {
	case url == "" || url == text:
	case text == "":
		p.nodes = append(p.nodes, span{text: url, st: stLink})
	default:
		p.nodes = append(p.nodes, span{text: " ("}, span{text: url, st: stLink}, span{text: ")"})
	}
	return end + 1
}

// matchPairs returns, for each opening character in s, the index of the
// closing one that matches it (pairs nest; backslash-escaped characters do
// not count), and -1 elsewhere. With lineBound, pairs do not span lines:
// a link destination cannot contain a line break.
func matchPairs(s string, opening, closing byte, lineBound bool) []int32 {
	m := make([]int32, len(s))
	var open []int32
	for j := 0; j < len(s); j++ {
		m[j] = -1
		switch s[j] {
		case '\\':
			if j+1 < len(s) {
				j++
				m[j] = -1
			}
		case opening:
			open = append(open, int32(j))
		case closing:
			if n := len(open); n > 0 {
				m[open[n-1]] = int32(j)
				open = open[:n-1]
			}
		case '\n':
			if lineBound {
				open = open[:0]
			}
		}
	}
	return m
}

// autolink parses "<scheme:…>" at i and shows the URL in Link style. Other
// angle brackets (HTML, "<T>") stay text.
func (p *inlineParser) autolink(i, start int) int {
	s := p.s
	end := -1
	for j := i + 1; j < len(s) && j-i <= maxAutolink; j++ {
		c := s[j]
		if c == '>' {
			end = j
			break
		}
		if c == '<' || c == ' ' || c == '\n' {
			return -1
		}
	}
	if end < 0 || !hasScheme(s[i+1:end]) {
		return -1
	}
	p.text(start, i)
	p.nodes = append(p.nodes, span{text: s[i+1 : end], st: stLink})
	return end + 1
}

// hasScheme reports whether u starts with a URI scheme and a colon
// ("https:", "mailto:") followed by something.
func hasScheme(u string) bool {
	k := 0
	for k < len(u) && k <= 32 {
		c := u[k]
		if c == ':' {
			return k >= 2 && k+1 < len(u)
		}
		alpha := (c|0x20) >= 'a' && (c|0x20) <= 'z'
		if !alpha && (k == 0 || (!isDigit(c) && c != '+' && c != '.' && c != '-')) {
			return false
		}
		k++
	}
	return false
}

func runLen(s string, i int, c byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == c {
		n++
	}
	return n
}

func isASCIIPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

// isPunct is CommonMark's Unicode punctuation: general categories P and S.
func isPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return isASCIIPunct(byte(r))
	}
	return unicode.IsPunct(r) || unicode.IsSymbol(r)
}
