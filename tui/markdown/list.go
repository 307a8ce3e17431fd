package markdown

// marker is a parsed list item marker.
type marker struct {
	ind     int  // indent of the marker
	content int  // column where the item's content begins
	ordered bool // "1." or "1)" rather than "-", "*", "+"
	delim   byte // '.' or ')' for ordered markers
	num     int  // the number of an ordered marker
	empty   bool // nothing after the marker on its line
}

// listMarker parses a list item marker at the start of l.
func listMarker(l string) (marker, bool) {
	ind := indentOf(l)
	if ind == len(l) {
		return marker{}, false
	}
	t := l[ind:]
	m := marker{ind: ind}
	k := 0
	switch c := t[0]; {
	case c == '-' || c == '*' || c == '+':
		k = 1
	case isDigit(c):
		for k < len(t) && isDigit(t[k]) {
			k++
		}
		// CommonMark caps ordered markers at 9 digits, which also keeps the
		// number far from overflowing.
		if k > 9 || k == len(t) || (t[k] != '.' && t[k] != ')') {
			return marker{}, false
		}
		for _, d := range []byte(t[:k]) {
			m.num = m.num*10 + int(d-'0')
		}
		m.ordered, m.delim = true, t[k]
		k++
	default:
		return marker{}, false
	}
	rest := t[k:]
	if rest != "" && rest[0] != ' ' {
		return marker{}, false
	}
	sp := indentOf(rest)
	switch {
	case sp == len(rest):
		m.empty, m.content = true, ind+k+1
	case sp > 4:
		// The content starts with indented code; the marker takes one space.
		m.content = ind + k + 1
	default:
		m.content = ind + k + sp
	}
	return m, true
}

// parseList collects the items of the list whose first marker is m.
func parseList(lines []string, m marker, depth int) (block, int) {
	b := block{kind: kindList, ordered: m.ordered, start: m.num, delim: m.delim}
	i := 0
	for {
		content, n, blanks, internal := collectItem(lines[i:], m)
		b.items = append(b.items, parseBlocks(content, depth+1))
		b.loose = b.loose || internal
		i += n
		if i == len(lines) {
			return b, i
		}
		next, ok := listMarker(lines[i])
		if !ok || next.ordered != m.ordered || isRule(lines[i][next.ind:]) {
			return b, i
		}
		b.loose = b.loose || blanks > 0
		m = next
	}
}

// collectItem gathers the content lines of one list item, dedented to its
// content column. Lines indented past the marker that start a list item nest
// even when short of the content column: models often indent sub-lists by
// two spaces under "1. ", and nesting is clearly what they mean. It returns
// the lines consumed (trailing blank lines included), how many of those were
// trailing blanks, and whether a blank line separates the item's blocks.
func collectItem(lines []string, m marker) (content []string, n, blanks int, internal bool) {
	first := ""
	if m.content < len(lines[0]) {
		first = lines[0][m.content:]
	}
	content = append(content, first)
	var lz lazyState
	lz.feed(first)
	sawBlank := false
	for n = 1; n < len(lines); n++ {
		l := lines[n]
		li := indentOf(l)
		switch {
		case li == len(l):
			content = append(content, "")
			lz.feed("")
			sawBlank = sawBlank || !lz.inFence
			blanks++
			continue
		case li >= m.content:
			content = append(content, l[m.content:])
		case lz.inFence && fenceClose(l, lz.ch, lz.n):
			content = append(content, l[li:])
		case !lz.inFence && li > m.ind && isItemStart(l):
			content = append(content, l[li:])
		case !lz.inFence && blanks == 0 && lz.para && !interrupts(l):
			content = append(content, l)
		default:
			return content[:len(content)-blanks], n, blanks, internal
		}
		internal = internal || sawBlank
		sawBlank, blanks = false, 0
		lz.feed(content[len(content)-1])
	}
	return content[:len(content)-blanks], n, blanks, internal
}

// isItemStart reports whether l starts a list item with content; an empty
// item cannot interrupt a paragraph.
func isItemStart(l string) bool {
	m, ok := listMarker(l)
	return ok && !m.empty && !isRule(l[m.ind:])
}
