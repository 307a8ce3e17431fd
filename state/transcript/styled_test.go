package transcript_test

import (
	"regexp"
	"strings"
	"testing"

	"retrace/state/transcript"
	"retrace/state/transcript/inerttest"
)

var sgr = regexp.MustCompile("\x1b\\[[0-9;:]*m")

// InertStyled keeps a program's own SGR styling and shows everything
// else of every class, in place: what is left once the styling is
// stripped is what Inert makes of the text.
func TestInertStyled(t *testing.T) {
	style := func(s string) string { return "\x1b[1;38;2;215;218;224m" + s + "\x1b[m" }
	for _, c := range inerttest.Classes {
		t.Run(c.Name, func(t *testing.T) {
			in := style("<") + c.Text + style(">") + "\x1b[" + c.Text + "\x1b[38:5:1m" + c.Text + "\n"
			got := transcript.InertStyled(in)
			stripped := sgr.ReplaceAllString(got, "")
			if p := inerttest.Problems(stripped, "\n"); len(p) != 0 {
				t.Fatalf("InertStyled(%q) = %q: %v", in, got, p)
			}
			if want := transcript.Inert(sgr.ReplaceAllString(in, "")); stripped != want && c.Name != "CSI SGR" {
				t.Errorf("InertStyled(%q) without its styling = %q, want %q", in, stripped, want)
			}
			for _, keep := range []string{style("<"), style(">"), "\x1b[38:5:1m"} {
				if !strings.Contains(got, keep) {
					t.Errorf("InertStyled(%q) = %q lost the styling %q", in, got, keep)
				}
			}
		})
	}
	if got := transcript.InertStyled("plain"); got != "plain" {
		t.Errorf("plain text: %q", got)
	}
	for _, s := range []string{"\x1b[", "\x1b[31", "\x1b[31;x m", "\x1b[?25l", "\x1b]0;t\x07"} {
		if p := inerttest.Problems(transcript.InertStyled(s), ""); len(p) != 0 {
			t.Errorf("InertStyled(%q) = %q: %v", s, transcript.InertStyled(s), p)
		}
	}
}

// A screen's worth of styled text: 60 lines of 200 cells, a styled span
// every 10 cells, as an interface paints every frame.
func BenchmarkInertStyled(b *testing.B) {
	var s strings.Builder
	for range 60 {
		for range 20 {
			s.WriteString("\x1b[1;38;2;215;218;224mabcdefghij\x1b[m")
		}
		s.WriteString("\n")
	}
	frame := s.String()
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		transcript.InertStyled(frame)
	}
}

// Each SGR sequence is kept whole and exactly, wherever it stands (the
// text's very end included, and every parameter digit), whether the
// text holds nothing else a terminal acts on or also something that is
// shown as text.
func TestInertStyledKeepsEachSGRExactly(t *testing.T) {
	for _, sgr := range []string{"\x1b[m", "\x1b[0m", "\x1b[9m", "\x1b[1;38;2;215;218;224m", "\x1b[38:5:1m"} {
		for _, ctl := range []string{"", "\x1b]0;t\x07", "\x1b[2J", "\x1b[0"} {
			in := ctl + "a" + sgr + "b" + sgr
			want := transcript.Inert(ctl+"a") + sgr + "b" + sgr
			if got := transcript.InertStyled(in); got != want {
				t.Errorf("InertStyled(%q) = %q, want %q", in, got, want)
			}
		}
	}
}

// A control on its own, with no escape before it (BEL, NUL, DEL, a
// backspace, a carriage return, a C1 CSI, a bidi override), is shown as
// Inert shows it, styled text or not: the fast path for styled text
// lets nothing through but SGR, newlines and tabs.
func TestInertStyledShowsEveryLoneControl(t *testing.T) {
	for _, ctl := range []string{"\x07", "\x00", "\x7f", "\x08", "\r", "\u009b", "\u202e"} {
		for _, tail := range []string{"", "\x1b[1mc\x1b[m"} {
			in := "a" + ctl + "b" + tail
			want := transcript.Inert("a"+ctl+"b") + tail
			if got := transcript.InertStyled(in); got != want {
				t.Errorf("InertStyled(%q) = %q, want %q", in, got, want)
			}
		}
	}
}
