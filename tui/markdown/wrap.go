package markdown

import "strings"

// piece is part of a word: text in one style.
type piece struct {
	text string
	sgr  string
}

// flow renders inline source as a word-wrapped paragraph on base b. Words
// are measured as plain text and styled as they are written, so wrapping
// never has to see an escape sequence. Spaces at a line break are dropped;
// a word wider than the line is hard-wrapped.
func (r *renderer) flow(text string, b base) {
	r.spans = parseInline(text, 0, r.spans[:0])
	w := r.avail
	r.word = r.word[:0]
	r.sp, r.spW = piece{}, 0
	for _, s := range r.spans {
		sgr := r.pal.sgrFor(b, s.st)
		for t := s.text; t != ""; {
			j := breakAt(t)
			if j > 0 {
				r.word = append(r.word, piece{text: t[:j], sgr: sgr})
			}
			if j == len(t) {
				break
			}
			r.placeWord(w)
			if t[j] == '\n' {
				if !r.inLine {
					r.startLine()
				}
				r.endLine()
				r.sp, r.spW = piece{}, 0
				t = t[j+1:]
				continue
			}
			k := spaceRunEnd(t, j)
			if r.spW == 0 {
				r.sp, r.spW = piece{text: t[j:k], sgr: sgr}, k-j
			}
			t = t[k:]
		}
	}
	r.placeWord(w)
	r.endLine()
}

// placeWord writes the assembled word after the owed space, or on a new
// line when it does not fit.
func (r *renderer) placeWord(w int) {
	if len(r.word) == 0 {
		return
	}
	ww := r.wordWidth()
	if r.inLine && r.lineW > 0 {
		if r.lineW+r.spW+ww <= w {
			if r.spW > 0 {
				r.put(r.sp.text, r.sp.sgr, r.spW)
			}
			r.putWord(ww)
			r.word, r.sp, r.spW = r.word[:0], piece{}, 0
			return
		}
		r.endLine()
	}
	if !r.inLine {
		r.startLine()
	}
	if r.lineW+ww <= w {
		r.putWord(ww)
	} else {
		r.hard(w, 0)
	}
	r.word, r.sp, r.spW = r.word[:0], piece{}, 0
}

// putWord writes the word's pieces; ww is its width from wordWidth.
func (r *renderer) putWord(ww int) {
	for _, p := range r.word {
		r.put(p.text, p.sgr, 0)
	}
	r.lineW += ww
}

// wordWidth measures the word as the terminal will see it: pieces of the
// same style are written back to back and measured together (they may form
// one grapheme cluster); a style change puts an escape sequence between
// pieces, which ends any cluster.
func (r *renderer) wordWidth() int {
	ws := r.word
	if len(ws) == 1 {
		return measure(ws[0].text)
	}
	total := 0
	for k := 0; k < len(ws); {
		j := k + 1
		for j < len(ws) && ws[j].sgr == ws[k].sgr {
			j++
		}
		if j == k+1 {
			total += measure(ws[k].text)
		} else {
			var b strings.Builder
			for _, p := range ws[k:j] {
				b.WriteString(p.text)
			}
			total += measure(b.String())
		}
		k = j
	}
	return total
}

// hard writes the word cluster by cluster, breaking lines at w cells and
// padding full lines to pad. A cluster wider than the whole line (a wide
// character at width 1) cannot be shown within the contract and becomes "?".
func (r *renderer) hard(w, pad int) {
	ws := r.word
	text := ws[0].text
	if len(ws) > 1 {
		var b strings.Builder
		for _, p := range ws {
			b.WriteString(p.text)
		}
		text = b.String()
	}
	if !r.inLine {
		r.startLine()
	}
	pi, bound := 0, len(ws[0].text)
	for pos := 0; pos < len(text); {
		c, cw := cluster(text[pos:])
		for pos >= bound {
			pi++
			bound += len(ws[pi].text)
		}
		sgr := ws[pi].sgr
		if r.lineW > 0 && r.lineW+cw > w {
			r.padTo(pad, sgr)
			r.endLine()
			r.startLine()
		}
		pos += len(c)
		if cw > w {
			c, cw = "?", 1
		}
		r.put(c, sgr, cw)
	}
}
