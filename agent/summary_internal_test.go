package agent

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"retrace/state"
)

// The fair share of each case worked out by hand: the sizes sorted, each
// kept whole while the rest can still have as much, then what is left
// shared equally.
func TestFairShare(t *testing.T) {
	for _, c := range []struct {
		sizes       []int
		room, share int
	}{
		{[]int{18, 108, 208}, 150, 66}, // 18 whole, (150-18)/2 each for the others
		{[]int{208, 18, 108}, 150, 66}, // the order given does not matter
		{[]int{10, 20, 30}, 60, 60},    // everything fits exactly: room
		{[]int{10, 20, 30}, 59, 29},    // 10 and 20 whole, 29 for the last
		{[]int{50, 50}, 60, 30},
		{[]int{100}, 40, 40},
		{nil, 10, 10},
	} {
		if got := fairShare(c.sizes, c.room); got != c.share {
			t.Errorf("fairShare(%v, %d) = %d, want %d", c.sizes, c.room, got, c.share)
		}
	}
}

// A fold takes as many turns as fit its room together, and always the
// first, however large.
func TestFoldSize(t *testing.T) {
	for _, c := range []struct {
		costs   []int
		room, k int
	}{
		{[]int{5}, 1, 1},
		{[]int{20, 1}, 10, 1},
		{[]int{5, 5, 5}, 9, 1},
		{[]int{5, 5, 5}, 10, 2}, // exactly full
		{[]int{5, 5, 5}, 14, 2},
		{[]int{5, 5, 5}, 100, 3},
	} {
		if got := foldSize(c.costs, c.room); got != c.k {
			t.Errorf("foldSize(%v, %d) = %d, want %d", c.costs, c.room, got, c.k)
		}
	}
}

// A turn costs its messages' counts and entrySlack (8) each; the system
// prompt costs nothing, since it is never folded.
func TestFoldCost(t *testing.T) {
	ms := []state.Message{{Role: state.RoleSystem}, {Role: state.RoleUser}, {Role: state.RoleAssistant}, {Role: state.RoleTool}}
	if got := foldCost(ms, []int{99, 5, 7, 1}); got != 5+8+7+8+1+8 {
		t.Fatalf("cost %d, want 37", got)
	}
}

// runes counts a rune as a token; dense counts an é as two, the way a
// tokenizer's count can crowd at the start of a text.
func runes(s string) int { return utf8.RuneCountInString(s) }

func dense(s string) int { return runes(s) + strings.Count(s, "é") }

// What clip keeps of each text, worked out by hand. With 1 token a rune,
// entrySlack 8 and clipMark " […]" 4: a text of n runes has size n+8, and
// one cut to a share s keeps n*(s-12)/n = s-12 runes, then the mark.
func TestClip(t *testing.T) {
	a, b, c := strings.Repeat("a", 10), strings.Repeat("b", 100), strings.Repeat("c", 200)
	for _, tc := range []struct {
		name  string
		texts []string
		room  int
		count func(string) int
		want  []string
	}{
		{"all fit", []string{a, b}, 200, runes, []string{a, b}},
		// Sizes 18, 108, 208 in 150: share 66; 54 runes kept of b and c,
		// and the total is 18+66+66, exactly the room.
		{"in proportion", []string{a, b, c}, 150, runes, []string{a, b[:54] + clipMark, c[:54] + clipMark}},
		// Sizes 66 and 208 in 132: share 66, so the first is within it
		// and whole, and the second keeps 54.
		{"a text exactly at its share", []string{b[:58], c}, 132, runes, []string{b[:58], c[:54] + clipMark}},
		// 50 é then 50 a: 150 tokens, size 158, in 100. Share 100 keeps
		// 100*88/150 = 58 runes, 50 é and 8 a: 112+8, over. Share 90
		// keeps 52 (114), 81 keeps 46 (104), 72 keeps 40 é: 80+4+8 = 92.
		{"tokens crowd at the start", []string{strings.Repeat("é", 50) + strings.Repeat("a", 50)}, 100, dense,
			[]string{strings.Repeat("é", 40) + clipMark}},
		// Nothing fits: the mark alone is 12 with its slack.
		{"no room", []string{"abc"}, 5, runes, []string{clipMark}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := clip(tc.texts, tc.room, tc.count)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("clip kept %q\nwant %q", got, tc.want)
			}
		})
	}
}
