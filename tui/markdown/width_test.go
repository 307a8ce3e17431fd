package markdown

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// TestSimpleRangesAgreeWithAnsi checks every rune simpleWidth vouches for:
// its width is ansi's, and it forms a cluster of its own next to ASCII and
// next to another simple rune on either side.
func TestSimpleRangesAgreeWithAnsi(t *testing.T) {
	n := 0
	for r := rune(0xA0); r <= 0xFFFF; r++ {
		w := simpleWidth(r)
		if w < 0 {
			continue
		}
		n++
		s := string(r)
		if got := ansi.StringWidth(s); got != w {
			t.Fatalf("%U: simpleWidth %d, ansi %d", r, w, got)
		}
		for _, other := range []string{"a", "中", "é"} {
			if c, _ := ansi.FirstGraphemeCluster(s+other, ansi.GraphemeWidth); c != s {
				t.Fatalf("%U joins the %q after it", r, other)
			}
			if c, _ := ansi.FirstGraphemeCluster(other+s, ansi.GraphemeWidth); c != other {
				t.Fatalf("%U joins the %q before it", r, other)
			}
		}
	}
	if n < 30000 {
		t.Fatalf("only %d simple runes: the fast path is not doing its job", n)
	}
}

func TestMeasureAgreesWithAnsi(t *testing.T) {
	for _, s := range []string{
		"plain", "“quoted” — dash… ‘single’", "中文字符", "한국어 텍스트", "ｆｕｌｌ",
		"e\u0301", "中\u0301", "a\u200db", "👍🏽", "🇺🇸", "☺\uFE0F", "1\uFE0F\u20E3", "ｶﾞ",
		"Ωμέγα Привет", "→ ← ↑ ↓ ✓ ✔ ✅ ★", "└── box ├──", "a\u0300\u0301\u0302",
	} {
		want := ansi.StringWidth(s)
		got := measure(s)
		if r, _ := utf8.DecodeRuneInString(s); r >= utf8.RuneSelf {
			if _, cw := ansi.FirstGraphemeCluster(s, ansi.GraphemeWidth); cw == 0 {
				want++ // measure counts a zero-width start as a cell
			}
		}
		if got != want {
			t.Errorf("measure(%q) = %d, ansi says %d", s, got, want)
		}
		// Cluster by cluster must add up to the same.
		sum := 0
		for rest := s; rest != ""; {
			c, w := cluster(rest)
			sum += w
			rest = rest[len(c):]
		}
		if !strings.ContainsAny(s, "\u0301\u200d\uFE0F\u20E3") && sum != ansi.StringWidth(s) {
			t.Errorf("clusters of %q add up to %d, ansi says %d", s, sum, ansi.StringWidth(s))
		}
	}
}
