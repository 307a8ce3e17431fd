package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// Read through untilDone, standard input is what it was, whatever the
// sizes of the reads; a read that blocks ends when the context does.
func TestUntilDone(t *testing.T) {
	text := strings.Repeat("a prompt of some length\n", 10000)
	for _, r := range []io.Reader{strings.NewReader(text), iotest.OneByteReader(strings.NewReader(text)), iotest.HalfReader(strings.NewReader(text))} {
		got, err := io.ReadAll(untilDone(context.Background(), r))
		if err != nil || string(got) != text {
			t.Fatalf("read %d of %d bytes: %v", len(got), len(text), err)
		}
	}
	if err := iotest.TestReader(untilDone(context.Background(), strings.NewReader(text)), []byte(text)); err != nil {
		t.Fatal(err)
	}

	blocked, w := io.Pipe()
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if n, err := untilDone(ctx, blocked).Read(make([]byte, 10)); n != 0 || !errors.Is(err, errReadInterrupted) {
		t.Fatalf("a blocked read after the context ended: %d, %v", n, err)
	}
}
