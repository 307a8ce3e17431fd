package boltstore_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// Exact resume: a writer process plays a scripted session through a
// Cursor, printing after every commit the hash of the state it holds, and
// exits. The state the store gives back for every version, in a new
// process, must be that state to the byte.

// scriptRNG returns the rng that makes a seed's script, and how many
// events the script has.
func scriptRNG(seed uint64) (*rand.Rand, int) {
	rng := rand.New(rand.NewPCG(seed, 0x5c41))
	return rng, 20 + rng.IntN(101)
}

// scriptWriter is the writer process (RETRACE_TEST_ROLE=script-writer):
// it creates a session and commits the seed's script to it.
//
//	session <id>
//	ack <version> <sha256 of the state's JSON>
func scriptWriter(path string) error {
	seed, err := strconv.ParseUint(os.Getenv("RETRACE_TEST_SEED"), 10, 64)
	if err != nil {
		return fmt.Errorf("RETRACE_TEST_SEED: %w", err)
	}
	ctx := context.Background()
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	info, err := st.Create(ctx, storage.NewSession{Title: fmt.Sprint("script ", seed)})
	if err != nil {
		return err
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	fmt.Fprintf(out, "session %s\n", info.ID)
	rng, n := scriptRNG(seed)
	cur := storage.NewCursor(st, state.New(info.ID))
	for range n {
		s, err := cur.Commit(ctx, scripted(rng, cur.State()))
		if err != nil {
			return fmt.Errorf("seed %d v%d: %w", seed, cur.State().Version+1, err)
		}
		fmt.Fprintf(out, "ack %d %s\n", s.Version, stateSum(s))
		if err := out.Flush(); err != nil {
			return err
		}
	}
	return nil
}

func stateSum(s state.State) string {
	js, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(js))
}

// For 50 scripted sessions (seeds 1 to 50), the head after a restart and
// the state at every version are exactly the states the writer held; they
// are also the states state.Apply makes of the same events in memory; and
// the session goes on from its head to the same next state.
func TestResumeIsExact(t *testing.T) {
	scripts := envInt(t, "RETRACE_RESUME_SCRIPTS", 50)
	// The writers wait on fsync far more than they compute: run several at
	// once, each on its own file.
	runs := make([]scriptRun, scripts)
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := range runs {
		r := &runs[i]
		r.seed, r.path = uint64(i+1), filepath.Join(t.TempDir(), "retrace.db")
		cmd := helperCmd(t, "script-writer", r.path, "", fmt.Sprint("RETRACE_TEST_SEED=", r.seed))
		cmd.Stderr = &r.stderr
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			r.out, r.err = cmd.Output()
		}()
	}
	wg.Wait()
	t.Run("scripts", func(t *testing.T) {
		for i := range runs {
			t.Run(fmt.Sprint("seed ", runs[i].seed), func(t *testing.T) {
				t.Parallel()
				checkScriptResume(t, &runs[i])
			})
		}
	})
	if t.Failed() {
		return
	}
	versions := 0
	for _, r := range runs {
		_, n := scriptRNG(r.seed)
		versions += n
	}
	t.Logf("%d scripted sessions (seeds 1 to %d), %d versions: every version read back after a restart with the hash its writer printed, and resumed to the state Apply makes",
		scripts, scripts, versions)
}

// scriptRun is one writer's run.
type scriptRun struct {
	seed   uint64
	path   string
	out    []byte
	stderr bytes.Buffer
	err    error
}

// checkScriptResume checks one writer's run: its acks against the same
// script played in memory, then the file against its acks.
func checkScriptResume(t *testing.T, r *scriptRun) {
	ctx := context.Background()
	seed := r.seed
	if r.err != nil {
		t.Fatalf("seed %d: writer: %v\n%s", seed, r.err, r.stderr.String())
	}
	id, acks := parseScriptRun(t, r)
	rng, mem := playScript(t, seed, id)
	n := len(mem) - 1
	for v := 1; v <= n; v++ {
		if got := stateSum(mem[v]); got != acks[v] {
			t.Fatalf("seed %d v%d: the writer held a state (%s) other than the one Apply makes (%s)", seed, v, acks[v], got)
		}
	}

	st, err := boltstore.Open(r.path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	head, err := st.Head(ctx, id)
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	if got := stateSum(head); got != acks[n] {
		t.Fatalf("seed %d: the head after a restart (%s) is not the state the writer last acknowledged (%s)", seed, got, acks[n])
	}
	for v := 0; v <= n; v++ {
		if got := stateSum(mustAt(t, st, id, v)); got != acks[v] {
			t.Fatalf("seed %d: the state at v%d (%s) is not the one the writer had there (%s)", seed, v, got, acks[v])
		}
	}

	// Resume: the script's next event takes the session to the state it
	// takes the state in memory to.
	ev := scripted(rng, head)
	next, err := storage.NewCursor(st, head).Commit(ctx, ev)
	if err != nil {
		t.Fatalf("seed %d: resume: %v", seed, err)
	}
	canon, err := state.Canonical(ev)
	if err != nil {
		t.Fatal(err)
	}
	want, err := state.Apply(mem[n], canon)
	if err != nil {
		t.Fatal(err)
	}
	want.Version, want.ParentVersion = n+1, n
	if stateSum(next) != stateSum(want) || stateSum(mustAt(t, st, id, n+1)) != stateSum(want) {
		t.Fatalf("seed %d: the resumed session's next state is not the one Apply makes", seed)
	}
}

// parseScriptRun reads a writer's output: the session's id, and the hash
// it printed for each version (index 0: the empty session's).
func parseScriptRun(t *testing.T, r *scriptRun) (string, []string) {
	t.Helper()
	var id string
	acks := []string{""}
	for line := range strings.Lines(string(r.out)) {
		var v int
		var sum string
		switch {
		case scan(line, "session %s", &id):
			acks[0] = stateSum(state.New(id))
		case scan(line, "ack %d %s", &v, &sum):
			if v != len(acks) {
				t.Fatalf("seed %d: ack v%d after v%d", r.seed, v, len(acks)-1)
			}
			acks = append(acks, sum)
		default:
			t.Fatalf("seed %d: the writer said %q", r.seed, line)
		}
	}
	if _, n := scriptRNG(r.seed); len(acks)-1 != n || id == "" {
		t.Fatalf("seed %d: %d acks, want %d", r.seed, len(acks)-1, n)
	}
	return id, acks
}

// playScript plays a seed's script in memory, with nothing but
// state.Apply: the states at versions 0 to n, and the rng, ready for the
// script's next event.
func playScript(t *testing.T, seed uint64, id string) (*rand.Rand, []state.State) {
	t.Helper()
	rng, n := scriptRNG(seed)
	mem := []state.State{state.New(id)}
	for v := 1; v <= n; v++ {
		ev, err := state.Canonical(scripted(rng, mem[v-1]))
		if err != nil {
			t.Fatal(err)
		}
		s, err := state.Apply(mem[v-1], ev)
		if err != nil {
			t.Fatalf("seed %d v%d: %v", seed, v, err)
		}
		s.Version, s.ParentVersion = v, v-1
		mem = append(mem, s)
	}
	return rng, mem
}

func mustAt(t *testing.T, st storage.Store, id string, v int) state.State {
	t.Helper()
	s, err := st.At(context.Background(), id, v)
	if err != nil {
		t.Fatalf("At(%d): %v", v, err)
	}
	return s
}
