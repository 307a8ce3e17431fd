package rewind

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"retrace/state"
	"retrace/storage"
)

// batchStore is a memStore that reads many contents in one go, counting
// its reads of either kind.
type batchStore struct {
	*memStore
	one, many int
}

func (b *batchStore) Blob(ctx context.Context, d string) ([]byte, error) {
	b.one++
	return b.memStore.Blob(ctx, d)
}

func (b *batchStore) Blobs(ctx context.Context, digests []string, fn func(string, []byte) error) error {
	b.many++
	for _, d := range digests {
		data, err := b.memStore.Blob(ctx, d)
		if err != nil {
			return fmt.Errorf("%w: %v", storage.ErrBlobNotFound, err)
		}
		if err := fn(d, data); err != nil {
			return err
		}
	}
	return nil
}

// A diff of a command that changed thousands of files reads their
// contents a batch at a time from a store that can, not one at a time;
// a content the store lacks is still the error it was.
func TestDiffAllReadsInBatches(t *testing.T) {
	st := &batchStore{memStore: newMemStore()}
	var changes []state.FileChange
	for i := range 2000 {
		data := fmt.Appendf(nil, "file %d\n", i)
		img := image(data, 0o644)
		st.blobs[img.Blob] = data
		changes = append(changes, state.FileChange{Path: fmt.Sprintf("gen/f%d", i), Before: state.FileImage{Absent: true}, After: img})
	}
	diffs, err := DiffAll(context.Background(), st, changes)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 2000 || diffs[1999].Stat() != "created gen/f1999 (+1)" {
		t.Fatalf("%d diffs, the last %q", len(diffs), diffs[len(diffs)-1].Stat())
	}
	if st.one != 0 || st.many > 4 {
		t.Errorf("2,000 contents read in %d reads one by one and %d batches, want none and at most 4", st.one, st.many)
	}
	delete(st.blobs, changes[700].After.Blob)
	if _, err := DiffAll(context.Background(), st, changes); err == nil {
		t.Error("a diff of a content the store lacks succeeded")
	}
}

// BenchmarkPlanOneOfManyFiles plans a rollback over one file in a session
// whose command made 100,000 files the rollback leaves as they are.
func BenchmarkPlanOneOfManyFiles(b *testing.B) {
	files := make(map[string]state.FileEntry, 100_001)
	for i := range 100_000 {
		img := image(fmt.Appendf(nil, "file %d\n", i), 0o644)
		files[fmt.Sprintf("gen/d%d/f%d.txt", i/1000, i)] = state.FileEntry{Was: state.FileImage{Absent: true}, Now: img}
	}
	target := state.State{Files: files}
	head := state.State{Files: maps.Clone(files)}
	head.Files["NOTES.md"] = state.FileEntry{Was: state.FileImage{Absent: true}, Now: image([]byte("a note\n"), 0o644)}
	for b.Loop() {
		if plan := Plan(head, target); len(plan) != 1 {
			b.Fatalf("plan of %d changes, want 1", len(plan))
		}
	}
}
