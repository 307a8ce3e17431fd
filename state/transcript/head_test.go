package transcript_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"retrace/state/transcript"
)

func TestHead(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 3, "abc"}, // its own length: whole
		{"abc", 2, "ab"},
		{"abc", 0, ""},
		{"abc", -1, ""},
		{"aé", 2, "a"},          // inside a two-byte character: before it
		{"\x80\x80\x80", 2, ""}, // continuation bytes only: nothing
	} {
		if got := transcript.Head(c.s, c.n); got != c.want {
			t.Errorf("Head(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
	long := strings.Repeat("é", 100)
	if got := transcript.Head(long, 51); !utf8.ValidString(got) || len(got) != 50 {
		t.Errorf("Head of 200 bytes of é at 51: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
	if got := transcript.Shorten("abcdef", 3); got != "abc…" {
		t.Errorf("Shorten cut: %q", got)
	}
	if got := transcript.Shorten("abc", 3); got != "abc" {
		t.Errorf("Shorten of a text that fits: %q", got)
	}
}
