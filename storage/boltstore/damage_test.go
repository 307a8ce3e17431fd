package boltstore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
)

const marker = "MARKER-the-text-a-flipped-byte-will-hit"

// goodStore writes a small store with one session of 40 checkpoints and
// returns its path, the session id and the file's bytes.
func goodStore(t *testing.T) (string, string, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "retrace.db")
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Create(context.Background(), storage.NewSession{Title: "good"})
	if err != nil {
		t.Fatal(err)
	}
	s := state.New(info.ID)
	for i := range 40 {
		ev := chatEvent(s, i)
		if i == 17 {
			ev.Messages[0].Content = marker
		}
		if s, err = storage.Commit(context.Background(), st, s, ev); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, info.ID, b
}

// readAll opens the store and reads everything in it, returning the first
// error. It must never panic.
func readAll(path, id string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("PANIC: %v", r)
		}
	}()
	ctx := context.Background()
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := st.Sessions(ctx); err != nil {
		return err
	}
	if _, err := st.Tree(ctx, id); err != nil {
		return err
	}
	if _, err := st.Head(ctx, id); err != nil {
		return err
	}
	return boltstore.Verify(ctx, path)
}

func writeVariant(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// Damaged files give an error naming the file (and, for a bad record, the
// session and version), never a panic, and are never modified.
func TestDamagedFiles(t *testing.T) {
	path, id, good := goodStore(t)
	const page = 4096
	type variant struct {
		name string
		data []byte
		// wantIn lists what the error must mention besides the path.
		wantIn []string
	}
	var variants []variant
	flip := func(b []byte, at int) []byte {
		c := bytes.Clone(b)
		c[at] ^= 0x20
		return c
	}
	zeroPage := func(b []byte, n int) []byte {
		c := bytes.Clone(b)
		clear(c[n*page : (n+1)*page])
		return c
	}
	variants = append(variants,
		variant{"zero length", nil, []string{"empty"}},
		variant{"garbage", randomBytes(64 << 10), nil},
		variant{"text file", []byte("# notes\nnot a database\n"), nil},
		variant{"both meta pages zeroed", zeroPage(zeroPage(good, 0), 1), nil},
		variant{"value byte flipped", flip(good, bytes.Index(good, []byte(marker))+5), []string{"session " + id, "version 18", "checksum"}},
	)
	for n := 2; n*page < len(good); n++ {
		if !bytes.Equal(good[n*page:(n+1)*page], make([]byte, page)) {
			variants = append(variants, variant{fmt.Sprintf("page %d zeroed", n), zeroPage(good, n), nil})
		}
	}
	for size := len(good) - page; size > 0; size -= page {
		variants = append(variants, variant{fmt.Sprintf("truncated to %d", size), good[:size], nil})
	}

	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			writeVariant(t, path, v.data)
			before := fileSum(t, path)
			err := readAll(path, id)
			if err != nil && strings.HasPrefix(err.Error(), "PANIC") {
				t.Fatal(err)
			}
			if fileSum(t, path) != before {
				t.Fatal("reading a damaged file changed it")
			}
			if err == nil {
				// Only damage to pages nothing refers to may go unnoticed,
				// and then every checkpoint must still be there.
				if got := readHead(t, path, id); got.Version != 40 || !strings.Contains(fmt.Sprint(got.History), marker) {
					t.Fatalf("no error, but the data changed: v%d", got.Version)
				}
				return
			}
			if msg := err.Error(); !strings.Contains(msg, path) || strings.Contains(msg, "\n") {
				t.Fatalf("error must be one line naming %s: %q", path, msg)
			}
			for _, w := range v.wantIn {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			// A writer must refuse it too, without touching it.
			if werr := tryWrite(path, id); werr == nil || strings.HasPrefix(werr.Error(), "PANIC") {
				t.Fatalf("write to a damaged file: %v", werr)
			}
			if fileSum(t, path) != before {
				t.Fatal("a refused write changed the file")
			}
		})
	}
}

