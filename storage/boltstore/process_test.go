package boltstore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// The test binary doubles as a second retrace process: run with
// RETRACE_TEST_ROLE set, it plays that role instead of running tests.
func TestMain(m *testing.M) {
	if role := os.Getenv("RETRACE_TEST_ROLE"); role != "" {
		if err := runRole(role, os.Getenv("RETRACE_TEST_DB"), os.Getenv("RETRACE_TEST_SESSION")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runRole plays one of the parts a test asks a second process to play.
func runRole(role, path, id string) error {
	switch role {
	case "crash-writer":
		return crashWriter(path, id)
	case "powercut-writer":
		return powercutWriter(path)
	case "script-writer":
		return scriptWriter(path)
	case "flock-holder":
		return holdFlock(os.Getenv("RETRACE_TEST_LOCKFILE"))
	case "bolt-holder":
		return holdBolt(path)
	case "damage-probe":
		return damageProbe(path, strings.Split(id, ","))
	case "claim-racer":
		n, _ := strconv.Atoi(os.Getenv("RETRACE_TEST_N"))
		return claimRacer(path, id, n)
	case "meta-flips":
		return metaFlipper(path, strings.Split(id, ","), os.Getenv("RETRACE_TEST_FLIPS"), os.Getenv("RETRACE_TEST_WORK"))
	case "small-disk-create":
		return smallDiskCreate(path)
	}
	return playRole(role, path, id)
}

func playRole(role, path, id string) error {
	ctx := context.Background()
	opts := boltstore.Options{}
	if role == "writer" {
		// Two writers take turns on the file, each waiting out the other's
		// fsyncs; on a busy CI disk one turn can pass the default 1.5 s.
		// Giving up on a held lock is TestNothingWaitsForeverOnTheFileLock's
		// business, not this test's.
		opts.LockTimeout = time.Minute
	}
	st, err := boltstore.Open(path, opts)
	if err != nil {
		return err
	}
	defer st.Close()
	switch role {
	case "writer":
		// Wait for "go" so two writers start together.
		if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
			return err
		}
		n, _ := strconv.Atoi(os.Getenv("RETRACE_TEST_N"))
		s, err := st.Head(ctx, id)
		if err != nil {
			return err
		}
		for i := range n {
			if s, err = storage.Commit(ctx, st, s, chatEvent(s, i)); err != nil {
				return fmt.Errorf("writer %d at v%d: %w", os.Getpid(), s.Version, err)
			}
		}
		return nil
	case "killed-writer":
		// Writes once, then waits: SIGKILL is a crash, SIGTERM a clean
		// end that closes the store.
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		s, err := st.Head(ctx, id)
		if err != nil {
			return err
		}
		if _, err := storage.Commit(ctx, st, s, chatEvent(s, 100)); err != nil {
			return err
		}
		fmt.Println("wrote")
		<-term
		return nil
	case "holder":
		if err := st.Claim(ctx, id); err != nil {
			return err
		}
		fmt.Println("claimed")
		_, _ = io.Copy(io.Discard, os.Stdin) // hold until stdin closes or we are killed
		return nil
	}
	return fmt.Errorf("unknown role %q", role)
}

// chatEvent is the next event of a plain chat: a user message, then the
// answer.
func chatEvent(s state.State, i int) state.Event {
	if s.Phase == state.Planning {
		return state.Event{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: fmt.Sprintf("answer %d", i)}}}
	}
	return state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: fmt.Sprintf("question %d", i)}}}
}

func helperCmd(t *testing.T, role, path, id string, extra ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "RETRACE_TEST_ROLE="+role, "RETRACE_TEST_DB="+path, "RETRACE_TEST_SESSION="+id)
	cmd.Env = append(cmd.Env, extra...)
	return cmd
}

// newSessions writes n empty sessions and returns their ids.
func newSessions(t *testing.T, path string, n int) []string {
	t.Helper()
	return chatSessions(t, path, n, 0)
}

// Two processes writing different sessions of one file both get all their
// checkpoints in, interleaved: neither waits for the other to finish.
func TestTwoProcessesShareTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "retrace.db")
	ids := newSessions(t, path, 2)
	const n = 200
	var cmds []*exec.Cmd
	var gos []io.WriteCloser
	for _, id := range ids {
		cmd := helperCmd(t, "writer", path, id, fmt.Sprint("RETRACE_TEST_N=", n))
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// A failed test must not leave a writer going into its TempDir.
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		cmds, gos = append(cmds, cmd), append(gos, stdin)
	}
	for _, g := range gos {
		fmt.Fprintln(g, "go")
		g.Close()
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer %d: %v", i, err)
		}
	}

	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var spans [2][2]time.Time
	for i, id := range ids {
		ex, err := st.Export(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(ex.Checkpoints) != n {
			t.Fatalf("session %d has %d checkpoints, want %d", i, len(ex.Checkpoints), n)
		}
		spans[i] = [2]time.Time{ex.Checkpoints[0].At, ex.Checkpoints[n-1].At}
	}
	if !spans[0][0].Before(spans[1][1]) || !spans[1][0].Before(spans[0][1]) {
		t.Fatalf("the writers did not interleave: one ran %v, the other %v", spans[0], spans[1])
	}
	if err := boltstore.Verify(context.Background(), path); err != nil {
		t.Fatal(err)
	}
}

