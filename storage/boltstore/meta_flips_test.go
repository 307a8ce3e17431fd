package boltstore_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"retrace/state"
	"retrace/state/statetest"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// Every single-bit flip of both meta pages of a small store. bbolt falls
// back silently to the other meta page when one fails its checksum, and a
// damaged page's txid cannot say whether it was the newest: bit 1 of the
// newest txid T flipped reads T-2, which looks like the page before the
// older one. So for each variant the store either opens and reads back
// exactly the checkpoints acknowledged before the damage, or refuses the
// file with one line that names it; never an open one commit back, never a
// panic, and a refused file is left as it was.
//
// By default the flips cover every bit of the first 80 bytes of each meta
// page (the 16-byte page header, then the meta: magic to checksum), where
// every byte bbolt or retrace reads lies, and a sample of the unused rest
// of the page (one bit of every 61st byte). RETRACE_META_FLIPS=all flips
// every bit of both pages: 65,536 variants, which took 68 s (3 min with
// -race) on the 2-core development machine, against under a second (3 s)
// for the default 1,412.
//
// The variants run in a helper process, as the damage matrix's do, so that
// a fault the runtime cannot recover from names the variant that caused it.
func TestMetaPageBitFlips(t *testing.T) {
	goodPath := filepath.Join(t.TempDir(), "good", "retrace.db")
	ids := ackedStore(t, goodPath)
	good, err := os.ReadFile(goodPath)
	if err != nil {
		t.Fatal(err)
	}
	newest, _ := newestMeta(good)
	txid := binary.LittleEndian.Uint64(good[newest*page+64:])
	if txid&2 == 0 {
		t.Fatalf("the newest txid %d has bit 1 clear: the flip to T-2 is not in the corpus", txid)
	}
	want, err := readBack(goodPath, ids)
	if err != nil {
		t.Fatal(err)
	}

	scope := "header"
	if os.Getenv("RETRACE_META_FLIPS") == "all" {
		scope = "all"
	}
	flips := metaFlips(scope)
	work := filepath.Join(t.TempDir(), "variant", "retrace.db")
	cmd := helperCmd(t, "meta-flips", goodPath, strings.Join(ids, ","), "RETRACE_TEST_FLIPS="+scope, "RETRACE_TEST_WORK="+work)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	seen, intact, refused := 0, 0, 0
	for line := range strings.Lines(string(stdout)) {
		var r flipReport
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("the helper said %q", line)
		}
		if r.flip != flips[seen] {
			t.Fatalf("report %d is of %+v; want %+v", seen, r.flip, flips[seen])
		}
		seen++
		name := fmt.Sprintf("meta page %d byte %d bit %d", r.Page, r.Byte, r.Bit)
		switch {
		case r.Panic != "":
			t.Errorf("%s: panic: %s", name, r.Panic)
		case r.Changed:
			t.Errorf("%s: reading the file changed it", name)
		case r.Err == "" && r.Result != want:
			t.Errorf("%s: opened, but read back something other than the acknowledged checkpoints (newest txid %d)", name, txid)
		case r.Err == "":
			intact++
		case !r.Typed || strings.Contains(r.Err, "\n") || !strings.Contains(r.Err, r.Path):
			t.Errorf("%s: the error must be one line naming %s and wrap storage.ErrCorrupt or ErrNotDatabase: %q", name, r.Path, r.Err)
		default:
			refused++
		}
	}
	if err != nil {
		at := "before the first variant"
		if seen < len(flips) {
			at = fmt.Sprintf("on meta page %d byte %d bit %d", flips[seen].Page, flips[seen].Byte, flips[seen].Bit)
		}
		t.Fatalf("the helper died %s: %v\n%s", at, err, firstLines(stderr.String(), 40))
	}
	if seen != len(flips) {
		t.Fatalf("the helper reported %d of %d variants", seen, len(flips))
	}
	if t.Failed() {
		return
	}
	t.Logf("%d single-bit flips of the meta pages of a %d KiB store (newest txid %d, flips: %s): %d opened and read back every acknowledged checkpoint, %d refused in one line naming the file; 0 opened at an older commit, 0 panics",
		len(flips), len(good)>>10, txid, scope, intact, refused)
}

// flip is one bit of one meta page.
type flip struct {
	Page int `json:"page"`
	Byte int `json:"byte"`
	Bit  int `json:"bit"`
}

// flipReport is what the helper saw of one flipped file.
type flipReport struct {
	flip
	Path    string `json:"path"`
	Result  string `json:"result,omitempty"` // readBack's digest
	Err     string `json:"err,omitempty"`
	Typed   bool   `json:"typed,omitempty"` // wraps storage.ErrCorrupt or ErrNotDatabase
	Panic   string `json:"panic,omitempty"`
	Changed bool   `json:"changed,omitempty"` // reading changed the file
}

