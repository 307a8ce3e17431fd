package tools

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The open every file tool reads through (read_file, search_text,
// edit_file, write_file's before) refuses a FIFO at once, as it finds one
// when a FIFO is swapped in for a file after the tool looked: it does not
// wait for a writer that never comes.
func TestOpenRegularNeverWaitsOnAFIFO(t *testing.T) {
	r, root := newTestRegistry(t, Options{}, nil)
	fifo := filepath.Join(root, "a.txt")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		var f *os.File
		if f, _, err = r.ws.openRegular(fifo, "a.txt"); err == nil {
			f.Close()
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second): // a bound on a hang, not a speed
		// A writer that comes and goes releases the open.
		if f, err := os.OpenFile(fifo, os.O_RDWR|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		<-done
		t.Fatal("the open waited on a FIFO")
	}
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("got %v, want a refusal", err)
	}
}
