package boltstore

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"retrace/state"
	"retrace/storage"
)

// randomContent is n bytes that nothing compresses, made from seed, and
// the image of a file holding them.
func randomContent(seed byte, n int) (state.Blob, state.FileImage) {
	data := make([]byte, n)
	_, _ = rand.NewChaCha8([32]byte{seed}).Read(data)
	b := state.Blob{Digest: storage.Digest(data), Data: data}
	return b, state.FileImage{Blob: b.Digest, Size: int64(n), Mode: 0o644}
}

// fileEnd is the size a database file needs: its meta page's count of
// pages, and the one page past it bbolt grows the file to.
func fileEnd(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	m, err := checkOpenFile(f, fi, path)
	if err != nil {
		t.Fatal(err)
	}
	return int64(m.pgid+1) * int64(m.pageSize)
}

// A file whose free pages are fewer than the room bbolt adds past the
// last page when a file grows (16 MiB): a copy that kept that room came
// out larger than the file it was to shrink, 36.1 MiB to 45.2 MiB. The
// copy ends at its last page, and is the smaller.
func TestCompactedCopyEndsAtItsLastPage(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "retrace.db")
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	kept, err := st.Create(ctx, storage.NewSession{Title: "kept", CreatedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	gone, err := st.Create(ctx, storage.NewSession{Title: "gone", CreatedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	absent := state.FileImage{Absent: true}
	a, ai := randomContent(1, 20<<20)
	s := changeFiles(t, st, state.New(kept.ID), "a.bin", absent, ai, a)
	b, bi := randomContent(2, 5<<20)
	changeFiles(t, st, state.New(gone.ID), "b.bin", absent, bi, b)
	c, ci := randomContent(3, 9<<20)
	changeFiles(t, st, s, "c.bin", absent, ci, c)
	if err := st.Delete(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GC(ctx, GCOptions{Branches: true}); err != nil {
		t.Fatal(err)
	}
	want := exportJSON(t, st, kept.ID)
	if err := st.Release(kept.ID); err != nil {
		t.Fatal(err)
	}

	rep, err := st.Compact(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	size := fi.Size()
	t.Logf("compact: %d -> %d bytes (the copy %d)", rep.Before, rep.After, rep.Copy)
	if rep.Kept || rep.After >= rep.Before || rep.After != size || rep.Copy != size {
		t.Fatalf("compact: %+v; the file is %d bytes", rep, size)
	}
	if end := fileEnd(t, path); size > end {
		t.Errorf("the copy is %d bytes; its pages end at %d", size, end)
	}
	if got := exportJSON(t, st, kept.ID); got != want {
		t.Error("the session reads differently after compact")
	}
	if err := Verify(ctx, path); err != nil {
		t.Fatal(err)
	}
}

// A file the copy cannot shrink (one compacted already) stays as it was:
// the same file, byte for byte, and the report says the copy was not
// smaller, and never that it gave back less than nothing.
func TestCompactKeepsAFileItCannotShrink(t *testing.T) {
	ctx := context.Background()
	f := buildGCFile(t)
	f.other.Close()
	st := f.open(t)
	if _, err := st.GC(ctx, GCOptions{OlderThan: 90 * 24 * time.Hour, Branches: true}); err != nil {
		t.Fatal(err)
	}
	first, err := st.Compact(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if first.Kept || first.After >= first.Before {
		t.Fatalf("the first compact: %+v", first)
	}
	before, err := os.Stat(f.path)
	if err != nil {
		t.Fatal(err)
	}
	sum := fileSum(t, f.path)

	rep, err := st.Compact(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("compact again: %+v", rep)
	if !rep.Kept || rep.Before != before.Size() || rep.After != rep.Before || rep.Copy < rep.Before {
		t.Fatalf("compact of a file compacted already: %+v; the file was %d bytes", rep, before.Size())
	}
	after, err := os.Stat(f.path)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) || fileSum(t, f.path) != sum {
		t.Fatal("the file was replaced or changed")
	}
	if strays, _ := filepath.Glob(f.path + ".compact-*"); len(strays) > 0 {
		t.Errorf("left %v", strays)
	}
	if err := Verify(ctx, f.path); err != nil {
		t.Fatal(err)
	}
}
