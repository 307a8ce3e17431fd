package markdown

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// TestPathologicalInputs renders 16 KB of repeated syntax that a naive
// parser handles in quadratic time. Linear work takes a few milliseconds
// here, quadratic work hundreds, so the generous bound does not flake on a
// busy machine but does catch a regression.
func TestPathologicalInputs(t *testing.T) {
	const size = 16 << 10
	st := benchStyles()
	for _, unit := range []string{
		"[", "![", "[]", "[a](", "<a", "` ``", "*a ", "a* ", "**a ", "*", "_a", "a_", "\\",
		"> ", "- ", "1. ", "  ", "```\n", "- a\n\n", " - x\n", "|", "a\u0301", "\uFE0F ", "中",
	} {
		src := strings.Repeat(unit, size/len(unit)) + "x"
		for _, w := range []int{1, 3, 80} {
			start := time.Now()
			out := Render(src, w, st)
			if d := time.Since(start); d > 100*time.Millisecond {
				t.Errorf("%q x %d at width %d took %v", unit, size/len(unit), w, d)
			}
			if err := checkOutput(src, out, w); err != nil {
				t.Errorf("%q at width %d: %v", unit, w, err)
			}
		}
	}
}

func TestDeepNesting(t *testing.T) {
	for _, src := range []string{
		strings.Repeat(">", 100) + " deep",
		strings.Repeat("- ", 100) + "deep",
		func() string {
			var b strings.Builder
			for i := range 60 {
				b.WriteString(strings.Repeat("  ", i) + "- level\n")
			}
			return b.String()
		}(),
	} {
		for _, w := range []int{1, 5, 20, 80} {
			if err := checkOutput(src, Render(src, w, benchStyles()), w); err != nil {
				t.Errorf("width %d: %v", w, err)
			}
		}
	}
}

// TestLinesCloseStyles checks that no line leaves a style open, so the
// caller can slice the output by lines.
func TestLinesCloseStyles(t *testing.T) {
	for _, l := range strings.Split(Render(mixedDoc, 60, benchStyles()), "\n") {
		open := false
		for i := 0; i < len(l); i++ {
			if l[i] != '\x1b' {
				continue
			}
			n := sgrLen(l[i:])
			open = l[i:i+n] != sgrReset
			i += n - 1
		}
		if open {
			t.Fatalf("line leaves a style open: %q", l)
		}
	}
}

func TestConcurrentRender(t *testing.T) {
	want := Render(mixedDoc, 50, benchStyles())
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got := Render(mixedDoc, 50, benchStyles()); got != want {
				t.Error("concurrent Render differs")
			}
		})
	}
	wg.Wait()
}
