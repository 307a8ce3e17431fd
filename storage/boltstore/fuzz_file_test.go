package boltstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// FuzzOpenFile hands the store whole files: it writes the fuzzer's bytes
// to a file, opens it, lists the sessions, reads every session's tree and
// head, and verifies it. Nothing may panic or crash; every error is one
// line that names the file and wraps one of the storage errors for a bad
// file; and the file may only change by the one write a read ever makes:
// upgrading a sound bbolt file with no buckets (schema 0) to an empty
// retrace database.
//
// The seeds are small real stores and damaged copies of them. Run it with
//
//	go test -run '^$' -fuzz FuzzOpenFile -fuzztime 60s -fuzzminimizetime 2s ./storage/boltstore/
func FuzzOpenFile(f *testing.F) {
	for _, seed := range fuzzFileSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "retrace.db")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		sessions, errs := readWholeFile(path)
		for _, err := range errs {
			msg := err.Error()
			switch {
			case strings.HasPrefix(msg, "PANIC"):
				t.Fatal(msg)
			case strings.Contains(msg, "\n") || !strings.Contains(msg, path):
				t.Fatalf("the error must be one line naming %s: %q", path, msg)
			case !errors.Is(err, storage.ErrCorrupt) && !errors.Is(err, storage.ErrNotDatabase) && !errors.Is(err, storage.ErrTooNew):
				t.Fatalf("the error wraps none of storage's errors for a bad file: %q", msg)
			}
		}
		after, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(after, data) {
			return
		}
		if len(errs) > 0 || sessions != 0 {
			t.Fatalf("the file changed, and it was no schema-0 file being upgraded (%d sessions, errors %v)", sessions, errs)
		}
		if err := boltstore.Verify(context.Background(), path); err != nil {
			t.Fatalf("the file was upgraded, and the result does not verify: %v", err)
		}
	})
}

// readWholeFile runs every read on path and returns the number of sessions
// listed and the errors; a panic comes back as an error starting with
// PANIC.
func readWholeFile(path string) (sessions int, errs []error) {
	defer func() {
		if r := recover(); r != nil {
			errs = append(errs, fmt.Errorf("PANIC: %v", r))
		}
	}()
	keep := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	ctx := context.Background()
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		return 0, []error{err}
	}
	defer st.Close()
	list, err := st.Sessions(ctx)
	keep(err)
	for _, info := range list {
		_, err := st.Tree(ctx, info.ID)
		keep(err)
		_, err = st.Head(ctx, info.ID)
		keep(err)
	}
	keep(boltstore.Verify(ctx, path))
	return len(list), errs
}

// fuzzFileSeeds are three small stores (one session; two sessions with a
// fork; a content kept in chunks), a schema-0 file, and damaged copies of
// the stores.
func fuzzFileSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	ctx := context.Background()
	dir := tb.TempDir()
	small := func(name string, sessions int, fork bool) []byte {
		path := filepath.Join(dir, name)
		st, err := boltstore.Open(path, boltstore.Options{})
		if err != nil {
			tb.Fatal(err)
		}
		defer st.Close()
		for i := range sessions {
			info, err := st.Create(ctx, storage.NewSession{Title: fmt.Sprint("fuzz ", i)})
			if err != nil {
				tb.Fatal(err)
			}
			cur := storage.NewCursor(st, state.New(info.ID))
			for j := range 6 {
				if _, err := cur.Commit(ctx, chatEvent(cur.State(), j)); err != nil {
					tb.Fatal(err)
				}
			}
			if fork {
				if err := st.SetHead(ctx, info.ID, 2); err != nil {
					tb.Fatal(err)
				}
				s, err := st.At(ctx, info.ID, 2)
				if err != nil {
					tb.Fatal(err)
				}
				if _, err := storage.Commit(ctx, st, s, chatEvent(s, 9)); err != nil {
					tb.Fatal(err)
				}
			}
		}
		b, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	one, two := small("one.db", 1, false), small("two.db", 2, true)
	chunked := chunkedFile(tb, filepath.Join(dir, "chunked.db"))
	seeds := [][]byte{one, two, schema0File(tb, filepath.Join(dir, "schema0.db")), chunked}
	edit := func(b []byte, fn func(c []byte)) []byte {
		c := bytes.Clone(b)
		fn(c)
		return c
	}
	for _, b := range [][]byte{one, two, chunked} {
		newest, _ := newestMeta(b)
		seeds = append(seeds,
			b[:len(b)/2],
			edit(b, func(c []byte) { c[newest*4096+64] ^= 1 }),    // newest meta page's txid
			edit(b, func(c []byte) { clear(c[2*4096 : 3*4096]) }), // a page zeroed
		)
		if i := bytes.Index(b, []byte("question 2")); i > 0 {
			seeds = append(seeds, edit(b, func(c []byte) { c[i] ^= 0x20 })) // a value byte
		}
	}
	return seeds
}

// chunkedFile writes a store of one session whose tool call wrote a
// content kept in chunks: a repeated line, so its chunks are records of a
// few bytes and the file stays small.
func chunkedFile(tb testing.TB, path string) []byte {
	tb.Helper()
	ctx := context.Background()
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	info, err := st.Create(ctx, storage.NewSession{Title: "chunked"})
	if err != nil {
		tb.Fatal(err)
	}
	data := bytes.Repeat([]byte("question 2: a line kept in chunks\n"), 2*boltstore.ChunkSize/34)
	img := state.FileImage{Blob: storage.Digest(data), Size: int64(len(data)), Mode: 0o644}
	evs := boltstore.FileChangeEvents(state.Idle, "call_1", state.FileChange{Path: "big.txt", Before: state.FileImage{Absent: true}, After: img})
	evs[len(evs)-1].Blobs = []state.Blob{{Digest: img.Blob, Data: data}}
	cur := storage.NewCursor(st, state.New(info.ID))
	for _, ev := range evs {
		if _, err := cur.Commit(ctx, ev); err != nil {
			tb.Fatal(err)
		}
	}
	st.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// schema0File writes a bbolt file with no buckets: schema 0.
func schema0File(tb testing.TB, path string) []byte {
	tb.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	if err := db.Close(); err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
