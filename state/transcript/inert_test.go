package transcript_test

import (
	"testing"

	"retrace/state/transcript"
)

// Each class Inert's documentation names, at its edges and just outside
// them, alone and after text that is not ASCII: C0 controls but newline
// and tab in caret notation, DEL as ^?, C1 controls and the bidi controls
// as <U+XXXX>, bytes that are not UTF-8 as U+FFFD; everything else as it
// is.
func TestInertEdges(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"\x00", "^@"}, {"\x1b", "^["}, {"\x1f", "^_"}, {" ", " "}, {"~", "~"},
		{"\n\t", "\n\t"}, {"\r", "^M"},
		{"\x7f", "^?"}, {"é\x7f", "é^?"},
		{"\xff", "\uFFFD"}, {"\xff\xfe", "\uFFFD\uFFFD"}, {"a\x80b", "a\uFFFDb"}, {"é\xc3", "é\uFFFD"},
		{"\uFFFD", "\uFFFD"},
		{"\u0080", "<U+0080>"}, {"\u009f", "<U+009F>"}, {"\u00a0", "\u00a0"}, {"é\u0085", "é<U+0085>"},
		{"\u2029", "\u2029"}, {"\u202a", "<U+202A>"}, {"\u202e", "<U+202E>"}, {"\u202f", "\u202f"},
		{"\u2065", "\u2065"}, {"\u2066", "<U+2066>"}, {"\u2069", "<U+2069>"}, {"\u206a", "\u206a"},
		{"\u200d", "\u200d"}, {"\u200e", "<U+200E>"}, {"\u200f", "<U+200F>"}, {"\u2010", "\u2010"},
		{"\u061b", "\u061b"}, {"\u061c", "<U+061C>"}, {"\u061d", "\u061d"},
		{"✓\x1b[2J", "✓^[[2J"}, {"数据\u202eevil", "数据<U+202E>evil"}, {"🙂\x07", "🙂^G"},
		{"résumé ✓ 数据 🙂\n\tok", "résumé ✓ 数据 🙂\n\tok"},
	} {
		got := transcript.Inert(c.in)
		if got != c.want {
			t.Errorf("Inert(%q) = %q, want %q", c.in, got, c.want)
		}
		if again := transcript.Inert(got); again != got {
			t.Errorf("Inert is not idempotent on %q: %q", got, again)
		}
	}
}

// InertJSON at the edges of what it escapes: DEL but not the ASCII before
// it, C1 and bidi controls at the ends of their ranges, a byte that is not
// UTF-8 but not the replacement character itself, and short inputs.
func TestInertJSONEdges(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"\x7f", `\u007f`}, {"~", "~"}, {`"~\u007f"`, `"~\u007f"`},
		{"\u0080", `\u0080`}, {"\u009f", `\u009f`}, {"\u00a0", "\u00a0"},
		{"\u202a\u202e\u2066\u2069", `\u202a\u202e\u2066\u2069`}, {"\u2029\u202f\u2065\u206a", "\u2029\u202f\u2065\u206a"},
		{"\xff", `\ufffd`}, {"\x9b", `\ufffd`}, {"\uFFFD", "\uFFFD"}, {"\uFFFD\x7f", "\uFFFD" + `\u007f`},
		{"é\x7f数据", "é" + `\u007f` + "数据"}, {`{"a":"ok"}`, `{"a":"ok"}`},
	} {
		if got := string(transcript.InertJSON([]byte(c.in))); got != c.want {
			t.Errorf("InertJSON(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
