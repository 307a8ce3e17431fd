package boltstore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"retrace/storage"
)

// lockAs takes the lock file name of the database at path, as another
// retrace in a transaction holds it (shared: reading; exclusive: writing),
// and returns its release.
func lockAs(t *testing.T, path, name string, how int) func() {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(lockDir(path), name), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		t.Fatal(err)
	}
	return func() { f.Close() }
}

// Readers share the database lock, writers take it alone; and a Store's
// first operation (which may migrate the file) takes it alone even to read.
func TestReadersShareTheLockWritersDoNot(t *testing.T) {
	ctx := context.Background()
	path, id := healthy(t, 2)
	const wait = 20 * time.Millisecond
	warm, err := Open(path, Options{LockTimeout: wait}) // its first operation is done
	if err != nil {
		t.Fatal(err)
	}
	defer warm.Close()

	release := lockAs(t, path, "db", syscall.LOCK_SH) // another process reading
	defer release()
	if _, err := warm.Head(ctx, id); err != nil {
		t.Fatalf("a read while another process reads: %v", err)
	}
	if _, err := warm.Sessions(ctx); err != nil {
		t.Fatalf("a listing while another process reads: %v", err)
	}
	if err := warm.SetHead(ctx, id, 1); !errors.Is(err, storage.ErrLocked) {
		t.Fatalf("a write while another process reads: %v", err)
	}
	if _, err := Open(path, Options{LockTimeout: wait}); !errors.Is(err, storage.ErrLocked) {
		t.Fatalf("a new store's first read while another process reads: %v", err)
	}
	release()
	if err := warm.SetHead(ctx, id, 1); err != nil {
		t.Fatalf("a write once the reader is done: %v", err)
	}
}

// waitQueued returns once an operation is queued for the database lock:
// it then holds the gate. done reports the operation ending first.
func waitQueued(t *testing.T, path string, done <-chan error) {
	t.Helper()
	gate, err := os.OpenFile(filepath.Join(lockDir(path), gateLockName), os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer gate.Close()
	for {
		select {
		case err := <-done:
			t.Fatalf("the operation did not wait for the lock: %v", err)
		default:
		}
		err := syscall.Flock(int(gate.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		_ = syscall.Flock(int(gate.Fd()), syscall.LOCK_UN)
		runtime.Gosched()
	}
}

// With the zero Options, an operation waits for a busy file (1.5 s)
// rather than giving up at once; and its context ends the wait.
func TestAnOperationWaitsForTheLock(t *testing.T) {
	path, id := healthy(t, 1)
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	release := lockAs(t, path, "db", syscall.LOCK_EX)
	done := make(chan error, 1)
	go func() { _, err := st.Head(context.Background(), id); done <- err }()
	waitQueued(t, path, done)
	// The other process's transaction goes on a little longer: 50 ms, far
	// inside the 1.5 s a store waits (the zero timeout would wait 1 ms).
	time.Sleep(50 * time.Millisecond)
	release()
	if err := <-done; err != nil {
		t.Fatalf("the read, once the file was free: %v", err)
	}

	patient, err := Open(path, Options{LockTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer patient.Close()
	release = lockAs(t, path, "db", syscall.LOCK_EX)
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _, err := patient.Head(ctx, id); done <- err }()
	waitQueued(t, path, done)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("a canceled wait: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("a canceled operation still waits for the lock")
	}
}

// When the lock directory cannot be made beside the database (here a file
// has its name), readers go on without the lock and writers refuse,
// saying why.
func TestNoLockDirectory(t *testing.T) {
	ctx := context.Background()
	path, id := healthy(t, 2)
	if err := os.RemoveAll(lockDir(path)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lockDir(path), []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("open to read: %v", err)
	}
	defer st.Close()
	if s, err := st.Head(ctx, id); err != nil || s.Version != 2 {
		t.Fatalf("a read: v%d, %v", s.Version, err)
	}
	err = st.Rename(ctx, id, "x")
	if err == nil || !strings.HasPrefix(err.Error(), "cannot write beside the database "+path+": ") {
		t.Fatalf("a write: %v", err)
	}
	after, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(before, after) {
		t.Fatalf("the file changed (%v)", err)
	}
}
