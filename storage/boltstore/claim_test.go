package boltstore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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

// Many processes claim one session at once, each from several stores of
// its own: exactly one store wins, and every other is refused with a
// BusyError naming the winner's pid. The holder takes the lock and then
// writes its pid; a refusal that read the lock file in between named no
// pid, or the pid of whoever held the session before.
func TestEveryBusyRefusalNamesTheWinner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "retrace.db")
	id := newSessions(t, path, 1)[0] // its lock file names this process
	const procs, perProc = 25, 4
	type racer struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   *bufio.Reader
	}
	racers := make([]racer, procs)
	for i := range racers {
		cmd := helperCmd(t, "claim-racer", path, id, fmt.Sprint("RETRACE_TEST_N=", perProc))
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		racers[i] = racer{cmd, stdin, bufio.NewReader(stdout)}
	}
	line := func(r racer) string {
		t.Helper()
		var s string
		_, err := within(t, time.Minute, func() (err error) { s, err = r.out.ReadString('\n'); return err })
		if err != nil {
			t.Fatalf("claimer %d: %v", r.cmd.Process.Pid, err)
		}
		return strings.TrimSpace(s)
	}
	// Every claimer has its stores open before any claims.
	for _, r := range racers {
		if s := line(r); s != "ready" {
			t.Fatalf("claimer %d said %q", r.cmd.Process.Pid, s)
		}
	}
	for _, r := range racers {
		fmt.Fprintln(r.stdin, "go")
	}
	winner, busy := 0, map[int]int{} // pid named -> refusals
	for _, r := range racers {
		for range perProc {
			what, pid, _ := strings.Cut(line(r), " ")
			switch what {
			case "claimed":
				if winner != 0 {
					t.Fatalf("two winners: pids %d and %s", winner, pid)
				}
				winner, _ = strconv.Atoi(pid)
				if winner != r.cmd.Process.Pid {
					t.Fatalf("claimer %d won as pid %d", r.cmd.Process.Pid, winner)
				}
			case "busy":
				n, _ := strconv.Atoi(pid)
				busy[n]++
			default:
				t.Fatalf("claimer %d: %s %s", r.cmd.Process.Pid, what, pid)
			}
		}
	}
	if winner == 0 {
		t.Fatal("no claimer won")
	}
	if busy[winner] != procs*perProc-1 {
		t.Fatalf("of %d refusals, %d named the winner (pid %d); the others named %v (0: no pid)", procs*perProc-1, busy[winner], winner, busy)
	}
	t.Logf("%d claimers in %d processes: one won (pid %d), all %d refusals named it", procs*perProc, procs, winner, busy[winner])
	// All let go at once: a race-enabled process lingers a second as it
	// exits.
	for _, r := range racers {
		r.stdin.Close()
	}
	for _, r := range racers {
		if err := r.cmd.Wait(); err != nil {
			t.Fatalf("claimer %d: %v", r.cmd.Process.Pid, err)
		}
	}
}

// claimRacer is a claimer process (RETRACE_TEST_ROLE=claim-racer): it
// opens n stores on the file, says "ready", waits for "go", has every
// store claim the session at once, and prints one line per store:
// "claimed PID" with its own pid, or "busy PID" with the pid the refusal
// named (0 for none), once its message names it too. It holds its claims
// until stdin closes.
func claimRacer(path, id string, n int) error {
	ctx := context.Background()
	stores := make([]*boltstore.Store, n)
	for i := range stores {
		st, err := boltstore.Open(path, boltstore.Options{LockTimeout: time.Minute})
		if err != nil {
			return err
		}
		defer st.Close()
		stores[i] = st
	}
	fmt.Println("ready")
	in := bufio.NewReader(os.Stdin)
	if _, err := in.ReadString('\n'); err != nil {
		return err
	}
	results := make([]string, n)
	var wg sync.WaitGroup
	for i, st := range stores {
		wg.Go(func() {
			err := st.Claim(ctx, id)
			var be *storage.BusyError
			switch {
			case err == nil:
				results[i] = fmt.Sprint("claimed ", os.Getpid())
			case errors.As(err, &be) && (be.PID == 0 || strings.Contains(err.Error(), fmt.Sprintf("(pid %d)", be.PID))):
				results[i] = fmt.Sprint("busy ", be.PID)
			default:
				results[i] = "error " + strings.ReplaceAll(err.Error(), "\n", " ")
			}
		})
	}
	wg.Wait()
	for _, r := range results {
		fmt.Println(r)
	}
	_, _ = io.Copy(io.Discard, in)
	return nil
}

// The claim gate is held for microseconds, but a claimer stopped while
// holding it must not make every other claim wait forever: claims give up
// after the lock timeout with storage.ErrLocked naming the lock, reads go
// on, and once the holder dies claims go through.
func TestAStuckClaimGateGivesUp(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "retrace.db")
	id := newSessions(t, path, 1)[0]
	st, err := boltstore.Open(path, boltstore.Options{LockTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	holder := startHolder(t, helperCmd(t, "flock-holder", path, "", "RETRACE_TEST_LOCKFILE="+filepath.Join(path+".locks", "claims")), "locked")
	for name, fn := range map[string]func() error{
		"claim":    func() error { return st.Claim(ctx, id) },
		"set head": func() error { return st.SetHead(ctx, id, 0) },
	} {
		_, err := within(t, 10*time.Second, fn)
		if !errors.Is(err, storage.ErrLocked) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), id) {
			t.Fatalf("%s while the claim gate is held: want storage.ErrLocked naming %s and session %s, got %v", name, path, id, err)
		}
	}
	if _, err := st.Head(ctx, id); err != nil {
		t.Fatalf("a read while the claim gate is held: %v", err)
	}
	if err := holder.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = holder.Wait()
	if err := st.Claim(ctx, id); err != nil {
		t.Fatalf("claim once the gate's holder died: %v", err)
	}
}
