package boltstore_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"retrace/state"
	"retrace/state/statetest"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// The crash loop: a writer process commits checkpoints to one session as
// fast as it can and is killed with SIGKILL at a random moment, over and
// over, on the same file. Everything the writer does is a function of the
// seed and the number of versions already kept, so the test knows what
// every version must hold without trusting the store to tell it.
//
// The writer prints one line per durable step, flushed as soon as the step
// returned:
//
//	ready <versions> <head>   the session as the writer found it
//	head <version>            SetHead(version) returned (a rollback)
//	ack <version> parent <p>  the checkpoint was committed under p
//
// A line the test read is a promise kept; a step the writer was in the
// middle of when it died may or may not be in the file, but if it is, it
// must be whole and exactly what the writer meant to write.

// crashRollback says whether the writer, finding n versions, first rolls
// back, and to which version; then it commits version n+1.
func crashRollback(seed uint64, n int) (int, bool) {
	rng := rand.New(rand.NewPCG(seed, uint64(n)<<1))
	if n >= 2 && rng.IntN(100) < 10 {
		return rng.IntN(n), true
	}
	return 0, false
}

// crashEvent is the event version v keeps, under parent p whose phase is
// given, and whether a restore of the workspace is open there: the next
// turn of a chat, whose text names the seed, the version and the parent.
// One in 25 is longer than a page, so values spill onto overflow pages.
// One in six starts a restore of files instead, carrying their contents
// (see crashFiles), so a checkpoint is durable with its contents or not
// at all; the restore is closed by the next version.
func crashEvent(seed uint64, v, p int, phase state.Phase, restoring bool) state.Event {
	rng := rand.New(rand.NewPCG(seed, uint64(v)<<1|1))
	at := statetest.Epoch.Add(time.Duration(v) * time.Second)
	if restoring {
		return state.Event{Kind: state.FilesRestored, At: at, Text: fmt.Sprintf("restored at v%d", v)}
	}
	if rng.IntN(6) == 0 {
		files, blobs := crashFiles(seed, rng)
		return state.Event{Kind: state.RestoreStarted, At: at, From: p, Files: files, Blobs: blobs}
	}
	size := rng.IntN(120)
	if rng.IntN(25) == 0 {
		size = 4096 + rng.IntN(1024)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d version %d parent %d:", seed, v, p)
	for b.Len() < size {
		b.WriteByte(' ')
		b.WriteString(crashWords[rng.IntN(len(crashWords))])
	}
	ev := state.Event{Kind: state.UserMessage, At: at}
	role := state.RoleUser
	if phase == state.Planning {
		ev.Kind, role = state.Answered, state.RoleAssistant
		ev.Usage = state.Usage{PromptTokens: rng.IntN(500), CompletionTokens: rng.IntN(200)}
	}
	ev.Messages = []state.Message{{Role: role, Content: b.String()}}
	return ev
}

// crashFiles is one or two file changes and their contents, drawn from a
// pool of eight per seed, so that versions share contents (the store
// keeps each once) and one content spans several pages.
func crashFiles(seed uint64, rng *rand.Rand) ([]state.FileChange, []state.Blob) {
	var files []state.FileChange
	var blobs []state.Blob
	image := func() state.FileImage {
		data := crashContent(seed, rng.IntN(8))
		b := state.Blob{Digest: storage.Digest(data), Data: data}
		blobs = append(blobs, b)
		return state.FileImage{Blob: b.Digest, Size: int64(len(data)), Mode: 0o644}
	}
	for i := range 1 + rng.IntN(2) {
		files = append(files, state.FileChange{Path: fmt.Sprintf("src/f%d.go", i), Before: image(), After: image()})
	}
	return files, blobs
}

// crashContent is the seed's content number i: content 0 is over 8 KiB,
// content 1 over 1 MiB (kept in chunks, chunk.go).
func crashContent(seed uint64, i int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "// seed %d content %d\n", seed, i)
	lines := 1 + i*3
	switch i {
	case 0:
		lines = 400
	case 1:
		lines = 32_000
	}
	for l := range lines {
		fmt.Fprintf(&b, "func f%d() string { return %q }\n", l, crashWords[(l+i)%len(crashWords)])
	}
	return []byte(b.String())
}