func readHead(t *testing.T, path, id string) state.State {
	t.Helper()
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := st.Head(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func tryWrite(path, id string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("PANIC: %v", r)
		}
	}()
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := st.Create(context.Background(), storage.NewSession{Title: "x"}); err != nil {
		return err
	}
	return st.SetHead(context.Background(), id, 1)
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

func TestPathsThatAreNotDatabases(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plain.txt")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, path := range map[string]string{
		"a directory":             dir,
		"under a regular file":    filepath.Join(file, "retrace.db"),
		"in an unwritable place":  "/sys/retrace-test/retrace.db",
		"a file too short to say": file,
	} {
		t.Run(name, func(t *testing.T) {
			err := tryWrite(path, "0123456789abcdef")
			if err == nil || strings.HasPrefix(err.Error(), "PANIC") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v", err)
			}
			if !strings.Contains(err.Error(), path) && !strings.Contains(err.Error(), filepath.Dir(path)) {
				t.Fatalf("error %q does not say where", err)
			}
		})
	}
}

func TestSchema(t *testing.T) {
	ctx := context.Background()
	makeBolt := func(t *testing.T, fn func(tx *bolt.Tx) error) string {
		path := filepath.Join(t.TempDir(), "retrace.db")
		db, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Update(fn); err != nil {
			t.Fatal(err)
		}
		db.Close()
		return path
	}

	t.Run("an empty bbolt file is migrated from schema 0", func(t *testing.T) {
		path := makeBolt(t, func(*bolt.Tx) error { return nil })
		st, err := boltstore.Open(path, boltstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if _, err := st.Create(ctx, storage.NewSession{Title: "after migration"}); err != nil {
			t.Fatal(err)
		}
		if err := boltstore.Verify(ctx, path); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("another program's bbolt file is refused", func(t *testing.T) {
		path := makeBolt(t, func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("widgets")); return err })
		before := fileSum(t, path)
		_, err := boltstore.Open(path, boltstore.Options{})
		if !errors.Is(err, storage.ErrNotDatabase) || !strings.Contains(err.Error(), "widgets") {
			t.Fatalf("got %v", err)
		}
		if fileSum(t, path) != before {
			t.Fatal("refusing the file changed it")
		}
	})
	t.Run("a newer schema is refused", func(t *testing.T) {
		path := makeBolt(t, func(tx *bolt.Tx) error {
			for _, name := range []string{"retrace", "sessions"} {
				if _, err := tx.CreateBucket([]byte(name)); err != nil {
					return err
				}
			}
			return tx.Bucket([]byte("retrace")).Put([]byte("schema"), []byte{0, 0, 0, 99})
		})
		before := fileSum(t, path)
		_, err := boltstore.Open(path, boltstore.Options{})
		if !errors.Is(err, storage.ErrTooNew) || !strings.Contains(err.Error(), "schema 99") {
			t.Fatalf("got %v", err)
		}
		if fileSum(t, path) != before {
			t.Fatal("refusing the file changed it")
		}
	})
}

// A new database is private: the file 0600, its directories 0700.
// Reading a database that does not exist finds no sessions and writes
// nothing: not the file, not its directory, not the lock directory.
func TestReadingAMissingFileCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "typo.db")
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	if list, err := st.Sessions(ctx); err != nil || len(list) != 0 {
		t.Fatalf("sessions of a missing file: %v, %v", list, err)
	}
	if _, err := st.Resolve(ctx, "ab"); !errors.Is(err, storage.ErrSessionNotFound) {
		t.Fatalf("resolve in a missing file: %v", err)
	}
	if err := boltstore.Verify(ctx, path); err != nil {
		t.Fatalf("verify a missing file: %v", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 0 {
		t.Fatalf("reads left %v behind (%v)", entries, err)
	}
}

func TestNewFilePermissions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "retrace", "retrace.db")
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Create(context.Background(), storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{
		path: 0o600, filepath.Dir(path): 0o700, filepath.Dir(filepath.Dir(path)): 0o700, path + ".locks": 0o700,
	} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %o, want %o", p, got, want)
		}
	}
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*.new-*"))
	if len(matches) > 0 {
		t.Errorf("temporary files left behind: %v", matches)
	}
}
