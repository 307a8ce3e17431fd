package tools

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// lcsLen is the length of a longest common subsequence, by the textbook
// dynamic program: the reference a minimal diff is checked against.
func lcsLen(a, b []string) int {
	prev := make([]int, len(b)+1)
	for i := range a {
		cur := make([]int, len(b)+1)
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev = cur
	}
	return prev[len(b)]
}

// checkOps fails unless ops turn a into b.
func checkOps(t *testing.T, a, b []string, ops []diffOp) (changes int) {
	t.Helper()
	var gotA, gotB []string
	for _, op := range ops {
		if op.kind != opInsert {
			gotA = append(gotA, op.line)
		}
		if op.kind != opDelete {
			gotB = append(gotB, op.line)
		}
		if op.kind != opEqual {
			changes++
		}
	}
	if strings.Join(gotA, "|") != strings.Join(a, "|") || strings.Join(gotB, "|") != strings.Join(b, "|") {
		t.Fatalf("ops %v do not turn %v into %v", ops, a, b)
	}
	return changes
}

func TestDiffLinesIsMinimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := func() []string {
		s := make([]string, rng.IntN(30))
		for i := range s {
			s[i] = string(rune('a' + rng.IntN(4)))
		}
		return s
	}
	for range 2000 {
		a, b := random(), random()
		changes := checkOps(t, a, b, diffLines(a, b))
		if want := len(a) + len(b) - 2*lcsLen(a, b); changes != want {
			t.Fatalf("%v -> %v: %d changes, minimal is %d", a, b, changes, want)
		}
	}
}

func TestDiffFallsBackPastMaxEdits(t *testing.T) {
	a, b := []int{1, 2, 3, 4}, []int{5, 6, 7, 8}
	if _, ok := myers(a, b, 3); ok {
		t.Fatal("found a script longer than maxD")
	}
	if kinds, ok := myers(a, b, 8); !ok || len(kinds) != 8 {
		t.Fatalf("myers = %q, %v", kinds, ok)
	}
	// The search goes up to 1,000 insertions and deletions. "c" then n
	// lines becoming n other lines then "c" needs 2n: minimal up to
	// n = 500; past it every line is removed and added, "c" too (2n+2).
	for _, tc := range []struct{ n, changes int }{{500, 1000}, {501, 1004}} {
		x, y := []string{"c\n"}, []string(nil)
		for i := range tc.n {
			x = append(x, fmt.Sprintf("x%d\n", i))
			y = append(y, fmt.Sprintf("y%d\n", i))
		}
		y = append(y, "c\n")
		if got := checkOps(t, x, y, diffLines(x, y)); got != tc.changes {
			t.Errorf("n = %d: %d changed lines, want %d", tc.n, got, tc.changes)
		}
	}
}

