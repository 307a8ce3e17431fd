package markdown

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// prefix is what a container writes at the start of each of its lines.
type prefix struct {
	first string // the first line (a list item's marker)
	rest  string // later lines (the hanging indent)
	blank string // separator lines ("" for none, the bar for quotes)
	w     int    // cells taken by first and rest
	used  bool   // first has been written
}

// renderer writes blocks as lines into out. Containers push a prefix; every
// line starts with the prefixes in order, so nesting composes without
// re-scanning rendered text.
type renderer struct {
	out   []byte
	pal   *palette
	avail int // width left for content after the prefixes

	prefixes []prefix
	lines    int  // lines started so far
	pending  bool // a blank separator line is owed before the next line
	depth    int  // list nesting, for the bullet shape

	inLine bool   // a line is open
	lineW  int    // cells written on the open line, prefixes excluded
	cur    string // SGR open on the current line

	spans []span  // scratch for inline parsing
	word  []piece // scratch: the word being assembled
	sp    piece   // the space owed before the next word
	spW   int
}

// blocks renders bs, separated by blank lines when sep is set.
func (r *renderer) blocks(bs []block, sep bool, b base) {
	start, owed := r.lines, false
	for k := range bs {
		if sep && r.lines > start {
			r.pending, owed = true, true
		}
		r.block(&bs[k], b)
	}
	// A separator owed to a block that rendered nothing must not leak into
	// the parent, where it could split a tight list.
	if owed {
		r.pending = false
	}
}

func (r *renderer) block(bl *block, b base) {
	switch bl.kind {
	case kindParagraph:
		r.flow(bl.text, b)
	case kindHeading:
		r.flow(bl.text, baseHeading)
	case kindCode:
		r.code(bl)
	case kindRule:
		r.rule()
	case kindQuote:
		r.push(r.pal.quotePrefix, r.pal.quotePrefix, r.pal.quoteBar, barWidth+1)
		r.blocks(bl.children, true, baseQuote)
		r.pop()
	case kindList:
		r.list(bl, b)
	case kindTable:
		r.table(bl, b)
	}
}

func styled(sgr, s string) string {
	if sgr == "" {
		return s
	}
	return sgr + s + sgrReset
}

// push adds a container prefix. When it would leave the content less than
// minInner cells, the prefix is cut so the width contract holds at any width.
func (r *renderer) push(first, rest, blank string, w int) {
	if allowed := r.avail - minInner(r.avail); w > allowed {
		w = max(allowed, 0)
		if w == 0 {
			// ansi.Truncate keeps escape sequences; a prefix with nothing
			// left to show must not write its styles on every line.
			first, rest, blank = "", "", ""
		} else {
			first = ansi.Truncate(first, w, "")
			rest = ansi.Truncate(rest, w, "")
			blank = ansi.Truncate(blank, w, "")
		}
	}
	r.prefixes = append(r.prefixes, prefix{first: first, rest: rest, blank: blank, w: w})
	r.avail -= w
}

func (r *renderer) pop() {
	r.avail += r.prefixes[len(r.prefixes)-1].w
	r.prefixes = r.prefixes[:len(r.prefixes)-1]
}

// startLine opens a line: the owed separator, the newline, the prefixes.
func (r *renderer) startLine() {
	if r.pending {
		r.pending = false
		if r.lines > 0 {
			r.blankLine()
		}
	}
	if r.lines > 0 {
		r.out = append(r.out, '\n')
	}
	for k := range r.prefixes {
		p := &r.prefixes[k]
		if p.used {
			r.out = append(r.out, p.rest...)
		} else {
			r.out = append(r.out, p.first...)
			p.used = true
		}
	}
	r.lines++
	r.inLine, r.lineW = true, 0
}

// blankLine writes a separator: prefixes up to the innermost one that shows
// on blank lines (a quote bar), so no line carries trailing indentation.
// Prefixes not yet used belong to the block after the separator, not to the
// context it separates in, and are left out.
func (r *renderer) blankLine() {
	r.out = append(r.out, '\n')
	last := -1
	for k := range r.prefixes {
		if !r.prefixes[k].used {
			break
		}
		if r.prefixes[k].blank != "" {
			last = k
		}
	}
	for k := 0; k < last; k++ {
		r.out = append(r.out, r.prefixes[k].rest...)
	}
	if last >= 0 {
		r.out = append(r.out, r.prefixes[last].blank...)
	}
	r.lines++
}