// metaFlips lists the flips of a scope ("header" or "all"), in the order
// the helper runs them.
func metaFlips(scope string) []flip {
	var fs []flip
	for p := range 2 {
		for b := range page {
			switch {
			case scope == "all" || b < 80:
				for bit := range 8 {
					fs = append(fs, flip{p, b, bit})
				}
			case (b-80)%61 == 0:
				fs = append(fs, flip{p, b, b % 8})
			}
		}
	}
	return fs
}

// metaFlipper is the helper (RETRACE_TEST_ROLE=meta-flips): for each flip
// of the good file at good it writes the flipped file to work, reads it
// back, and prints one JSON report.
func metaFlipper(good string, ids []string, scope, work string) error {
	b, err := os.ReadFile(good)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(work), 0o700); err != nil {
		return err
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for _, f := range metaFlips(scope) {
		v := bytes.Clone(b)
		v[f.Page*page+f.Byte] ^= 1 << f.Bit
		if err := os.WriteFile(work, v, 0o600); err != nil {
			return err
		}
		r := flipReport{flip: f, Path: work}
		r.Result, err = readBack(work, ids)
		if err != nil {
			r.Err = err.Error()
			r.Typed = errors.Is(err, storage.ErrCorrupt) || errors.Is(err, storage.ErrNotDatabase)
			if p, ok := strings.CutPrefix(r.Err, "PANIC: "); ok {
				r.Panic = p
			}
		}
		after, err := os.ReadFile(work)
		if err != nil {
			return err
		}
		r.Changed = !bytes.Equal(after, v)
		js, err := json.Marshal(r)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s\n", js)
		out.Flush() // so that a crash leaves the reports before it
	}
	return nil
}

// readBack opens the store at path and reads everything in it: the list of
// sessions and each session's export and head. It returns a digest of all
// of it, or the first error; it never panics.
func readBack(path string, ids []string) (digest string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("PANIC: %v", r)
		}
	}()
	ctx := context.Background()
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		return "", err
	}
	defer st.Close()
	var all []any
	list, err := st.Sessions(ctx)
	if err != nil {
		return "", err
	}
	all = append(all, list)
	for _, id := range ids {
		ex, err := st.Export(ctx, id)
		if err != nil {
			return "", err
		}
		head, err := st.Head(ctx, id)
		if err != nil {
			return "", err
		}
		all = append(all, ex, head)
	}
	js, err := json.Marshal(all)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", sha256.Sum256(js)), nil
}

// ackedStore writes a small store, two sessions of a few checkpoints (one
// with a fork), and checks that it reads back exactly what was
// acknowledged. It renames a session until the newest txid has bit 1 set,
// so that one flip of the newest meta page reads as two commits back (the
// txid of the page before the older one).
func ackedStore(t *testing.T, path string) []string {
	t.Helper()
	ctx := context.Background()
	clock := statetest.Epoch
	now := func() time.Time { clock = clock.Add(time.Second); return clock }
	st, err := boltstore.Open(path, boltstore.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	acked := map[string][]storage.Record{}
	var ids []string
	for n := range 2 {
		info, err := st.Create(ctx, storage.NewSession{Title: fmt.Sprint("session ", n), CreatedAt: now()})
		if err != nil {
			t.Fatal(err)
		}
		s := state.New(info.ID)
		for i := range 4 {
			if n == 1 && i == 3 { // a fork: a new branch under v2
				if err := st.SetHead(ctx, info.ID, 2); err != nil {
					t.Fatal(err)
				}
				if s, err = st.At(ctx, info.ID, 2); err != nil {
					t.Fatal(err)
				}
			}
			ev := chatEvent(s, i)
			ev.At = now()
			parent := s.Version
			if s, err = storage.Commit(ctx, st, s, ev); err != nil {
				t.Fatal(err)
			}
			acked[info.ID] = append(acked[info.ID], storage.Record{
				Checkpoint: storage.Checkpoint{Version: s.Version, Parent: parent, Event: ev.Kind, Phase: s.Phase, At: ev.At},
				Data:       ev,
			})
		}
		ids = append(ids, info.ID)
	}
	for {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		newest, _ := newestMeta(b)
		if binary.LittleEndian.Uint64(b[newest*page+64:])&2 != 0 {
			break
		}
		if err := st.Rename(ctx, ids[0], "renamed"); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids {
		ex, err := st.Export(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(ex.Checkpoints)
		want, _ := json.Marshal(acked[id])
		if !bytes.Equal(got, want) {
			t.Fatalf("session %s reads back\n%s\nbut was acknowledged as\n%s", id, got, want)
		}
	}
	return ids
}
