package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestChangesCreateChangeDelete(t *testing.T) {
	f := newFixture(t, Options{})
	f.write("a.txt", "one")
	f.write("dir/b.txt", "two")
	f.write("dir/deep/c.txt", "three")
	f.write("empty", "")
	f.write("same.txt", "unchanged")
	m := f.mark()

	f.write("a.txt", "one, longer now") // overwritten: the before comes from the cache
	f.write("new/d.txt", "new")
	for _, p := range []string{"dir/deep/c.txt", "empty"} {
		if err := os.Remove(f.path(p)); err != nil {
			t.Fatal(err)
		}
	}
	changes, blobs := f.changes(m)
	wantSummary(t, summary(changes, blobs), []string{
		"a.txt: one -> one, longer now",
		"dir/deep/c.txt: three -> absent",
		"empty:  -> absent",
		"new/d.txt: absent -> new",
	})
	for _, c := range changes {
		if img := c.Before; !img.Absent && img.Mode != 0o644 {
			t.Errorf("%s: before mode %#o, want 0644", c.Path, img.Mode)
		}
	}
}

func TestChangesModeOnly(t *testing.T) {
	f := newFixture(t, Options{})
	f.write("run.sh", "#!/bin/sh\n")
	m := f.mark()
	if err := os.Chmod(f.path("run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	changes, _ := f.changes(m)
	if len(changes) != 1 || changes[0].Before.Blob != changes[0].After.Blob ||
		changes[0].Before.Mode != 0o644 || changes[0].After.Mode != 0o755 {
		t.Fatalf("chmod +x: got %+v, want one change of mode 0644 -> 0755 over the same blob", changes)
	}
}

func TestChangesTouchIsNoChange(t *testing.T) {
	f := newFixture(t, Options{})
	f.write("a.txt", "same")
	m := f.mark()
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(f.path("a.txt"), later, later); err != nil {
		t.Fatal(err)
	}
	f.write("b.txt", "x")
	if err := os.Remove(f.path("b.txt")); err != nil {
		t.Fatal(err)
	}
	if changes, _ := f.changes(m); len(changes) != 0 {
		t.Errorf("a new mtime over the same content, and a file made and removed between: got %v, want no change", paths(changes))
	}
}

// TestChangesSeeInPlaceRewrite: a file truncated and rewritten in place
// with the same size, its mtime forced back, keeps size, mtime and inode;
// only its ctime moved, and no tool can set that back. The clock is set
// ahead so that the racy-entry rule, which would also catch this when it
// all happens within one clock tick, stays out of it: the ctime alone must
// catch it.
func TestChangesSeeInPlaceRewrite(t *testing.T) {
	f := newFixture(t, Options{})
	f.trustStamps()
	f.write("a.txt", "aaaa")
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(f.path("a.txt"), old, old); err != nil {
		t.Fatal(err)
	}
	before := lstamp(t, f.path("a.txt"))
	if before.ctime == 0 {
		t.Skip("this platform's stamps have no ctime")
	}
	m := f.mark()
	waitForClockTick(t, before.ctime)

	file, err := os.OpenFile(f.path("a.txt"), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := file.WriteString("bbbb"); err != nil {
		t.Fatal(err)
	}
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(f.path("a.txt"), old, old); err != nil {
		t.Fatal(err)
	}
	after := lstamp(t, f.path("a.txt"))
	if after.size != before.size || after.mtime != before.mtime || after.ino != before.ino {
		t.Fatalf("the rewrite moved more than the ctime: %+v then %+v", before, after)
	}

	changes, blobs := f.changes(m)
	wantSummary(t, summary(changes, blobs), []string{"a.txt: aaaa -> bbbb"})
}

// TestRecentStampIsReadAgain: a stamp younger than the scan by less than
// the racy window cannot vouch for the content read with it (an edit in
// the same clock tick would leave the same stamp), so the next scan reads
// the file again; once the stamp is old, it is trusted.
func TestRecentStampIsReadAgain(t *testing.T) {
	f := newFixture(t, Options{})
	f.write("a.txt", "a")
	f.write("old.txt", "old")
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(f.path("old.txt"), old, old); err != nil {
		t.Fatal(err)
	}
	// The clock stands just after the files were written: a.txt's ctime
	// (and old.txt's, which Chtimes moved) are within the window.
	now := time.Now()
	f.w.now = func() time.Time { return now }
	m := f.mark()
	if got := f.takeReads(); !slices.Equal(got, []string{"a.txt", "old.txt"}) {
		t.Fatalf("first scan read %v", got)
	}
	if changes, _ := f.changes(m); len(changes) != 0 {
		t.Fatalf("nothing changed, got %v", paths(changes))
	}
	if got := f.takeReads(); !slices.Equal(got, []string{"a.txt", "old.txt"}) {
		t.Errorf("a scan right after the files changed read %v, want both again", got)
	}

	f.w.now = func() time.Time { return now.Add(time.Second) }
	f.mark()
	if got := f.takeReads(); !slices.Equal(got, []string{"a.txt", "old.txt"}) {
		t.Errorf("the scan after read %v, want both once more: the last read was still recent", got)
	}
	f.mark()
	if got := f.takeReads(); len(got) != 0 {
		t.Errorf("with stamps a second old, a scan read %v, want nothing", got)
	}
}

func TestStampRecentWindow(t *testing.T) {
	const sec = int64(time.Second)
	start := 1000 * sec
	for _, c := range []struct {
		name string
		s    stamp
		want bool
	}{
		{"old", stamp{mtime: start - sec + 1, ctime: start - sec + 1}, false},
		{"ctime within a tick", stamp{mtime: start - sec + 1, ctime: start - int64(time.Millisecond)}, true},
		{"mtime in the future", stamp{mtime: start + sec + 1, ctime: start - sec + 1}, true},
		{"whole seconds, a second old", stamp{mtime: start - sec, ctime: start - sec}, true},
		{"whole seconds, three seconds old", stamp{mtime: start - 3*sec, ctime: start - 3*sec}, false},
	} {
		if got := c.s.recent(start); got != c.want {
			t.Errorf("%s: recent = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestUnchangedFilesAreNotReadAgain(t *testing.T) {
	f := newFixture(t, Options{})
	f.trustStamps()
	var all []string
	for i := range 50 {
		p := fmt.Sprintf("d%d/f%02d.txt", i%5, i)
		f.write(p, p)
		all = append(all, p)
	}
	slices.Sort(all)
	m := f.mark()
	if got := f.takeReads(); !slices.Equal(got, all) {
		t.Fatalf("first scan read %d files, want all %d", len(got), len(all))
	}
	f.write("d1/f01.txt", "changed")
	changes, _ := f.changes(m)
	if len(changes) != 1 {
		t.Fatalf("got changes %v, want d1/f01.txt", paths(changes))
	}
	if got := f.takeReads(); !slices.Equal(got, []string{"d1/f01.txt"}) {
		t.Errorf("Changes read %v, want only the changed file", got)
	}
	f.mark()
	if got := f.takeReads(); len(got) != 0 {
		t.Errorf("a scan of an unchanged workspace read %v", got)
	}
}

// TestNewProcessTrustsIndex: a Watcher started later on the same
// workspace and cache, as the next process would, reads no unchanged file,
// and still has the before content of a file it never read.
func TestNewProcessTrustsIndex(t *testing.T) {
	f := newFixture(t, Options{})
	f.trustStamps()
	f.write("a.txt", "first")
	f.write("b/c.txt", "see")
	f.mark()
	if got := f.takeReads(); len(got) != 2 {
		t.Fatalf("first scan read %v", got)
	}

	f.open()
	f.trustStamps()
	m := f.mark()
	if got := f.takeReads(); len(got) != 0 {
		t.Fatalf("a new process read %v of an unchanged workspace", got)
	}
	f.write("a.txt", "second")
	changes, blobs := f.changes(m)
	wantSummary(t, summary(changes, blobs), []string{"a.txt: first -> second"})
}

// TestContentCacheKeepsOverwrittenContent: the before content of a file a
// command overwrote comes from the content cache, in the process that read
// it and in a later one; without the cache it would be gone.
func TestContentCacheKeepsOverwrittenContent(t *testing.T) {
	f := newFixture(t, Options{})
	f.write("a.txt", "the original")
	f.mark()
	f.open()
	m := f.mark()
	f.write("a.txt", "overwritten")
	changes, blobs := f.changes(m)
	wantSummary(t, summary(changes, blobs), []string{"a.txt: the original -> overwritten"})
}

func TestDamagedContentObjectIsNotTrusted(t *testing.T) {
	enc, _ := codec()
	for name, damage := range map[string]func(pack string) error{
		"pack missing":  func(pack string) error { return os.Remove(pack + packExt) },
		"index missing": func(pack string) error { return os.Remove(pack + idxExt) },
		"garbage": func(pack string) error {
			info, err := os.Stat(pack + packExt)
			if err != nil {
				return err
			}
			return os.WriteFile(pack+packExt, bytes.Repeat([]byte{'x'}, int(info.Size())), 0o600)
		},
		"truncated": func(pack string) error {
			data, err := os.ReadFile(pack + packExt)
			if err != nil {
				return err
			}
			return os.WriteFile(pack+packExt, data[:len(data)-2], 0o600)
		},
		"index bit flip": func(pack string) error {
			data, err := os.ReadFile(pack + idxExt)
			if err != nil {
				return err
			}
			data[len(idxMagic)+3] ^= 1
			return os.WriteFile(pack+idxExt, data, 0o600)
		},
		// A well-formed pack and index that file other bytes under the
		// digest: only the digest check can tell.
		"other content": func(pack string) error {
			entries, err := readIdx(filepath.Dir(pack), filepath.Base(pack))
			if err != nil || len(entries) != 1 {
				return fmt.Errorf("index: %v, %d entries", err, len(entries))
			}
			rec, at := appendRecord(packHeader(), entries[0].sum, 4, enc.EncodeAll([]byte("evil"), nil))
			e := idxEntry{sum: entries[0].sum, off: int64(at), len: int64(len(rec) - at), size: 4}
			if err := os.WriteFile(pack+packExt, rec, 0o600); err != nil {
				return err
			}
			return os.WriteFile(pack+idxExt, encodeIdx([]idxEntry{e}), 0o600)
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, Options{})
			f.trustStamps()
			f.write("a.txt", "good")
			f.mark()
			// A new process: the index vouches for a.txt, whose content
			// is read from the pack only when a command overwrites it.
			f.open()
			f.trustStamps()
			m := f.mark()
			if err := damage(onlyPack(t, f.opts.CacheDir)); err != nil {
				t.Fatal(err)
			}
			f.write("a.txt", "changed")
			changes, blobs := f.changes(m)
			wantSummary(t, summary(changes, blobs), []string{"a.txt: untracked: " + reasonUncached + " -> changed"})
			if b := changes[0].Before; b.Size != 4 || b.Mode != 0o644 {
				t.Errorf("the lost before image kept size %d mode %#o, want 4 and 0644", b.Size, b.Mode)
			}
		})
	}
}

// onlyPack is the path, without extension, of the one pack in the cache.
func onlyPack(t *testing.T, cacheDir string) string {
	t.Helper()
	dir := filepath.Join(cacheDir, packsDir)
	names, bare, err := packNames(dir)
	if err != nil || len(names) != 1 || len(bare) != 0 {
		t.Fatalf("packs in %s: %v, bare %v, %v", dir, names, bare, err)
	}
	return filepath.Join(dir, names[0])
}

func TestDamagedIndexIsRebuilt(t *testing.T) {
	for name, damage := range map[string]func(data []byte) []byte{
		"empty":     func([]byte) []byte { return nil },
		"truncated": func(d []byte) []byte { return d[:len(d)-5] },
		// The last byte before the checksum is the last entry's digest:
		// without the checksum the index would vouch for a wrong digest.
		"bit flip": func(d []byte) []byte { d[len(d)-33] ^= 1; return d },
		"garbage":  func([]byte) []byte { return []byte("retrace-snapshot-index\x00\x01garbage") },
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, Options{})
			f.trustStamps()
			f.write("a.txt", "a")
			f.write("b.txt", "b")
			f.mark()
			f.takeReads()
			data, err := os.ReadFile(f.w.index)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f.w.index, damage(data), 0o600); err != nil {
				t.Fatal(err)
			}

			f.open()
			f.trustStamps()
			f.mark()
			if got := f.takeReads(); len(got) != 2 {
				t.Errorf("with a damaged index, a new process read %v, want both files", got)
			}
			f.open()
			f.trustStamps()
			f.mark()
			if got := f.takeReads(); len(got) != 0 {
				t.Errorf("the index was not rebuilt: the next process read %v", got)
			}
		})
	}
}

