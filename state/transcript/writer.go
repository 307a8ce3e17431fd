package transcript

import (
	"io"
	"sync"
	"unicode/utf8"
)

// Writer is the last step before a terminal: everything written to it
// goes on through Inert. A program that prints through one Writer per
// sink (its stdout, its stderr) cannot forget to make a new output
// inert, whatever the code that prints it does or forgets.
//
// Text that is inert already passes unchanged, so printing through a
// Writer what Inert or InertJSON made is exact. A character cut between
// two writes is held back until its end comes; Flush writes what is
// still held. A Writer is safe for concurrent use.
type Writer struct {
	mu      sync.Mutex
	to      io.Writer
	json    bool   // InertJSON, not Inert
	pending []byte // the start of a character whose end has not come yet
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{to: w} }

// NewJSONWriter returns a Writer for JSON text, which it makes inert as
// InertJSON does: what it writes to w is what InertJSON makes of
// everything written to it, however the text is cut between writes.
func NewJSONWriter(w io.Writer) *Writer { return &Writer{to: w, json: true} }

// Write makes p inert and writes it on. It reports len(p) written when
// everything was passed on (or held back whole for the next write).
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	text := p
	if len(w.pending) > 0 {
		text = append(w.pending, p...)
		w.pending = nil
	}
	whole := len(text) - cutTail(text)
	if whole < len(text) {
		w.pending = append([]byte(nil), text[whole:]...)
	}
	if whole == 0 {
		return len(p), nil
	}
	// Text with nothing to show otherwise (an export's JSON, most of
	// everything) goes on as it is, not copied: an export may be large.
	var err error
	switch {
	case w.json:
		_, err = w.to.Write(InertJSON(text[:whole]))
	case inertBytes(text[:whole]):
		_, err = w.to.Write(text[:whole])
	default:
		_, err = io.WriteString(w.to, Inert(string(text[:whole])))
	}
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// inertBytes is isInert for bytes.
func inertBytes(b []byte) bool {
	for i := 0; i < len(b); {
		if c := b[i]; c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r <= 0x1f || r == 0x7f || r == utf8.RuneError || dangerous(r) {
			return false
		}
		i += size
	}
	return true
}

// Flush writes what is held back of a character that never ended, as
// Inert shows bytes that are not UTF-8.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) == 0 {
		return nil
	}
	rest := w.pending
	w.pending = nil
	if w.json {
		_, err := w.to.Write(InertJSON(rest))
		return err
	}
	_, err := io.WriteString(w.to, Inert(string(rest)))
	return err
}

// cutTail is how many bytes at the end of b are the start of a UTF-8
// character that is not complete: 0 to 3. A byte that can start no
// character is not held back: it is not UTF-8 however the text goes on.
func cutTail(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return 0
			}
			return len(b) - i
		}
	}
	return 0
}
