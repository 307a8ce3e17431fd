package tools

import (
	"fmt"
	"slices"
	"strings"
)

const (
	// diffContext is the unchanged lines shown around each change.
	diffContext = 3
	// maxDiffLines is the longest file (before or after) that is diffed
	// at all; past it the preview says so instead of spending the time.
	maxDiffLines = 20000
	// maxDiffEdits bounds the search for the shortest edit script: Myers
	// costs O((N+M)·D) time and, keeping its trace, O(D²) memory. Past it
	// the changed middle is shown as all removed and all added: correct,
	// just not minimal.
	maxDiffEdits = 1000
)

// The kinds of a diff line, as unified diffs spell them.
const (
	opEqual  = ' '
	opDelete = '-'
	opInsert = '+'
)

// diffOp is one line of a diff.
type diffOp struct {
	kind byte
	line string // with its newline, if it had one
}

// unifiedDiff is a unified diff of before and after (---/+++ headers,
// @@ hunks with diffContext lines of context), or "" when they are the
// same. oldName is "/dev/null" for a new file, as in git.
func unifiedDiff(oldName, newName, before, after string) string {
	a, b := splitLines(before), splitLines(after)
	if n := max(len(a), len(b)); n > maxDiffLines {
		return fmt.Sprintf("file too large to diff: %d lines", n)
	}
	return formatUnified(oldName, newName, diffLines(a, b))
}

// splitLines splits s after each newline; a last line without one is kept.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// diffLines is the line diff of a and b. The common head and tail are
// taken off first: for an edit they are nearly the whole file, and they
// cost nothing to find.
//
// It is ours rather than github.com/aymanbagabas/go-udiff's, though that
// is in the module graph: go-udiff's search gives up after about 100
// changed lines and then shows unchanged lines as removed and added again
// (60 one-line edits in a 2,000-line file: 696 changed lines shown, not
// 120), and a person approving a write should read only what changes; its
// line splitting also makes it 4 to 5 times slower, with 5 times the
// memory, on a file of maxDiffLines. TestUnifiedDiffIsMinimalPastAHundredChanges
// pins the first; the commit adding this note has the measurements.
func diffLines(a, b []string) []diffOp {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ops := make([]diffOp, 0, len(a)+len(b)-pre-suf)
	for _, l := range a[:pre] {
		ops = append(ops, diffOp{opEqual, l})
	}
	ops = append(ops, diffMiddle(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		ops = append(ops, diffOp{opEqual, l})
	}
	return ops
}

// diffMiddle diffs what lies between the common head and tail.
func diffMiddle(a, b []string) []diffOp {
	ids := map[string]int{}
	intern := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	kinds, ok := myers(intern(a), intern(b), maxDiffEdits)
	if !ok {
		kinds = slices.Repeat([]byte{opDelete}, len(a))
		kinds = append(kinds, slices.Repeat([]byte{opInsert}, len(b))...)
	}
	ops := make([]diffOp, 0, len(kinds))
	x, y := 0, 0
	for _, k := range kinds {
		switch k {
		case opEqual:
			ops = append(ops, diffOp{k, a[x]})
			x, y = x+1, y+1
		case opDelete:
			ops = append(ops, diffOp{k, a[x]})
			x++
		case opInsert:
			ops = append(ops, diffOp{k, b[y]})
			y++
		}
	}
	return ops
}

// myers finds a shortest edit script from a to b (Myers, "An O(ND)
// Difference Algorithm", 1986) as a list of op kinds, or reports false if
// it needs more than maxD insertions and deletions. v[k] is the furthest x
// reached on diagonal k = x-y; trace keeps v after each d for the walk
// back.
func myers(a, b []int, maxD int) ([]byte, bool) {
	n, m := len(a), len(b)
	limit := min(n+m, maxD)
	off := limit + 1
	v := make([]int, 2*off+1)
	var trace [][]int
	for d := 0; d <= limit; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // down: insert b[y]
			} else {
				x = v[off+k-1] + 1 // right: delete a[x]
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				trace = append(trace, slices.Clone(v[off-d:off+d+1]))
				return backtrack(trace, n, m), true
			}
		}
		trace = append(trace, slices.Clone(v[off-d:off+d+1]))
	}
	return nil, false
}

// backtrack walks the trace from (n, m) back to (0, 0), recovering the
// move made at each d and the diagonal run after it.
func backtrack(trace [][]int, n, m int) []byte {
	kinds := make([]byte, 0, n+m)
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		prev := trace[d-1] // diagonals -(d-1)..d-1
		at := func(k int) int { return prev[k+d-1] }
		k := x - y
		pk := k - 1
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		}
		px := at(pk)
		py := px - pk
		for x > px && y > py {
			kinds = append(kinds, opEqual)
			x, y = x-1, y-1
		}
		if x == px {
			kinds = append(kinds, opInsert)
		} else {
			kinds = append(kinds, opDelete)
		}
		x, y = px, py
	}
	for ; x > 0; x-- {
		kinds = append(kinds, opEqual)
	}
	slices.Reverse(kinds)
	return kinds
}