func TestUnifiedDiff(t *testing.T) {
	ten := numbered(10)
	for _, tc := range []struct {
		name, before, after, want string
	}{
		{"same", ten, ten, ""},
		{"new file", "", "a\nb\n", "--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"emptied", "a\n", "", "--- a/f\n+++ b/f\n@@ -1 +0,0 @@\n-a\n"},
		{"one change with context", ten, strings.Replace(ten, "line 5\n", "five\n", 1),
			"--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n line 2\n line 3\n line 4\n-line 5\n+five\n line 6\n line 7\n line 8\n"},
		{"insertion at the top", "a\nb\n", "new\na\nb\n", "--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n+new\n a\n b\n"},
		{"no newline at end", "a\nb", "a\nc", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{"newline added at end", "a", "a\n", "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n"},
		{"changes 6 apart share a hunk", numbered(20), strings.Replace(strings.Replace(numbered(20), "line 5\n", "5\n", 1), "line 12\n", "12\n", 1),
			"--- a/f\n+++ b/f\n@@ -2,14 +2,14 @@\n line 2\n line 3\n line 4\n-line 5\n+5\n line 6\n line 7\n line 8\n line 9\n line 10\n line 11\n-line 12\n+12\n line 13\n line 14\n line 15\n"},
		{"changes 7 apart get two hunks", numbered(20), strings.Replace(strings.Replace(numbered(20), "line 5\n", "5\n", 1), "line 13\n", "13\n", 1),
			"--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n line 2\n line 3\n line 4\n-line 5\n+5\n line 6\n line 7\n line 8\n" +
				"@@ -10,7 +10,7 @@\n line 10\n line 11\n line 12\n-line 13\n+13\n line 14\n line 15\n line 16\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := "a/f"
			if tc.before == "" {
				old = "/dev/null"
			}
			if got := unifiedDiff(old, "b/f", tc.before, tc.after); got != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// A file of up to 20,000 lines (before or after) is diffed; past that the
// preview says so instead.
func TestUnifiedDiffTooLarge(t *testing.T) {
	if got := unifiedDiff("a/f", "b/f", numbered(20001), "x\n"); got != "file too large to diff: 20001 lines" {
		t.Fatalf("got %.200q", got)
	}
	if got := unifiedDiff("a/f", "b/f", "x\n", numbered(20001)); got != "file too large to diff: 20001 lines" {
		t.Fatalf("got %.200q", got)
	}
	got := unifiedDiff("a/f", "b/f", numbered(20000), strings.Replace(numbered(20000), "line 20000\n", "last\n", 1))
	if want := "--- a/f\n+++ b/f\n@@ -19997,4 +19997,4 @@\n line 19997\n line 19998\n line 19999\n-line 20000\n+last\n"; got != want {
		t.Fatalf("got %.200q\nwant %q", got, want)
	}
}

// goSource is a Go-like file of n lines, with the lines real code repeats
// ("}", a blank, "return nil") that make a line diff ambiguous.
func goSource(n int) []string {
	var lines []string
	for i := 0; len(lines) < n; i++ {
		lines = append(lines,
			fmt.Sprintf("// F%d does step %d.\n", i, i),
			fmt.Sprintf("func F%d(x int) error {\n", i),
			"\tif x < 0 {\n",
			"\t\treturn nil\n",
			"\t}\n",
			fmt.Sprintf("\tfmt.Println(x + %d)\n", i),
			"\treturn nil\n",
			"}\n",
			"\n")
	}
	return lines[:n]
}

// scattered is lines with edits of them, evenly spread, changed.
func scattered(lines []string, edits int) string {
	out := slices.Clone(lines)
	step := len(out) / edits
	for i := range edits {
		j := step/2 + i*step
		out[j] = strings.TrimSuffix(out[j], "\n") + " // changed\n"
	}
	return strings.Join(out, "")
}

// changedLines counts the removed and added lines of a unified diff.
func changedLines(diff string) int {
	n := 0
	for l := range strings.Lines(diff) {
		if !strings.HasPrefix(l, "---") && !strings.HasPrefix(l, "+++") && (l[0] == '-' || l[0] == '+') {
			n++
		}
	}
	return n
}

// A model that rewrites a file often changes dozens of scattered lines,
// and the approval preview must show just those: a search that gives up
// early (go-udiff's stops after about 100 changes) shows hundreds of
// unchanged lines as removed and added again.
func TestUnifiedDiffIsMinimalPastAHundredChanges(t *testing.T) {
	src := goSource(2000)
	before := strings.Join(src, "")
	for _, edits := range []int{60, 150, 400} {
		d := unifiedDiff("a/f", "b/f", before, scattered(src, edits))
		if got := changedLines(d); got != 2*edits {
			t.Errorf("%d one-line edits: the diff shows %d changed lines, want %d", edits, got, 2*edits)
		}
	}
}

// BenchmarkUnifiedDiff diffs the previews a model's writes produce: a
// handful of edits, a rewrite of many lines, and one edit in the largest
// file diffed at all.
func BenchmarkUnifiedDiff(b *testing.B) {
	for _, tc := range []struct{ lines, edits int }{{2000, 20}, {2000, 300}, {maxDiffLines, 1}, {maxDiffLines, 20}} {
		src := goSource(tc.lines)
		before, after := strings.Join(src, ""), scattered(src, tc.edits)
		b.Run(fmt.Sprintf("%dlines_%dedits", tc.lines, tc.edits), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				unifiedDiff("a/f", "b/f", before, after)
			}
		})
	}
}