// A session another process writes is refused, naming the session and the
// holder; when the holder is killed, the claim is free at once.
func TestSecondWriterIsRefusedAndKillReleases(t *testing.T) {
	path := filepath.Join(t.TempDir(), "retrace.db")
	id := newSessions(t, path, 1)[0]
	holder := startHolder(t, helperCmd(t, "holder", path, id), "claimed")

	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	took, err := within(t, 10*time.Second, func() error { return st.Claim(context.Background(), id) })
	t.Logf("refused in %.1f ms", float64(took.Microseconds())/1000)
	var be *storage.BusyError
	if !errors.As(err, &be) || be.PID != holder.Process.Pid {
		t.Fatalf("claim of a held session: %v (holder pid %d)", err, holder.Process.Pid)
	}
	if msg := err.Error(); !strings.Contains(msg, id) || !strings.Contains(msg, strconv.Itoa(holder.Process.Pid)) {
		t.Fatalf("message %q must name the session and the holder's pid", msg)
	}
	if _, err := st.Head(context.Background(), id); err != nil {
		t.Fatalf("reading a held session: %v", err)
	}

	if err := holder.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = holder.Wait()
	if err := st.Claim(context.Background(), id); err != nil {
		t.Fatalf("claim after the holder was killed: %v", err)
	}
}

// within runs fn and returns its error and how long it took. If fn has not
// returned after limit, the test fails there: nothing may wait forever.
func within(t *testing.T, limit time.Duration, fn func() error) (time.Duration, error) {
	t.Helper()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return time.Since(start), err
	case <-time.After(limit):
		t.Fatalf("still waiting after %s", limit)
		return 0, nil
	}
}

// holdFlock is a process that takes an exclusive flock on path, says
// "locked", and holds it until it is killed or its stdin closes: a retrace
// stuck in the middle of a transaction.
func holdFlock(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

// holdBolt is another program with the database open in bbolt (the bbolt
// CLI, say), holding bbolt's own lock until it is killed or its stdin
// closes.
func holdBolt(path string) error {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer db.Close()
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

// startHolder starts a helper that holds a lock or a claim and returns
// once it says so (ready); the helper is killed when the test ends.
func startHolder(t *testing.T, cmd *exec.Cmd, ready string) *exec.Cmd {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if _, err := cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	_, err = within(t, time.Minute, func() error {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err == nil && strings.TrimSpace(line) != ready {
			err = fmt.Errorf("the holder said %q", line)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return cmd
}

// Nothing ever waits forever on the file: with another process holding
// the database's lock (or the gate to it, or bbolt's own lock on the file)
// and never letting go, every operation gives up after its lock timeout
// with an error wrapping storage.ErrLocked that names the file; when the
// holder dies, the same operations go through.
func TestNothingWaitsForeverOnTheFileLock(t *testing.T) {
	const timeout = 300 * time.Millisecond
	cases := []struct {
		name   string
		holder func(t *testing.T, path string) *exec.Cmd
	}{
		{"another retrace holds the database lock", func(t *testing.T, path string) *exec.Cmd {
			return helperCmd(t, "flock-holder", path, "", "RETRACE_TEST_LOCKFILE="+filepath.Join(path+".locks", "db"))
		}},
		{"another retrace holds the gate to it", func(t *testing.T, path string) *exec.Cmd {
			return helperCmd(t, "flock-holder", path, "", "RETRACE_TEST_LOCKFILE="+filepath.Join(path+".locks", "gate"))
		}},
		{"another program has the file open in bbolt", func(t *testing.T, path string) *exec.Cmd {
			return helperCmd(t, "bolt-holder", path, "")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "retrace.db")
			id := newSessions(t, path, 1)[0]
			st, err := boltstore.Open(path, boltstore.Options{LockTimeout: timeout})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			head, err := st.Head(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			holder := startHolder(t, c.holder(t, path), "locked")

			ops := []struct {
				name string
				fn   func() error
			}{
				{"open", func() error {
					s, err := boltstore.Open(path, boltstore.Options{LockTimeout: timeout})
					if err == nil {
						s.Close()
					}
					return err
				}},
				{"sessions", func() error { _, err := st.Sessions(ctx); return err }},
				{"head", func() error { _, err := st.Head(ctx, id); return err }},
				{"commit", func() error { _, err := storage.Commit(ctx, st, head, chatEvent(head, 0)); return err }},
				{"set head", func() error { return st.SetHead(ctx, id, 0) }},
				{"create", func() error { _, err := st.Create(ctx, storage.NewSession{}); return err }},
			}
			var took []string
			for _, op := range ops {
				d, err := within(t, 10*time.Second, op.fn)
				if !errors.Is(err, storage.ErrLocked) || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("%s while the file is held: want one line wrapping storage.ErrLocked naming %s, got %v", op.name, path, err)
				}
				took = append(took, fmt.Sprintf("%s %.0f ms", op.name, float64(d.Microseconds())/1000))
			}
			t.Logf("lock timeout %s; gave up after: %s", timeout, strings.Join(took, ", "))

			if err := holder.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = holder.Wait()
			for _, op := range ops {
				if _, err := within(t, 10*time.Second, op.fn); err != nil {
					t.Fatalf("%s after the holder died: %v", op.name, err)
				}
			}
		})
	}
}