func TestIndexOfAnotherWorkspaceIsIgnored(t *testing.T) {
	f := newFixture(t, Options{})
	f.trustStamps()
	f.write("a.txt", "a")
	f.mark()
	data, err := os.ReadFile(f.w.index)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := decodeIndex("/elsewhere", data); !errors.Is(err, errBadIndex) {
		t.Errorf("decoding for another root: err = %v, want errBadIndex", err)
	}
}

func TestChangesRefusesForeignMark(t *testing.T) {
	f := newFixture(t, Options{})
	other := newFixture(t, Options{})
	for name, m := range map[string]Mark{"zero": {}, "another watcher's": other.mark()} {
		if _, _, err := f.w.Changes(context.Background(), m); !errors.Is(err, ErrForeignMark) {
			t.Errorf("%s mark: err = %v, want ErrForeignMark", name, err)
		}
	}
}

func TestScanStopsWhenCancelled(t *testing.T) {
	f := newFixture(t, Options{})
	f.write("a/b.txt", "b")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.w.Mark(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Mark with a cancelled context: err = %v", err)
	}
}

// lstamp is the stamp of the file at p.
func lstamp(t *testing.T, p string) stamp {
	t.Helper()
	info, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return stampOf(info)
}

// waitForClockTick returns once the file system's clock has moved past
// ctime, so that the next change gets a ctime of its own. It spins on a
// scratch file's ctime rather than sleeping a guess: a tick is 1 to 10 ms.
func waitForClockTick(t *testing.T, ctime int64) {
	t.Helper()
	scratch := filepath.Join(t.TempDir(), "tick")
	if err := os.WriteFile(scratch, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if err := os.Chmod(scratch, 0o600); err != nil {
			t.Fatal(err)
		}
		if lstamp(t, scratch).ctime > ctime {
			return
		}
	}
	t.Fatal("the file system's clock did not move in 5 s")
}

