package boltstore_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
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
// writing, and leaves it untouched. A damaged page cannot say whether it
// was the newest (its txid is damaged too; see
// TestDamagedNewestMetaPassingForAnOlderOne), so a damaged older page is
// refused just the same, and the way out the error names (copy the valid
// meta page over the damaged one, into a new file) then loses nothing.
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

	t.Run("older damaged: refused too, and the way out loses nothing", func(t *testing.T) {
		path, _ := flipChecksum(older)
		before := fileSum(t, path)
		_, err := boltstore.Open(path, boltstore.Options{})
		way := fmt.Sprintf("`bbolt surgery copy-page %s --from-page %d --to-page %d --output NEW.db`", path, newest, older)
		if !errors.Is(err, storage.ErrCorrupt) || !strings.Contains(err.Error(), fmt.Sprintf("meta page %d is damaged", older)) || !strings.Contains(err.Error(), way) {
			t.Fatalf("open: want storage.ErrCorrupt naming meta page %d and %s, got %v", older, way, err)
		}
		if err := tryWrite(path, ids[0]); err == nil {
			t.Fatal("a write to the file went through")
		}
		if fileSum(t, path) != before {
			t.Fatal("the file changed")
		}

		// The way out, as bbolt surgery copy-page does it: the valid
		// page's bytes, with the damaged page's id in its header.
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		copy(b[older*4096:(older+1)*4096], b[newest*4096:(newest+1)*4096])
		binary.LittleEndian.PutUint64(b[older*4096:], uint64(older))
		out := filepath.Join(t.TempDir(), "NEW.db")
		writeVariant(t, out, b)
		st, err := boltstore.Open(out, boltstore.Options{})
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
		if err := boltstore.Verify(ctx, out); err != nil {
			t.Fatal(err)
		}
	})
}

// The attack that got past the old rule (a damaged page was accepted when
// its txid was one below the valid page's, as the older page's is): bit 1
// of the newest meta page's txid T flipped reads T-2, one below the older
// page's T-1. bbolt opens the file at T-1 without a word, losing commit T,
// here a whole checkpoint; retrace refuses it.
func TestDamagedNewestMetaPassingForAnOlderOne(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "retrace.db")
	id := ackedStore(t, path)[0]
	txidOf := func(b []byte) uint64 {
		newest, _ := newestMeta(b)
		return binary.LittleEndian.Uint64(b[newest*4096+64:])
	}
	readFile := func() []byte {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// Commit T is to be a checkpoint with bit 1 of T set: renames (one
	// commit each) until the next commit is such a T.
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for (txidOf(readFile())+1)&2 == 0 {
		if err := st.Rename(ctx, id, "renamed"); err != nil {
			t.Fatal(err)
		}
	}
	s, err := st.Head(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if s, err = storage.Commit(ctx, st, s, chatEvent(s, 7)); err != nil {
		t.Fatal(err)
	}
	st.Close()
	b := readFile()
	newest, older := newestMeta(b)
	txid := txidOf(b)
	b[newest*4096+64] ^= 0x02 // bit 1 of the txid: T reads T-2
	if got := binary.LittleEndian.Uint64(b[newest*4096+64:]); got != txid-2 {
		t.Fatalf("the flipped txid reads %d; want %d", got, txid-2)
	}
	writeVariant(t, path, b)

	// bbolt alone, on a copy: no error, one commit back, the checkpoint
	// gone.
	cp := filepath.Join(t.TempDir(), "copy.db")
	writeVariant(t, cp, b)
	db, err := bolt.Open(cp, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var seen int
	var found bool
	_ = db.View(func(tx *bolt.Tx) error {
		seen = tx.ID()
		found = tx.Bucket([]byte("sessions")).Bucket([]byte(id)).Bucket([]byte("v")).Get(binary.BigEndian.AppendUint64(nil, uint64(s.Version))) != nil
		return nil
	})
	db.Close()
	if uint64(seen) != txid-1 || found {
		t.Fatalf("bbolt read txid %d (checkpoint v%d there: %v); expected its silent fall back to %d without it", seen, s.Version, found, txid-1)
	}
	t.Logf("bbolt alone opens it without an error at txid %d, without checkpoint v%d, acknowledged at txid %d", seen, s.Version, txid)

	before := fileSum(t, path)
	_, err = boltstore.Open(path, boltstore.Options{})
	if !errors.Is(err, storage.ErrCorrupt) || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), fmt.Sprintf("meta page %d is damaged", newest)) || !strings.Contains(err.Error(), fmt.Sprintf("meta page %d (txid %d)", older, txid-1)) {
		t.Fatalf("open: want one line wrapping storage.ErrCorrupt naming %s and meta page %d, got %v", path, newest, err)
	}
	t.Logf("refused: %v", err)
	if err := boltstore.Verify(ctx, path); !errors.Is(err, storage.ErrCorrupt) {
		t.Fatalf("verify: %v", err)
	}
	if err := tryWrite(path, id); err == nil {
		t.Fatal("a write to the file went through")
	}
	if fileSum(t, path) != before {
		t.Fatal("the file changed")
	}
}