// endLine closes the open line's styles.
func (r *renderer) endLine() {
	if !r.inLine {
		return
	}
	if r.cur != "" {
		r.out = append(r.out, sgrReset...)
		r.cur = ""
	}
	r.inLine = false
}

// put writes text of w cells in the style sgr on the open line.
func (r *renderer) put(text, sgr string, w int) {
	if sgr != r.cur {
		if r.cur != "" {
			r.out = append(r.out, sgrReset...)
		}
		r.out = append(r.out, sgr...)
		r.cur = sgr
	}
	r.out = append(r.out, text...)
	r.lineW += w
}

// code renders a code block two cells in, its info string above it in the
// Rule style. Lines are hard-wrapped, never word-wrapped: code must survive
// intact. With a CodeBlock background, lines are padded to the widest one.
func (r *renderer) code(bl *block) {
	r.push("  ", "  ", "", 2)
	w := r.avail
	if bl.info != "" {
		r.hardLine(bl.info, r.pal.rule, w, 0)
	}
	pad := 0
	if r.pal.codeBackground {
		for _, l := range bl.lines {
			pad = max(pad, min(measure(l), w))
		}
	}
	for _, l := range bl.lines {
		r.hardLine(l, r.pal.codeBlock, w, pad)
	}
	r.pop()
}

// hardLine writes text as one or more lines of at most w cells, each padded
// to pad cells in the same style.
func (r *renderer) hardLine(text, sgr string, w, pad int) {
	r.startLine()
	if mw := measure(text); mw <= w {
		r.put(text, sgr, mw)
	} else {
		r.word = append(r.word[:0], piece{text: text, sgr: sgr})
		r.hard(w, pad)
		r.word = r.word[:0]
	}
	r.padTo(pad, sgr)
	r.endLine()
}

func (r *renderer) padTo(pad int, sgr string) {
	if pad > r.lineW {
		r.put(spaces(pad-r.lineW), sgr, pad-r.lineW)
	}
}

func (r *renderer) rule() {
	r.startLine()
	if n := r.avail / ruleWidth; n > 0 {
		r.put(strings.Repeat("─", n), r.pal.rule, n*ruleWidth)
	} else {
		r.put(strings.Repeat("-", r.avail), r.pal.rule, r.avail)
	}
	r.endLine()
}

// list renders each item behind its marker, continuation lines hanging under
// the item's text. Ordered markers are right-aligned to the widest number.
func (r *renderer) list(bl *block, b base) {
	shape := r.depth % len(bullets)
	mw := ansi.StringWidth(bullets[shape])
	if bl.ordered {
		mw = len(strconv.Itoa(bl.start+len(bl.items)-1)) + 1
	}
	r.depth++
	start, owed := r.lines, false
	for k, item := range bl.items {
		if k > 0 && bl.loose && r.lines > start {
			r.pending, owed = true, true
		}
		first := r.pal.bulletPrefix[shape]
		if bl.ordered {
			m := strconv.Itoa(bl.start+k) + string(bl.delim)
			first = styled(r.pal.bullet, spaces(mw-len(m))+m) + " "
		}
		r.push(first, spaces(mw+1), "", mw+1)
		if len(item) == 0 {
			r.startLine()
			r.endLine()
		} else {
			r.blocks(item, bl.loose, b)
		}
		r.pop()
	}
	if owed {
		r.pending = false
	}
	r.depth--
}

// table passes GFM table rows through as lines: inline markup is rendered,
// spacing kept, and rows wider than the width are hard-wrapped.
func (r *renderer) table(bl *block, b base) {
	w := r.avail
	for _, l := range bl.lines {
		r.spans = parseInline(strings.TrimSpace(l), 0, r.spans[:0])
		r.word = r.word[:0]
		for _, s := range r.spans {
			if s.text != "" {
				r.word = append(r.word, piece{text: s.text, sgr: r.pal.sgrFor(b, s.st)})
			}
		}
		if len(r.word) == 0 {
			continue
		}
		r.startLine()
		if ww := r.wordWidth(); ww <= w {
			r.putWord(ww)
		} else {
			r.hard(w, 0)
		}
		r.endLine()
		r.word = r.word[:0]
	}
}
