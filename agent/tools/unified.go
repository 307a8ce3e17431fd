package tools

import (
	"fmt"
	"strings"
)

// formatUnified writes ops as a unified diff, grouping changes closer than
// 2·diffContext unchanged lines into one hunk as diff -u does.
func formatUnified(oldName, newName string, ops []diffOp) string {
	// posA[i] and posB[i] count the old and new lines before ops[i].
	posA, posB := make([]int, len(ops)+1), make([]int, len(ops)+1)
	for i, op := range ops {
		posA[i+1], posB[i+1] = posA[i], posB[i]
		if op.kind != opInsert {
			posA[i+1]++
		}
		if op.kind != opDelete {
			posB[i+1]++
		}
	}
	var sb strings.Builder
	for i := 0; i < len(ops); {
		first := nextChange(ops, i)
		if first < 0 {
			break
		}
		last := first
		for j := first; j < len(ops) && j-last <= 2*diffContext+1; j++ {
			if ops[j].kind != opEqual {
				last = j
			}
		}
		start, end := max(first-diffContext, 0), min(last+1+diffContext, len(ops))
		if sb.Len() == 0 {
			fmt.Fprintf(&sb, "--- %s\n+++ %s\n", oldName, newName)
		}
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n",
			hunkRange(posA[start], posA[end]-posA[start]), hunkRange(posB[start], posB[end]-posB[start]))
		for _, op := range ops[start:end] {
			sb.WriteByte(op.kind)
			sb.WriteString(op.line)
			if !strings.HasSuffix(op.line, "\n") {
				sb.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return sb.String()
}

// nextChange is the index of the first changed line at or after i, or -1.
func nextChange(ops []diffOp, i int) int {
	for ; i < len(ops); i++ {
		if ops[i].kind != opEqual {
			return i
		}
	}
	return -1
}

// hunkRange is one side of a hunk header, spelt as diff -u spells it: an
// empty side names the line before the hunk ("-0,0" for a new file), and a
// count of one is left out.
func hunkRange(before, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", before)
	case 1:
		return fmt.Sprintf("%d", before+1)
	}
	return fmt.Sprintf("%d,%d", before+1, count)
}
