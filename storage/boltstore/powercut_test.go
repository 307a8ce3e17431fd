package boltstore_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"retrace/internal/powercut"
	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// The power-cut test proves that what the store acknowledges is on disk
// before it returns, on every path that writes the file: checkpoints
// (with rollbacks), the memory log, and compact, whose new file replaces
// the old one by a rename. A writer process creates a database (two
// directories deep, as on a first run: each new directory's name must be
// synced into its parent), commits checkpoints and memories, compacts the
// file, and commits more, printing a line for each as soon as it is
// acknowledged; package powercut replays what strace saw of it against a
// disk that loses power, and at every cut the file that is left must open
// and hold every acknowledged checkpoint and memory, exactly as written.
//
// Turning off bbolt's fdatasync (NoSync), the directory sync after the
// file is created, the sync of a new data directory's parent, or the
// directory sync after compact's rename makes this test fail.
func TestPowerCutLosesNoAcknowledgedCheckpoint(t *testing.T) {
	seed := powercut.Seed(t)
	n := envInt(t, "RETRACE_POWERCUT_N", 60)
	t.Logf("seed %d, %d checkpoints (replay: RETRACE_CRASH_SEED=%d)", seed, n, seed)
	dir := t.TempDir()
	db := filepath.Join(dir, "data", "retrace", "retrace.db")
	// Half the checkpoints before the compaction, half after.
	rec := powercut.Run(t, []string{"-test.run=^$"}, "RETRACE_TEST_ROLE=powercut-writer", "RETRACE_TEST_DB="+db,
		fmt.Sprintf("RETRACE_CRASH_SEED=%d", seed), fmt.Sprintf("RETRACE_TEST_N=%d", n/2))
	var acks []string
	syncs, cuts := rec.Replay(t, filepath.Dir(db), seed, func(c *powercut.Cut, lines []string) {
		checkCut(t, c, db, seed, lines)
		acks = lines
	})
	if got := countPrefix(acks, "ack "); got != n/2*2 || countPrefix(acks, "compacted") != 1 {
		t.Fatalf("the trace holds %d acknowledged checkpoints and %d compactions; the writer made %d and 1:\n%s",
			got, countPrefix(acks, "compacted"), n/2*2, rec.Stdout)
	}
	t.Logf("seed %d: %d syncs, %d power cuts checked, %d acknowledged checkpoints, %d memories, a compaction, none lost",
		seed, syncs, cuts, n/2*2, countPrefix(acks, "mem "))
}

// checkCut opens the database a power cut leaves, and checks every
// promise the writer made before it.
func checkCut(t *testing.T, c *powercut.Cut, db string, seed uint64, acks []string) {
	t.Helper()
	var id string
	for _, a := range acks {
		if rest, ok := strings.CutPrefix(a, "session "); ok {
			id = rest
		}
	}
	image, exists := c.File(db)
	if id == "" {
		return // nothing was promised yet
	}
	if !exists {
		t.Fatalf("seed %d: a power cut before call %d leaves no %s, though session %s was acknowledged", seed, c.At, filepath.Base(db), id)
	}
	cut := filepath.Join(t.TempDir(), "retrace.db")
	if err := os.WriteFile(cut, image, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := boltstore.Open(cut, boltstore.Options{})
	if err != nil {
		t.Fatalf("seed %d: after a power cut before call %d the store does not open: %v", seed, c.At, err)
	}
	defer st.Close()
	ctx := context.Background()
	ex, err := st.Export(ctx, id)
	if err != nil {
		t.Fatalf("seed %d: after a power cut before call %d, session %s: %v", seed, c.At, id, err)
	}
	checkCheckpoints(t, c.At, seed, id, ex, acks)
	memories, err := st.MemoryEvents(ctx)
	if err != nil {
		t.Fatalf("seed %d: after a power cut before call %d, the memory log: %v", seed, c.At, err)
	}
	for _, a := range acks {
		var v int
		if _, err := fmt.Sscanf(a, "mem %d", &v); err != nil {
			continue
		}
		if v > len(memories) || memories[v-1].Version != v || memories[v-1].Memory.Text != crashMemory(seed, v).Memory.Text {
			t.Fatalf("seed %d: a power cut before call %d lost acknowledged memory v%d (the log keeps %d)", seed, c.At, v, len(memories))
		}
	}
}

// checkCheckpoints checks every acknowledged checkpoint is in ex, whole
// and exactly as written.
func checkCheckpoints(t *testing.T, at int, seed uint64, id string, ex storage.Export, acks []string) {
	t.Helper()
	m := newCrashModel(seed, id)
	have := map[int]storage.Record{}
	for _, r := range ex.Checkpoints {
		have[r.Version] = r
	}
	for _, a := range acks {
		var v, p int
		if _, err := fmt.Sscanf(a, "ack %d parent %d", &v, &p); err != nil {
			continue
		}
		m.upTo(t, v)
		r, ok := have[v]
		if !ok {
			t.Fatalf("seed %d: a power cut before call %d lost acknowledged checkpoint v%d (the file keeps %d versions)", seed, at, v, len(ex.Checkpoints))
		}
		raw, err := state.EncodeEvent(r.Data)
		if err != nil {
			t.Fatal(err)
		}
		if r.Parent != m.parent[v] || !bytes.Equal(raw, m.raw[v]) {
			t.Fatalf("seed %d: after a power cut before call %d, v%d is not what was written", seed, at, v)
		}
		for _, d := range m.event[v].BlobDigests() {
			if !bytes.Equal(ex.Blobs[d], m.blobs[d]) {
				t.Fatalf("seed %d: a power cut before call %d lost v%d's content %s", seed, at, v, d)
			}
		}
	}
}

func countPrefix(lines []string, prefix string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// powercutWriter is the traced process (RETRACE_TEST_ROLE=powercut-
// writer): it creates the database and a session, says so, commits
// RETRACE_TEST_N checkpoints as the crash writer does, compacts the file,
// says so, and commits as many again into the compacted file.
func powercutWriter(path string) error {
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		return err
	}
	info, err := st.Create(context.Background(), storage.NewSession{Title: "power cut"})
	if err != nil {
		return err
	}
	if err := st.Close(); err != nil {
		return err
	}
	if _, err := fmt.Printf("session %s\n", info.ID); err != nil {
		return err
	}
	if err := crashWriter(path, info.ID); err != nil {
		return err
	}
	if st, err = boltstore.Open(path, boltstore.Options{}); err != nil {
		return err
	}
	if _, err := st.Compact(context.Background()); err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	if err := st.Close(); err != nil {
		return err
	}
	if _, err := fmt.Println("compacted"); err != nil {
		return err
	}
	return crashWriter(path, info.ID)
}
