package snapshot

import (
	"context"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// hangLimit is how long a call may take before the test calls it hung. It
// bounds a wait that would otherwise never end; it says nothing of speed.
const hangLimit = 20 * time.Second

// noHang runs fn and fails the test if it has not returned within
// hangLimit. release then frees fn, so no goroutine is left behind.
func noHang(t *testing.T, what string, release func(), fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(hangLimit):
		release()
		<-done
		t.Fatalf("%s hung on a FIFO", what)
	}
}

// unblock opens each FIFO for writing and closes it again, which releases
// a reader blocked in open on it; its reads then end at once.
func unblock(fifos ...string) func() {
	return func() {
		for _, p := range fifos {
			if f, err := os.OpenFile(p, os.O_RDWR|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
		}
	}
}

// A FIFO found where an lstat saw a regular file is refused at once: the
// open does not wait for a writer that never comes.
func TestReadFileDoesNotWaitOnAFIFO(t *testing.T) {
	f := newFixture(t, Options{})
	if err := syscall.Mkfifo(f.path("f"), 0o644); err != nil {
		t.Fatal(err)
	}
	info, err := os.Lstat(f.path("f"))
	if err != nil {
		t.Fatal(err)
	}
	st := stampOf(info)
	st.mode = 0o644 // what the lstat saw a moment before: a regular file
	var reason string
	noHang(t, "readFile", unblock(f.path("f")), func() {
		_, _, reason, err = f.w.readFile("f", st)
	})
	if err != nil || reason != reasonReplaced {
		t.Fatalf("readFile of a FIFO: reason %q, err %v; want %q", reason, err, reasonReplaced)
	}
}

// A .gitignore that is a FIFO is passed over, also when it became one
// after the directory was listed.
func TestGitignoreFIFOIsPassedOver(t *testing.T) {
	f := newFixture(t, Options{})
	if err := syscall.Mkfifo(f.path(".gitignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	var data []byte
	noHang(t, "reading .gitignore", unblock(f.path(".gitignore")), func() {
		data = f.w.readIgnoreFile(".gitignore")
	})
	if data != nil {
		t.Fatalf("read %q from a FIFO", data)
	}
}

// A background process that keeps swapping a file and a FIFO (renameat2
// RENAME_EXCHANGE, so each name always exists) cannot hang a scan or an
// Image: every open of a workspace file is non-blocking and checked.
func TestScansSurviveFIFOSwaps(t *testing.T) {
	f := newFixture(t, Options{})
	f.write("file.txt", "text\n")
	f.write(".gitignore", "*.log\n")
	for _, p := range []string{"fifo", "fifo2"} {
		if err := syscall.Mkfifo(f.path(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = unix.Renameat2(unix.AT_FDCWD, f.path("file.txt"), unix.AT_FDCWD, f.path("fifo"), unix.RENAME_EXCHANGE)
			_ = unix.Renameat2(unix.AT_FDCWD, f.path(".gitignore"), unix.AT_FDCWD, f.path("fifo2"), unix.RENAME_EXCHANGE)
		}
	})
	var once sync.Once
	halt := func() { once.Do(func() { close(stop); wg.Wait() }) }
	defer halt()
	release := func() {
		halt()
		unblock(f.path("file.txt"), f.path("fifo"), f.path(".gitignore"), f.path("fifo2"))()
	}
	noHang(t, "scans", release, func() {
		for range 300 {
			m, err := f.w.Mark(context.Background())
			if err != nil {
				t.Errorf("Mark: %v", err)
				return
			}
			if _, _, err := f.w.Changes(context.Background(), m); err != nil {
				t.Errorf("Changes: %v", err)
				return
			}
			for _, p := range []string{"file.txt", "fifo", ".gitignore"} {
				if _, _, err := f.w.Image(p); err != nil {
					t.Errorf("Image(%s): %v", p, err)
					return
				}
			}
		}
	})
}
