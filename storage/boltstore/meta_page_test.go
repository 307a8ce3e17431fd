package boltstore_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"retrace/storage"
	"retrace/storage/boltstore"
)

// The meta-page decision. bbolt keeps two meta pages and, when the newest
// fails its checksum, silently reads the file as of the commit before it:
// the latest checkpoint (or session) is gone without a word, and the next
// write reuses its pages. retrace refuses such a file, for reading and for
// writing, and leaves it untouched (restore a backup, or accept the
// previous commit with bbolt surgery revert-meta-page). A damaged older
// meta page loses nothing: bbolt reads the newest, and the next commit
// rewrites the older one, so that file is used as it is.
func TestDamagedMetaPage(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	goodPath := filepath.Join(dir, "good", "retrace.db")
	ids := buildGoodStore(t, goodPath)
	good, err := os.ReadFile(goodPath)
	if err != nil {
		t.Fatal(err)
	}
	newest, older := newestMeta(good)
	txid := binary.LittleEndian.Uint64(good[newest*4096+64:])
	heads := map[string]string{}
	for _, id := range ids {
		heads[id] = stateSum(readHead(t, goodPath, id))
	}
	flipChecksum := func(page int) (string, []byte) {
		b := bytes.Clone(good)
		b[page*4096+72] ^= 0x01 // the meta's checksum
		path := filepath.Join(dir, fmt.Sprintf("meta%d", page), "retrace.db")
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		writeVariant(t, path, b)
		return path, b
	}

	t.Run("newest damaged: refused, untouched", func(t *testing.T) {
		path, b := flipChecksum(newest)
		// What bbolt alone makes of it, on a copy: no error, one commit back.
		cp := filepath.Join(t.TempDir(), "copy.db")
		writeVariant(t, cp, b)
		db, err := bolt.Open(cp, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		var seen int
		_ = db.View(func(tx *bolt.Tx) error { seen = tx.ID(); return nil })
		db.Close()
		if uint64(seen) != txid-1 {
			t.Fatalf("bbolt read txid %d; expected its silent fall back to %d", seen, txid-1)
		}
		t.Logf("bbolt alone opens it without an error at txid %d, one commit before the newest (%d)", seen, txid)

		before := fileSum(t, path)
		_, err = boltstore.Open(path, boltstore.Options{})
		if !errors.Is(err, storage.ErrCorrupt) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), fmt.Sprintf("meta page %d", newest)) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("open: want one line wrapping storage.ErrCorrupt naming %s and meta page %d, got %v", path, newest, err)
		}
		t.Logf("refused: %v", err)
		if err := boltstore.Verify(ctx, path); !errors.Is(err, storage.ErrCorrupt) {
			t.Fatalf("verify: %v", err)
		}
		if err := tryWrite(path, ids[0]); err == nil {
			t.Fatal("a write to the file went through")
		}
		if fileSum(t, path) != before {
			t.Fatal("the file changed")
		}
	})

	t.Run("older damaged: intact, and the next commit repairs it", func(t *testing.T) {
		path, _ := flipChecksum(older)
		st, err := boltstore.Open(path, boltstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for _, id := range ids {
			s, err := st.Head(ctx, id)
			if err != nil || stateSum(s) != heads[id] {
				t.Fatalf("session %s: %v, or not the state the good file holds", id, err)
			}
		}
		s, err := st.Head(ctx, ids[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := storage.Commit(ctx, st, s, chatEvent(s, 99)); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for page := range 2 {
			m := b[page*4096+16 : page*4096+16+64]
			h := fnv.New64a()
			h.Write(m[:56])
			if h.Sum64() != binary.LittleEndian.Uint64(m[56:]) {
				t.Fatalf("after a commit, meta page %d still fails its checksum", page)
			}
		}
		if err := boltstore.Verify(ctx, path); err != nil {
			t.Fatal(err)
		}
	})
}