// A command that writes more than MaxCallBytes of files has the first
// ones' contents kept and the rest recorded without content, saying why.
func TestChangesKeepAtMostTheCallCap(t *testing.T) {
	f := newFixture(t, Options{MaxCallBytes: 10})
	m := f.mark()
	f.write("a.txt", "sixsix")
	f.write("b.txt", "sevens!")
	f.write("c.txt", "four")
	changes, blobs := f.changes(m)
	wantSummary(t, summary(changes, blobs), []string{
		"a.txt: absent -> sixsix",
		"b.txt: absent -> untracked: " + callCapReason(10),
		"c.txt: absent -> four",
	})
}

// A command that changes more files than MaxCallFiles has the first
// ones' contents kept and the rest recorded without content, saying why;
// OverBudget tells those images from the others.
func TestChangesKeepAtMostTheFileBudget(t *testing.T) {
	f := newFixture(t, Options{MaxCallFiles: 2})
	f.write("old.txt", "old")
	m := f.mark()
	f.write("a.txt", "a")
	f.write("b.txt", "b")
	f.write("c.txt", "c")
	f.write("old.txt", "new")
	changes, blobs := f.changes(m)
	wantSummary(t, summary(changes, blobs), []string{
		"a.txt: absent -> a",
		"b.txt: absent -> b",
		"c.txt: absent -> untracked: " + callFilesReason(2),
		"old.txt: untracked: " + callFilesReason(2) + " -> untracked: " + callFilesReason(2),
	})
	n := 0
	for _, c := range changes {
		if OverBudget(c.Before) || OverBudget(c.After) {
			n++
		}
	}
	if n != 2 {
		t.Errorf("OverBudget counts %d changes, want 2", n)
	}
}
