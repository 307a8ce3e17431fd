package main

import (
	"context"
	"errors"
	"io"
)

// errReadInterrupted ends a read of standard input that a signal cut off.
var errReadInterrupted = errors.New("interrupted")

// maxStdinRead bounds one read of standard input, and so the buffer
// untilDone keeps: io.ReadAll asks for ever larger reads.
const maxStdinRead = 64 << 10

// untilDone is r whose reads end, with errReadInterrupted, when ctx does.
// A read of a pipe or a terminal blocks in the kernel where no context
// reaches: `retrace run -` waiting for its prompt would otherwise sit out
// a SIGTERM until shutdownGrace. The read under way is left to its
// goroutine, which the process's exit ends.
func untilDone(ctx context.Context, r io.Reader) io.Reader {
	return &ctxReader{ctx: ctx, r: r}
}

type ctxReader struct {
	ctx     context.Context
	r       io.Reader
	buf     []byte
	left    []byte // read into buf and not yet returned
	err     error  // the read's error, returned once left is
	pending chan readResult
}

type readResult struct {
	n   int
	err error
}

func (cr *ctxReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if len(cr.left) > 0 {
		n := copy(p, cr.left)
		cr.left = cr.left[n:]
		return n, nil
	}
	if cr.err != nil {
		return 0, cr.err
	}
	if cr.pending == nil {
		if cr.buf == nil {
			cr.buf = make([]byte, maxStdinRead)
		}
		ch := make(chan readResult, 1)
		go func(buf []byte) {
			n, err := cr.r.Read(buf)
			ch <- readResult{n, err}
		}(cr.buf[:min(len(p), len(cr.buf))])
		cr.pending = ch
	}
	select {
	case res := <-cr.pending:
		cr.pending = nil
		n := copy(p, cr.buf[:res.n])
		cr.left, cr.err = cr.buf[n:res.n], res.err
		if len(cr.left) == 0 {
			cr.err = nil
			return n, res.err
		}
		return n, nil
	case <-cr.ctx.Done():
		return 0, errReadInterrupted
	}
}
