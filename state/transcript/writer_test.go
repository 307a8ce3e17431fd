package transcript_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"retrace/state/transcript"
	"retrace/state/transcript/inerttest"
)

// What goes through a Writer comes out as Inert makes it, however the
// text is cut into writes: at every byte, inside a character of UTF-8
// too, and one byte at a time.
func TestWriterIsInertAcrossWrites(t *testing.T) {
	texts := []string{"plain\ttext\n", "résumé ✓ 数据 🙂\n", "\xe2\x9c", "end\xf0\x9f"}
	for _, c := range inerttest.Classes {
		texts = append(texts, "<"+c.Text+"> ✓ 数据")
	}
	inertAcrossWrites(t, texts, transcript.Inert, func(b *strings.Builder) flushWriter { return transcript.NewWriter(b) })
}

// A character cut between two writes is held back, not shown as two
// broken halves: the half that came waits for the rest.
func TestWriterHoldsACutCharacter(t *testing.T) {
	var b strings.Builder
	w := transcript.NewWriter(&b)
	w.Write([]byte("a\xe2\x9c"))
	if b.String() != "a" {
		t.Fatalf("after half a character: %q", b.String())
	}
	w.Write([]byte("\x93b"))
	if b.String() != "a✓b" {
		t.Fatalf("after its end: %q", b.String())
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// An error of the writer below is the Writer's error.
func TestWriterReportsErrors(t *testing.T) {
	w := transcript.NewWriter(failingWriter{})
	if n, err := w.Write([]byte("text")); err == nil || n != 0 {
		t.Fatalf("Write = %d, %v; want 0 and the error", n, err)
	}
	w.Write([]byte("\xe2"))
	if err := w.Flush(); err == nil {
		t.Fatal("Flush of a held byte passed over the error")
	}
}

// An export's worth of inert text goes through a Writer without a copy.
func BenchmarkWriterInertText(b *testing.B) {
	text := []byte(strings.Repeat(`{"role": "assistant", "content": "résumé ✓ 数据 and more"},`+"\n", 1<<14))
	w := transcript.NewWriter(io.Discard)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		w.Write(text)
	}
}

// What goes through a JSON Writer comes out as InertJSON makes it, cut
// into writes at every byte, and a byte at a time: an export is written
// in pieces of any length.
func TestJSONWriterIsInertJSONAcrossWrites(t *testing.T) {
	texts := []string{
		"{\n  \"text\": \"plain ✓ 数据 🙂\"\n}\n",
		"{\"del\": \"a\x7fb\", \"c1\": \"\u0085\u009b\", \"bidi\": \"\u202egnp.exe\"}",
		"\"\xe2\x9c\"", "\"end\xf0\x9f",
	}
	inertAcrossWrites(t, texts, func(text string) string { return string(transcript.InertJSON([]byte(text))) },
		func(b *strings.Builder) flushWriter { return transcript.NewJSONWriter(b) })
}

// flushWriter is a Writer or a JSONWriter.
type flushWriter interface {
	Write(p []byte) (int, error)
	Flush() error
}

// inertAcrossWrites checks that each text, written through a writer
// made by newWriter cut in two at every byte and one byte at a time,
// comes out as inert makes it whole.
func inertAcrossWrites(t *testing.T, texts []string, inert func(string) string, newWriter func(*strings.Builder) flushWriter) {
	t.Helper()
	for _, text := range texts {
		want := inert(text)
		for cut := 0; cut <= len(text); cut++ {
			var b strings.Builder
			w := newWriter(&b)
			for _, part := range []string{text[:cut], text[cut:]} {
				if n, err := w.Write([]byte(part)); n != len(part) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", part, n, err)
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if b.String() != want {
				t.Errorf("%q cut at %d: wrote %q, want %q", text, cut, b.String(), want)
			}
		}
		var b strings.Builder
		w := newWriter(&b)
		for i := range len(text) {
			w.Write([]byte{text[i]})
		}
		w.Flush()
		if b.String() != want {
			t.Errorf("%q a byte at a time: wrote %q, want %q", text, b.String(), want)
		}
	}
}