// crashMemory is the memory log's k-th entry in a crash run: every third
// checkpoint the writer also keeps a memory, and every fourth memory is
// an edit of the one before, so an entry depends on the ones before it.
func crashMemory(seed uint64, k int) state.MemoryEvent {
	rng := rand.New(rand.NewPCG(seed, uint64(k)))
	var text strings.Builder
	for range 3 + rng.IntN(20) {
		text.WriteString(crashWords[rng.IntN(len(crashWords))] + " ")
	}
	ev := state.MemoryEvent{Kind: state.MemoryAdded, At: statetest.Epoch.Add(time.Duration(k) * time.Minute),
		Memory: state.Memory{ID: fmt.Sprintf("crash%04d", k), Text: text.String()}}
	if k%4 == 0 {
		ev.Kind, ev.Memory.ID = state.MemoryEdited, fmt.Sprintf("crash%04d", k-1)
	}
	return ev
}

var crashWords = strings.Fields("checkpoint version fork head résumé 数据 🙂 \"quoted\" back\\slash tab\tline")

// crashWriter is the writer process (RETRACE_TEST_ROLE=crash-writer). It
// resumes the session at its head and commits until it is killed, or
// RETRACE_TEST_N checkpoints when that is set.
func crashWriter(path, id string) error {
	seed, err := strconv.ParseUint(os.Getenv("RETRACE_CRASH_SEED"), 10, 64)
	if err != nil {
		return fmt.Errorf("RETRACE_CRASH_SEED: %w", err)
	}
	limit, _ := strconv.Atoi(os.Getenv("RETRACE_TEST_N"))
	ctx := context.Background()
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	info, err := st.Session(ctx, id)
	if err != nil {
		return err
	}
	s, err := st.Head(ctx, id)
	if err != nil {
		return err
	}
	memories, err := st.MemoryEvents(ctx)
	if err != nil {
		return err
	}
	out := bufio.NewWriter(os.Stdout)
	say := func(format string, args ...any) error {
		fmt.Fprintf(out, format+"\n", args...)
		return out.Flush()
	}
	if err := say("ready %d %d %d", info.Versions, info.Head, len(memories)); err != nil {
		return err
	}
	mk := len(memories)
	cur := storage.NewCursor(st, s)
	for n := info.Versions; limit == 0 || n < info.Versions+limit; n++ {
		if target, ok := crashRollback(seed, n); ok {
			if err := st.SetHead(ctx, id, target); err != nil {
				return fmt.Errorf("roll back to v%d: %w", target, err)
			}
			if err := say("head %d", target); err != nil {
				return err
			}
			s, err := st.At(ctx, id, target)
			if err != nil {
				return err
			}
			cur = storage.NewCursor(st, s)
		}
		at := cur.State()
		s, err := cur.Commit(ctx, crashEvent(seed, n+1, at.Version, at.Phase, at.Restoring != nil))
		if err != nil {
			return fmt.Errorf("commit v%d: %w", n+1, err)
		}
		if err := say("ack %d parent %d", s.Version, s.ParentVersion); err != nil {
			return err
		}
		if s.Version%3 == 0 {
			mk++
			kept, err := st.AppendMemory(ctx, crashMemory(seed, mk))
			if err != nil {
				return fmt.Errorf("memory v%d: %w", mk, err)
			}
			if err := say("mem %d", kept.Version); err != nil {
				return err
			}
		}
	}
	return nil
}

// crashModel is what the session must hold: every version the seed
// determines, computed without the store.
type crashModel struct {
	seed      uint64
	id        string
	parent    []int         // parent[v]; index 0 is the empty session
	phase     []state.Phase // the phase after v
	restoring []bool        // a restore is open after v
	event     []state.Event // v's event, canonical
	raw       [][]byte      // v's event as JSON
	blobs     map[string][]byte
}

func newCrashModel(seed uint64, id string) *crashModel {
	return &crashModel{seed: seed, id: id, parent: []int{0}, phase: []state.Phase{state.Idle}, restoring: []bool{false},
		event: []state.Event{{}}, raw: [][]byte{nil}, blobs: map[string][]byte{}}
}

