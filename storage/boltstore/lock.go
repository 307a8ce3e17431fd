package boltstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"retrace/storage"
)

// Locks live in a directory beside the database (retrace.db.locks/): one
// file, "db", guards the database file itself, and one file per session
// records which process writes that session ("claims" makes taking one and
// naming its holder a single step; see claimGateName). All are flock(2)
// locks: the kernel drops them the moment their holder exits, however it
// exits, so a crash never leaves a stale lock behind and no one has to
// guess whether a pid is still alive.
//
// Why our own "db" lock rather than bbolt's? bbolt locks the database file
// while it is open and, when that lock is taken, polls every 50 ms. retrace
// opens the file for each transaction (so several processes can share it)
// and closes it right after; a writer committing in a loop leaves gaps of
// microseconds, which no poll reliably hits: measured here, one writer made
// all its 200 commits before a second polling writer got in once.
//
// So waiters queue. To take "db", a process first takes "gate", and lets
// go of the gate once it has "db". The one holding the gate is next in
// line: the writer that just let go of "db" must get the gate before it can
// ask for "db" again, and the gate stays taken until the waiter is in. Two
// busy writers therefore alternate. bbolt's own lock is then free whenever
// we open the file; its timeout only matters if some other program (the
// bbolt CLI, say) has it open.

func lockDir(dbPath string) string { return dbPath + ".locks" }

const gateLockName = "gate"

func claimPath(dir, id string) string { return filepath.Join(dir, "session-"+id) }

const dbLockName = "db"

// lockFile takes a shared or exclusive flock on path, creating the file,
// and waits at most timeout for another process to let go.
func lockFile(ctx context.Context, path string, exclusive bool, timeout time.Duration) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	deadline := time.Now().Add(timeout)
	wait := 50 * time.Microsecond
	for {
		err := flock(f, how|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("%w: another process kept %s busy for over %s", storage.ErrLocked, path, timeout)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, 2*time.Millisecond)
	}
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// claimGateName is the lock that makes taking a session's claim and
// recording the holder's pid in it one step to everyone else who looks.
//
// Without it there is a window: a claimer holds the session's flock but has
// not yet written its pid (or has truncated the file to write it), and a
// second claimer refused in that moment reads no pid, or the pid of the
// session's previous holder. Claimers, Holder and dropClaim therefore take
// the gate around their open, flock, pid write or read, and removal of the
// lock file. It is held for microseconds and never across a transaction,
// so it is separate from the database's own gate.
const claimGateName = "claims"

// claimFile takes the session's writer lock without waiting and records
// this process's pid in it. When another process holds it, the error is a
// *storage.BusyError with that process's pid. It waits at most timeout for
// the claim gate.
func claimFile(ctx context.Context, dir, id string, timeout time.Duration) (*os.File, error) {
	gate, err := lockFile(ctx, filepath.Join(dir, claimGateName), true, timeout)
	if err != nil {
		return nil, fmt.Errorf("claim session %s: %w", id, err)
	}
	defer gate.Close()
	path := claimPath(dir, id)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("claim session %s: %w", id, err)
	}
	if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &storage.BusyError{Session: id, PID: holderPID(path)}
		}
		return nil, fmt.Errorf("claim session %s: %w", id, err)
	}
	// A claim whose holder cannot be named would be refused to others
	// without a pid: it is given up rather than kept.
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("claim session %s: cannot record this process in %s: %w", id, path, err)
	}
	return f, nil
}

// holderPID reads the pid a claim's holder wrote; 0 if it cannot be told
// (a holder that does not take the claim gate, such as an older retrace,
// may not have written it yet).
func holderPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
