package snapshot

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"
)

func TestObjectsRoundTrip(t *testing.T) {
	o := newObjects(t.TempDir())
	for _, data := range [][]byte{nil, []byte("x"), make([]byte, 1<<20)} {
		sum := sha256.Sum256(data)
		if err := o.put(sum, data); err != nil {
			t.Fatal(err)
		}
		if err := o.put(sum, data); err != nil {
			t.Fatalf("a second put of the same content: %v", err)
		}
		got, ok := o.get(sum, int64(len(data)))
		if !ok || string(got) != string(data) {
			t.Errorf("%d bytes: get = %d bytes, %v", len(data), len(got), ok)
		}
		if _, ok := o.get(sum, int64(len(data))+1); ok {
			t.Errorf("%d bytes: get with the wrong size succeeded", len(data))
		}
	}
}

// The content cache keeps many small contents in a few files: a command
// that makes thousands of files must not leave as many in the cache.
func TestContentCacheIsPacked(t *testing.T) {
	f := newFixture(t, Options{})
	for i := range 500 {
		f.write(fmt.Sprintf("gen/d%d/f%d.txt", i/100, i), fmt.Sprintf("file %d\n", i))
	}
	f.mark()
	n := 0
	err := filepath.WalkDir(f.opts.CacheDir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// A pack, its index, and the workspace's stat index.
	if n > 3 {
		t.Errorf("the cache holds 500 contents in %d files, want at most 3", n)
	}
}

// A content one process keeps is found by another once the scan that
// kept it has ended, and by the same process at once.
func TestContentCacheIsShared(t *testing.T) {
	dir := t.TempDir()
	a, b := newObjects(dir), newObjects(dir)
	t.Cleanup(func() { _ = a.close(); _ = b.close() })
	data := []byte("shared content")
	sum := sha256.Sum256(data)
	if err := a.put(sum, data); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.get(sum, int64(len(data))); !ok {
		t.Error("the process that kept the content does not find it")
	}
	if err := a.seal(); err != nil {
		t.Fatal(err)
	}
	if got, ok := b.get(sum, int64(len(data))); !ok || string(got) != string(data) {
		t.Errorf("another process finds %q, %v", got, ok)
	}
}

// FuzzPackIndex feeds the pack index decoder damaged indexes, as they are
// and with the checksum made right: it must never panic, and what it
// accepts must survive another round trip unchanged.
func FuzzPackIndex(f *testing.F) {
	sum := sha256.Sum256([]byte("x"))
	f.Add(encodeIdx([]idxEntry{{sum: sum, off: 20, len: 10, size: 1}, {off: 40, len: 3}}))
	f.Add(encodeIdx(nil))
	f.Add([]byte(idxMagic + "\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		body := data
		if len(data) >= sha256.Size {
			body = data[:len(data)-sha256.Size]
		}
		check := sha256.Sum256(body)
		for _, in := range [][]byte{data, append(body[:len(body):len(body)], check[:]...)} {
			entries, err := decodeIdx(in)
			if err != nil {
				continue
			}
			for _, e := range entries {
				if e.off < int64(len(packMagic)+1) || e.len < 0 || e.size < 0 {
					t.Fatalf("accepted an entry out of range: %+v", e)
				}
			}
			again, err := decodeIdx(encodeIdx(slices.Clone(entries)))
			if err != nil || len(again) != len(entries) {
				t.Fatalf("round trip of an accepted index: %v", err)
			}
		}
	})
}