// upTo computes versions up to n.
func (m *crashModel) upTo(t *testing.T, n int) {
	t.Helper()
	for v := len(m.parent); v <= n; v++ {
		p := v - 1
		if target, ok := crashRollback(m.seed, v-1); ok {
			p = target
		}
		carried := crashEvent(m.seed, v, p, m.phase[p], m.restoring[p])
		for _, b := range carried.Blobs {
			m.blobs[b.Digest] = b.Data
		}
		ev, err := state.Canonical(carried)
		if err != nil {
			t.Fatal(err)
		}
		to, err := state.Next(m.phase[p], ev.Kind)
		if err != nil {
			t.Fatalf("seed %d: the model's own v%d does not apply: %v", m.seed, v, err)
		}
		raw, err := state.EncodeEvent(ev)
		if err != nil {
			t.Fatal(err)
		}
		m.parent, m.phase, m.event, m.raw = append(m.parent, p), append(m.phase, to), append(m.event, ev), append(m.raw, raw)
		m.restoring = append(m.restoring, ev.Kind == state.RestoreStarted)
	}
}

// stateJSON is the state at v as JSON, folded from the model's events.
func (m *crashModel) stateJSON(t *testing.T, v int) []byte {
	t.Helper()
	var path []int
	for cur := v; cur > 0; cur = m.parent[cur] {
		path = append(path, cur)
	}
	b := state.NewBuilder(state.New(m.id))
	for i := len(path) - 1; i >= 0; i-- {
		if err := b.Apply(m.event[path[i]]); err != nil {
			t.Fatalf("seed %d: the model's v%d does not apply: %v", m.seed, path[i], err)
		}
	}
	b.SetVersion(v, m.parent[v])
	js, err := json.Marshal(b.State())
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// crashRun is what the test read from one writer run.
type crashRun struct {
	acks       int // ack lines
	lastAck    int // the highest version acknowledged, 0 if none
	ackedCount int // versions the writer had acknowledged (or found)
	ackedHead  int // the head it last acknowledged (or found)
	rollbacks  int // head lines
	memories   int // memory log entries acknowledged (or found)
	memAcks    int // mem lines
	exited     error
	stderr     string
}

func TestCrashLoop(t *testing.T) {
	runs := envInt(t, "RETRACE_CRASH_RUNS", 200)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("RETRACE_CRASH_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("RETRACE_CRASH_SEED: %v", err)
		}
	}
	t.Logf("seed %d, %d runs (replay: RETRACE_CRASH_SEED=%d RETRACE_CRASH_RUNS=%d)", seed, runs, seed, runs)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d: "+format, append([]any{seed}, args...)...)
	}

	path := filepath.Join(t.TempDir(), "retrace.db")
	id := newSessions(t, path, 1)[0]
	m := newCrashModel(seed, id)
	delays := rand.New(rand.NewPCG(seed, 0x6b696c6c))
	known, knownHead, knownMem := 0, 0, 0 // what the last check found in the file
	var kills, acked, rollbacks, extra, memAcks int
	start := time.Now()
	for run := 1; run <= runs+1; run++ {
		last := run == runs+1 // one more run that is not killed
		delay := time.Duration(5+delays.IntN(146)) * time.Millisecond
		r := runCrashWriter(t, path, id, seed, delay, last, func(line string, r *crashRun) {
			checkCrashLine(t, m, line, r, [3]int{known, knownHead, knownMem}, fail, run)
		})
		if last {
			if r.exited != nil || r.acks != 5 {
				fail("run %d (not killed): exit %v after %d acks; stderr: %s", run, r.exited, r.acks, r.stderr)
			}
		} else {
			var ee *exec.ExitError
			if !errors.As(r.exited, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				fail("run %d: the writer was not killed but ended with %v; stderr: %s", run, r.exited, r.stderr)
			}
			kills++
		}
		acked, rollbacks, memAcks = acked+r.acks, rollbacks+r.rollbacks, memAcks+r.memAcks
		n, head := checkAfterCrash(t, m, path, r, known, delays, fail, run)
		if n > max(r.lastAck, known) {
			extra += n - max(r.lastAck, known)
		}
		known, knownHead = n, head
		knownMem = checkMemoryAfterCrash(t, m.seed, path, r, fail, run)
	}
	// Any loss, or any version that is not exactly what was written, has
	// failed the test above: reaching here means none was lost.
	t.Logf("seed %d: runs %d, kills %d, acknowledged checkpoints %d (and %d rollbacks) and memories %d, committed but not yet acknowledged when killed %d, lost 0; the session has %d versions, the memory log %d entries, the file %d KiB; %.1fs",
		seed, runs+1, kills, acked, rollbacks, memAcks, extra, known, knownMem, fileKiB(t, path), time.Since(start).Seconds())
}

