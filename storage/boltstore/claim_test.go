package boltstore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"retrace/state"
	"retrace/state/statetest"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// Claims between two stores of one process: a claim is an flock on a file
// of its own, and two opens of one file conflict just as two processes do.
// The lock file of session id is <db>.locks/session-<id> and holds the
// holder's pid and a newline.
func TestClaimsHolderAndRelease(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "retrace.db")
	first, second := mustOpen(t, path), mustOpen(t, path)
	info, err := first.Create(ctx, storage.NewSession{Title: "claimed"})
	if err != nil {
		t.Fatal(err)
	}
	id, pid := info.ID, os.Getpid()
	lockPath := filepath.Join(path+".locks", "session-"+id)

	wantHolder := func(st *boltstore.Store, who string, wantPID int, wantHeld bool) {
		t.Helper()
		if p, held := st.Holder(id); p != wantPID || held != wantHeld {
			t.Fatalf("%s: Holder = %d, %v; want %d, %v", who, p, held, wantPID, wantHeld)
		}
	}
	// Create claims the session.
	if b, err := os.ReadFile(lockPath); err != nil || string(b) != strconv.Itoa(pid)+"\n" {
		t.Fatalf("the lock file holds %q (%v); want the pid and a newline", b, err)
	}
	wantHolder(first, "the holder itself", pid, false)
	wantHolder(second, "another store", pid, true)
	err = second.Claim(ctx, id)
	var be *storage.BusyError
	if !errors.As(err, &be) || be.Session != id || be.PID != pid {
		t.Fatalf("claim of a held session: %v", err)
	}
	if err := second.SetHead(ctx, id, 0); !errors.As(err, &be) {
		t.Fatalf("a rollback by another store: %v", err)
	}
	// Holder takes no claim: after asking, the session is still not
	// ours, and asking twice changes nothing.
	wantHolder(second, "another store, again", pid, true)

	if err := first.Release(id); err != nil {
		t.Fatal(err)
	}
	if err := first.Release(id); err != nil {
		t.Fatalf("releasing twice: %v", err)
	}
	wantHolder(second, "after the release", 0, false)
	wantHolder(first, "after its own release", 0, false)
	wantHolder(second, "asked twice", 0, false)
	if err := second.Claim(ctx, id); err != nil {
		t.Fatalf("claim after the release: %v", err)
	}
	wantHolder(first, "the first store, now that the second holds it", pid, true)
	if err := second.Claim(ctx, id); err != nil {
		t.Fatalf("claiming a session the store holds already: %v", err)
	}
	// The first store's writes now fail, and leave nothing behind.
	ev := state.Event{Kind: state.UserMessage, At: statetest.Epoch, Messages: []state.Message{{Role: state.RoleUser, Content: "x"}}}
	if _, err := first.Append(ctx, id, 0, ev); !errors.As(err, &be) || be.PID != pid {
		t.Fatalf("append by a store without the claim: %v", err)
	}
	if got, err := first.Session(ctx, id); err != nil || got.Versions != 0 {
		t.Fatalf("after a refused append: %+v, %v", got, err)
	}

	// Close lets go of every claim.
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	wantHolder(first, "after the holder closed", 0, false)
	if _, err := first.Append(ctx, id, 0, ev); err != nil {
		t.Fatalf("append once the holder closed: %v", err)
	}
	wantHolder(first, "the writer, after its append", pid, false)
	third := mustOpen(t, path)
	wantHolder(third, "another store, after an append", pid, true)

	if _, held := third.Holder("not an id!"); held {
		t.Fatal("a malformed id is held")
	}
	if _, err := os.Stat(filepath.Join(path+".locks", "session-not an id!")); err == nil {
		t.Fatal("Holder made a lock file for a malformed id")
	}
}

