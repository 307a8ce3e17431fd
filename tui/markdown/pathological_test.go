package markdown

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// pathologicalUnits are pieces of markdown syntax that a naive parser
// handles in quadratic time when one of them is repeated many times.
var pathologicalUnits = []string{
	"[", "![", "[]", "[a](", "<a", "` ``", "*a ", "a* ", "**a ", "*", "_a", "a_", "\\",
	"> ", "- ", "1. ", "  ", "```\n", "- a\n\n", " - x\n", "|", "a\u0301", "\uFE0F ", "中",
}

func repeatTo(unit string, size int) string {
	return strings.Repeat(unit, size/len(unit)) + "x"
}

// TestPathologicalInputs renders 16 KiB of each repeated unit at three
// widths and checks that the output keeps every rule of the renderer. How
// long it takes is BenchmarkPathological's business.
func TestPathologicalInputs(t *testing.T) {
	st := benchStyles()
	for _, unit := range pathologicalUnits {
		src := repeatTo(unit, 16<<10)
		for _, w := range []int{1, 3, 80} {
			if err := checkOutput(src, Render(src, w, st), w); err != nil {
				t.Errorf("%q at width %d: %v", unit, w, err)
			}
		}
	}
}

// BenchmarkPathological renders each unit repeated to 16 and to 32 KiB.
// Linear work doubles from one size to the next; a quadratic regression
// shows as a fourfold step (and takes hundreds of milliseconds, not a few).
//
//	go test ./tui/markdown -run '^$' -bench Pathological
func BenchmarkPathological(b *testing.B) {
	st := benchStyles()
	for _, unit := range pathologicalUnits {
		for _, size := range []int{16 << 10, 32 << 10} {
			src := repeatTo(unit, size)
			b.Run(fmt.Sprintf("%q/%dKiB", unit, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(src)))
				for b.Loop() {
					Render(src, 80, st)
				}
			})
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
