package markdown

// emphasis pairs the delimiter runs with CommonMark's "process emphasis"
// algorithm: for each closer, left to right, the nearest compatible opener
// below it. Pairing marks every span in between bold (two characters) or
// italic (one); leftover characters stay as text. The openers-bottom floors
// keep the search linear on inputs full of unmatched runs.
func (p *inlineParser) emphasis() {
	ds := p.ds
	if len(ds) == 0 {
		return
	}
	for k := range ds {
		ds[k].prev, ds[k].next = k-1, k+1
	}
	ds[len(ds)-1].next = -1
	// floors[char][closer length mod 3][closer can open] is the run below
	// which no opener for such a closer exists.
	var floors [2][3][2]int
	for a := range floors {
		for b := range floors[a] {
			floors[a][b] = [2]int{-1, -1}
		}
	}
	for c := 0; c >= 0; {
		cl := &ds[c]
		if !cl.close {
			c = cl.next
			continue
		}
		floor := &floors[b2i(cl.ch == '_')][cl.orig%3][b2i(cl.open)]
		o := p.opener(c, *floor)
		if o < 0 {
			*floor = cl.prev
			next := cl.next
			if !cl.open {
				p.unlink(c)
			}
			c = next
			continue
		}
		if p.pair(o, c) {
			c = cl.next
		}
	}
}

// opener returns the nearest run below closer c, above floor, that can
// open emphasis closed by c, or -1.
func (p *inlineParser) opener(c, floor int) int {
	cl := &p.ds[c]
	for o := cl.prev; o >= 0 && o > floor; o = p.ds[o].prev {
		op := &p.ds[o]
		if op.ch != cl.ch || !op.open {
			continue
		}
		// The "rule of 3": a run that can both open and close pairs only
		// with one whose length does not make a multiple of three.
		if (op.close || cl.open) && (op.orig+cl.orig)%3 == 0 && (op.orig%3 != 0 || cl.orig%3 != 0) {
			continue
		}
		return o
	}
	return -1
}

// pair matches opener o with closer c and reports whether the closer is
// used up (unlinked), so the caller moves on to the next closer.
func (p *inlineParser) pair(o, c int) bool {
	op, cl := &p.ds[o], &p.ds[c]
	use, bit := 1, stItalic
	if op.n >= 2 && cl.n >= 2 {
		use, bit = 2, stBold
	}
	for k := op.node + 1; k < cl.node; k++ {
		p.nodes[k].st |= bit
	}
	op.n -= use
	cl.n -= use
	// Runs between the pair can no longer match anything.
	op.next, cl.prev = c, o
	if op.n == 0 {
		p.unlink(o)
	}
	if cl.n == 0 {
		p.unlink(c)
		return true
	}
	return false
}

// unlink drops run k from the list; its prev and next stay valid for a
// caller still positioned on it.
func (p *inlineParser) unlink(k int) {
	d := &p.ds[k]
	if d.prev >= 0 {
		p.ds[d.prev].next = d.next
	}
	if d.next >= 0 {
		p.ds[d.next].prev = d.prev
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