// A write that finds no session leaves no claim on its id, and deleting a
// session removes its lock file.
func TestClaimsOfMissingAndDeletedSessions(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "retrace.db")
	first, second := mustOpen(t, path), mustOpen(t, path)
	info, err := first.Create(ctx, storage.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	const missing = "0123456789abcdef"
	ev := state.Event{Kind: state.UserMessage, At: statetest.Epoch, Messages: []state.Message{{Role: state.RoleUser, Content: "x"}}}
	for name, write := range map[string]func() error{
		"append":   func() error { _, err := first.Append(ctx, missing, 0, ev); return err },
		"set head": func() error { return first.SetHead(ctx, missing, 0) },
		"delete":   func() error { return first.Delete(ctx, missing) },
		"claim":    func() error { return first.Claim(ctx, missing) },
	} {
		if err := write(); !errors.Is(err, storage.ErrSessionNotFound) {
			t.Fatalf("%s of a missing session: %v", name, err)
		}
		if _, held := second.Holder(missing); held {
			t.Fatalf("%s of a missing session left it claimed", name)
		}
	}

	lockPath := filepath.Join(path+".locks", "session-"+info.ID)
	if err := first.Delete(ctx, info.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lockPath); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the deleted session's lock file: %v", err)
	}
	if _, held := second.Holder(info.ID); held {
		t.Fatal("a deleted session is still claimed")
	}
	// A refused delete removes neither the session nor the holder's lock.
	other, err := first.Create(ctx, storage.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	if err := second.Delete(ctx, other.ID); !errors.Is(err, storage.ErrBusy) {
		t.Fatalf("delete of a session another store holds: %v", err)
	}
	if _, err := second.Session(ctx, other.ID); err != nil {
		t.Fatalf("after a refused delete: %v", err)
	}
	if p, held := second.Holder(other.ID); !held || p != os.Getpid() {
		t.Fatalf("after a refused delete the holder is %d, %v", p, held)
	}

	// A delete that fails for want of the file keeps the session, and the
	// claim: the session is still there to be written.
	impatient, err := boltstore.Open(path, boltstore.Options{LockTimeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer impatient.Close()
	mine, err := impatient.Create(ctx, storage.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	unlock := holdDBLock(t, path)
	err = impatient.Delete(ctx, mine.ID)
	unlock()
	if !errors.Is(err, storage.ErrLocked) {
		t.Fatalf("delete while the file is held: %v", err)
	}
	if p, held := second.Holder(mine.ID); !held || p != os.Getpid() {
		t.Fatalf("after a failed delete the holder is %d, %v", p, held)
	}
	if _, err := os.Stat(filepath.Join(path+".locks", "session-"+mine.ID)); err != nil {
		t.Fatalf("after a failed delete, the lock file: %v", err)
	}
}

// holdDBLock takes the database's own lock, as another retrace in the
// middle of a transaction holds it, and returns its release.
func holdDBLock(t *testing.T, path string) func() {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(path+".locks", "db"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	return func() { f.Close() }
}

// The holder's pid is what its lock file says, when it says one: a holder
// that has not written it yet (or wrote nonsense) is held with pid 0.
func TestHolderPID(t *testing.T) {
	path := filepath.Join(t.TempDir(), "retrace.db")
	st := mustOpen(t, path)
	const id = "0123456789abcdef"
	if err := os.MkdirAll(path+".locks", 0o700); err != nil {
		t.Fatal(err)
	}
	lockPath := filepath.Join(path+".locks", "session-"+id)
	for _, c := range []struct {
		content string
		pid     int
	}{
		{"4242\n", 4242},
		{" 17 \n", 17},
		{"", 0},
		{"0\n", 0},
		{"-3\n", 0},
		{"pid 12\n", 0},
	} {
		if err := os.WriteFile(lockPath, []byte(c.content), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(lockPath)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			t.Fatal(err)
		}
		pid, held := st.Holder(id)
		err = st.SetHead(context.Background(), id, 0) // claims before it looks
		f.Close()
		if !held || pid != c.pid {
			t.Errorf("lock file %q: Holder = %d, %v; want %d, true", c.content, pid, held, c.pid)
		}
		var be *storage.BusyError
		if !errors.As(err, &be) || be.PID != c.pid || be.Session != id {
			t.Errorf("lock file %q: a write: %v; want a BusyError with pid %d", c.content, err, c.pid)
		}
	}
}

func mustOpen(t *testing.T, path string) *boltstore.Store {
	t.Helper()
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// A write whose context is already canceled claims nothing.
func TestCanceledWriteClaimsNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "retrace.db")
	id := newSessions(t, path, 1)[0] // created and released
	st, other := mustOpen(t, path), mustOpen(t, path)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ev := state.Event{Kind: state.UserMessage, At: statetest.Epoch, Messages: []state.Message{{Role: state.RoleUser, Content: "x"}}}
	for name, err := range map[string]error{
		"append":   func() error { _, err := st.Append(ctx, id, 0, ev); return err }(),
		"set head": st.SetHead(ctx, id, 0),
		"delete":   st.Delete(ctx, id),
	} {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a canceled context: %v", name, err)
		}
	}
	if _, held := other.Holder(id); held {
		t.Fatal("a canceled write left the session claimed")
	}
}
