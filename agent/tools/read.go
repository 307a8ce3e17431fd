package tools

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"

	"retrace/state/transcript"
)

// sniffBytes is how much of a file is checked for NUL bytes to call it
// binary, as git and grep do.
const sniffBytes = 8 << 10

// readArgs are read_file's arguments.
type readArgs struct {
	Path      string `json:"path"`
	StartLine *int   `json:"start_line"`
	EndLine   *int   `json:"end_line"`
}

// lineRange checks the requested lines and fills in the defaults.
func (a *readArgs) lineRange() (start, end int, err error) {
	start, end = 1, math.MaxInt
	if a.StartLine != nil {
		start = *a.StartLine
	}
	if a.EndLine != nil {
		end = *a.EndLine
	}
	switch {
	case start < 1:
		return 0, 0, fmt.Errorf("start_line must be at least 1 (lines are numbered from 1), got %d", start)
	case end < start:
		return 0, 0, fmt.Errorf("end_line %d is before start_line %d", end, start)
	}
	return start, end, nil
}

// readFile is read_file: the text of a file, or of a range of its lines,
// up to MaxReadBytes.
func (r *Registry) readFile(ctx context.Context, a *readArgs) (string, error) {
	start, end, err := a.lineRange()
	if err != nil {
		return "", invalidArgs("read_file", err)
	}
	abs, err := r.ws.Resolve(a.Path)
	if err != nil {
		return "", err
	}
	f, info, err := r.ws.openRegular(abs, a.Path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	if isBinary(br) {
		return fmt.Sprintf("binary file, %d bytes; not shown", info.Size()), nil
	}
	res, err := readRange(ctx, br, start, end, r.opts.MaxReadBytes)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", a.Path, err)
	}
	if res.total == 0 {
		return "[empty file]", nil
	}
	if start > res.total {
		return "", fmt.Errorf("start_line %d is past the end of %s, which has %s", start, a.Path, transcript.Count(res.total, "line"))
	}
	out := validUTF8(res.text)
	limit := sizeString(r.opts.MaxReadBytes)
	switch {
	case res.partial:
		out = ensureNewline(out) + fmt.Sprintf("[truncated: line %d is longer than the %s cap; showed its start only]", res.last, limit)
	case res.truncated:
		out = ensureNewline(out) + fmt.Sprintf("[truncated: showed lines %d-%d of %d (%s cap); ask for a line range]", start, res.last, res.total, limit)
	}
	return out, nil
}

// isBinary reports whether the start of br holds a NUL byte.
func isBinary(br *bufio.Reader) bool {
	head, _ := br.Peek(sniffBytes)
	return bytes.IndexByte(head, 0) >= 0
}

// rangeResult is what readRange found.
type rangeResult struct {
	text      []byte
	last      int  // the last line in text
	total     int  // lines in the file
	truncated bool // the cap stopped the range before its end
	partial   bool // the first line alone passed the cap and was cut
}

// readRange reads lines start to end (1-based, inclusive) from br, whole
// lines up to maxBytes in all, and counts every line of the file so a
// truncated result can say how far there is to go. Only a first line
// longer than maxBytes is cut, since the model could not otherwise see
// any of it.
func readRange(ctx context.Context, br *bufio.Reader, start, end, maxBytes int) (rangeResult, error) {
	lr := lineReader{br: br, max: maxBytes}
	res := rangeResult{last: start - 1}
	for n := 1; ; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return res, ctx.Err()
		}
		line, size, err := lr.next()
		if err == io.EOF {
			res.total = n - 1
			return res, nil
		}
		if err != nil {
			return res, err
		}
		if n < start || n > end || res.truncated {
			continue
		}
		room := maxBytes - len(res.text)
		switch {
		case size <= room:
			res.text = append(res.text, line...)
			res.last = n
		case res.last < start:
			// The line reader kept only maxBytes of the line, which may
			// end inside a rune: drop the piece rather than show U+FFFD.
			res.text = append(res.text, dropPartialRune(cutUTF8(line, room))...)
			res.last, res.truncated, res.partial = n, true, true
		default:
			res.truncated = true
		}
	}
}

// lineReader reads lines of any length while keeping at most max bytes of
// each, so one enormous line (minified code, a log without newlines) costs
// no more memory than the cap.
type lineReader struct {
	br  *bufio.Reader
	max int
	buf []byte
}

// next returns the next line with its newline, cut to max bytes, and the
// line's full size. The slice is reused by the following call. At the end
// of the input it returns io.EOF.
func (lr *lineReader) next() ([]byte, int, error) {
	lr.buf = lr.buf[:0]
	size := 0
	for {
		chunk, err := lr.br.ReadSlice('\n')
		size += len(chunk)
		if room := lr.max - len(lr.buf); room > 0 {
			lr.buf = append(lr.buf, chunk[:min(room, len(chunk))]...)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && size > 0:
			return lr.buf, size, nil
		case err != nil:
			return nil, 0, err
		}
		return lr.buf, size, nil
	}
}
