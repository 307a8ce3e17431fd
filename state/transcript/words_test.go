package transcript_test

import (
	"testing"

	"retrace/state/transcript"
)

func TestWords(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{transcript.Count(1, "version"), "1 version"},
		{transcript.Count(0, "version"), "0 versions"},
		{transcript.Count(2, "match"), "2 matches"},
		{transcript.Count(2, "push"), "2 pushes"},
		{transcript.Count(3, "pass"), "3 passes"},
		{transcript.Count(4, "box"), "4 boxes"},
		{transcript.Count(4, "directory"), "4 directories"},
		{transcript.Count(2, "day"), "2 days"},
		{transcript.ApproxSize(1023), "1023 bytes"},
		{transcript.ApproxSize(1024), "1.0 KiB"},
		{transcript.ApproxSize(1<<20 - 1), "1024.0 KiB"},
		{transcript.ApproxSize(1 << 20), "1.0 MiB"},
		{transcript.ApproxSize(3 << 19), "1.5 MiB"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	for s, want := range map[string]int{"": 0, "a": 1, "a\n": 1, "a\nb": 2, "\n": 1} {
		if got := transcript.CountLines(s); got != want {
			t.Errorf("CountLines(%q) = %d, want %d", s, got, want)
		}
	}
}