// runCrashWriter runs the writer and, unless last, kills it delay after it
// is ready. Every line goes to onLine as it arrives.
func runCrashWriter(t *testing.T, path, id string, seed uint64, delay time.Duration, last bool, onLine func(string, *crashRun)) *crashRun {
	t.Helper()
	extra := []string{fmt.Sprint("RETRACE_CRASH_SEED=", seed), "BBOLT_VERIFY=all"}
	if last {
		extra = append(extra, "RETRACE_TEST_N=5")
	}
	cmd := helperCmd(t, "crash-writer", path, id, extra...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	r := &crashRun{}
	waited := false
	defer func() { // a failed check ends the test here: do not leave the writer behind
		if !waited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	var kill <-chan time.Time
	ready := false
	deadline := time.NewTimer(2 * time.Minute) // only so that nothing waits forever
	defer deadline.Stop()
	for open := true; open; {
		select {
		case line, ok := <-lines:
			if !ok {
				open = false
				break
			}
			onLine(line, r)
			if !ready && strings.HasPrefix(line, "ready ") {
				ready = true
				if !last {
					kill = time.After(delay)
				}
			}
		case <-kill:
			_ = cmd.Process.Signal(syscall.SIGKILL)
			kill = nil
		case <-deadline.C:
			_ = cmd.Process.Kill()
			t.Fatalf("seed %d: the writer did not finish within 2 minutes", seed)
		}
	}
	r.exited, waited = cmd.Wait(), true
	r.stderr = stderr.String()
	return r
}

// checkCrashLine checks one line of the writer against the model: the
// writer must do exactly what the seed says.
func checkCrashLine(t *testing.T, m *crashModel, line string, r *crashRun, found [3]int, fail func(string, ...any), run int) {
	t.Helper()
	var a, b, c int
	switch {
	case scan(line, "ready %d %d %d", &a, &b, &c):
		if [3]int{a, b, c} != found {
			fail("run %d: the writer found %d versions, head v%d and %d memories; the last check found %v", run, a, b, c, found)
		}
		r.ackedCount, r.ackedHead, r.memories = a, b, c
	case scan(line, "mem %d", &a):
		if a != r.memories+1 {
			fail("run %d: the writer kept memory v%d after v%d", run, a, r.memories)
		}
		r.memories, r.memAcks = a, r.memAcks+1
	case scan(line, "head %d", &a):
		if target, ok := crashRollback(m.seed, r.ackedCount); !ok || target != a {
			fail("run %d: the writer rolled back to v%d after %d versions; the seed says %v %v", run, a, r.ackedCount, target, ok)
		}
		r.rollbacks++
		r.ackedHead = a
	case scan(line, "ack %d parent %d", &a, &b):
		m.upTo(t, a)
		if a != r.ackedCount+1 || b != m.parent[a] {
			fail("run %d: the writer acknowledged v%d under v%d; expected v%d under v%d", run, a, b, r.ackedCount+1, m.parent[r.ackedCount+1])
		}
		r.acks++
		r.lastAck, r.ackedCount, r.ackedHead = a, a, a
	default:
		fail("run %d: the writer said %q", run, line)
	}
}

func scan(line, format string, args ...any) bool {
	n, err := fmt.Sscanf(line, format, args...)
	return err == nil && n == len(args)
}

// checkAfterCrash checks the file after a run: it passes Verify; every
// acknowledged version is there, byte for byte; whatever else is there is
// at most the one step in flight, whole and exactly as the seed says; the
// head is where the writer left it; and the head's state (and one other
// version's) is the model's. It returns the versions and the head found.
func checkAfterCrash(t *testing.T, m *crashModel, path string, r *crashRun, known int, rng *rand.Rand, fail func(string, ...any), run int) (int, int) {
	t.Helper()
	ctx := context.Background()
	if err := boltstore.Verify(ctx, path); err != nil {
		fail("run %d: verify after the kill: %v", run, err)
	}
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		fail("run %d: open after the kill: %v", run, err)
	}
	defer st.Close()
	info, err := st.Session(ctx, m.id)
	if err != nil {
		fail("run %d: %v", run, err)
	}
	stored, err := st.StoredCheckpoints(ctx, m.id)
	if err != nil {
		fail("run %d: read the checkpoints: %v", run, err)
	}
	n, head := info.Versions, info.Head
	switch {
	case n < r.ackedCount:
		fail("run %d: LOST: %d versions acknowledged, %d in the file", run, r.ackedCount, n)
	case n > r.ackedCount+1:
		fail("run %d: %d versions in the file, but only %d acknowledged and one in flight", run, n, r.ackedCount)
	case len(stored) != n:
		fail("run %d: the session counts %d versions but holds %d", run, n, len(stored))
	}
	m.upTo(t, n)
	for i, cp := range stored {
		v := i + 1
		what := "acknowledged"
		if v > max(r.lastAck, known) {
			what = "unacknowledged"
		}
		ev := m.event[v]
		if cp.Version != v || cp.Parent != m.parent[v] || cp.Phase != m.phase[v] || cp.Kind != ev.Kind || !cp.At.Equal(ev.At) || !bytes.Equal(cp.Event, m.raw[v]) {
			fail("run %d: %s v%d (parent v%d, %s) is not what was written (parent v%d, %s):\n got %s\nwant %s",
				run, what, v, cp.Parent, cp.Phase, m.parent[v], m.phase[v], cp.Event, m.raw[v])
		}
	}

	// Each version's contents are there, whole: a checkpoint is durable
	// with them or not at all. (Verify above checked every content
	// against its digest; this checks they are the ones written.)
	checked := map[string]bool{}
	for v := 1; v <= n; v++ {
		for _, d := range m.event[v].BlobDigests() {
			if checked[d] {
				continue
			}
			checked[d] = true
			if got, err := st.Blob(ctx, d); err != nil || !bytes.Equal(got, m.blobs[d]) {
				fail("run %d: v%d's content %s: %d bytes, %v", run, v, d, len(got), err)
			}
		}
	}

	heads := []int{r.ackedHead}
	if n > r.ackedCount {
		heads = []int{n} // the commit in flight landed
	} else if target, ok := crashRollback(m.seed, n); ok && r.ackedHead == n {
		heads = append(heads, target) // the rollback in flight landed
	}
	if !slices.Contains(heads, head) {
		fail("run %d: the head is v%d; it may only be one of %v", run, head, heads)
	}
	head0, err := st.Head(ctx, m.id) // what the next writer resumes from
	if err != nil {
		fail("run %d: the head: %v", run, err)
	}
	v := rng.IntN(n + 1)
	other, err := st.At(ctx, m.id, v)
	if err != nil {
		fail("run %d: the state at v%d: %v", run, v, err)
	}
	for _, s := range []state.State{head0, other} {
		if got, want := mustJSON(t, s), m.stateJSON(t, s.Version); !bytes.Equal(got, want) {
			fail("run %d: the state at v%d is not the one its events make:\n got %.400s\nwant %.400s", run, s.Version, got, want)
		}
	}
	return n, head
}

// checkMemoryAfterCrash checks the memory log after a run (Verify has
// folded it): every acknowledged entry is there, exactly as the seed
// says, and at most the one in flight besides. It returns the entries
// found.
func checkMemoryAfterCrash(t *testing.T, seed uint64, path string, r *crashRun, fail func(string, ...any), run int) int {
	t.Helper()
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		fail("run %d: open after the kill: %v", run, err)
	}
	defer st.Close()
	log, err := st.MemoryEvents(context.Background())
	switch {
	case err != nil:
		fail("run %d: the memory log: %v", run, err)
	case len(log) < r.memories:
		fail("run %d: LOST: %d memories acknowledged, %d in the file", run, r.memories, len(log))
	case len(log) > r.memories+1:
		fail("run %d: %d memories in the file, but only %d acknowledged and one in flight", run, len(log), r.memories)
	}
	for i, got := range log {
		want := crashMemory(seed, i+1)
		if got.Version != i+1 || got.Kind != want.Kind || got.Memory.ID != want.Memory.ID || got.Memory.Text != want.Memory.Text || !got.At.Equal(want.At) {
			fail("run %d: memory v%d is %+v, not what was written: %+v", run, i+1, got, want)
		}
	}
	// The snapshot a task start reads is the log's, whatever the kill
	// cut short.
	folded, err := state.FoldMemories(log)
	if err != nil {
		fail("run %d: the memory log does not fold: %v", run, err)
	}
	now, err := st.MemoriesNow(context.Background())
	if err != nil || now.Version != folded.Version || !reflect.DeepEqual(now.List, folded.List) {
		fail("run %d: the memories now are v%d %d memories (%v); the log folds to v%d %d", run, now.Version, len(now.List), err, folded.Version, len(folded.List))
	}
	return len(log)
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a count", name, s)
	}
	return n
}

func fileKiB(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size() >> 10
}
