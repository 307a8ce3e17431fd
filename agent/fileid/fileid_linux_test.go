package fileid

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func lstat(t *testing.T, path string) File {
	t.Helper()
	f, err := Lstat(path)
	if errors.Is(err, ErrNoIdentity) {
		t.Skipf("the temp dir's file system: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// A file written in place is the same file, changed; one an editor saves
// (a temporary file renamed over it) is another, even when the file
// system gives the new file the old one's inode number again.
func TestSameFileOrAnother(t *testing.T) {
	dir := t.TempDir()
	h := filepath.Join(dir, "h.txt")
	write(t, h, "first\n")
	first := lstat(t, h)
	if again := lstat(t, h); !first.Same(again) || !first.Unchanged(again) {
		t.Fatalf("an untouched file: %+v, then %+v", first, again)
	}
	f, err := os.OpenFile(h, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("appended\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	appended := lstat(t, h)
	if !first.Same(appended) || first.Unchanged(appended) {
		t.Fatalf("a file appended to: %+v, then %+v", first, appended)
	}
	if err := os.Chmod(h, 0o600); err != nil {
		t.Fatal(err)
	}
	if chmodded := lstat(t, h); !appended.Same(chmodded) || appended.Unchanged(chmodded) {
		t.Fatalf("a file chmodded: %+v, then %+v", appended, chmodded)
	}

	// Two saves by rename: on ext4 the second one's file usually gets
	// the first file's inode number back.
	var saves []File
	for _, text := range []string{"saved once\n", "saved twice\n"} {
		tmp := filepath.Join(dir, ".h.txt.swp")
		write(t, tmp, text)
		if err := os.Rename(tmp, h); err != nil {
			t.Fatal(err)
		}
		saves = append(saves, lstat(t, h))
	}
	for i, s := range saves {
		if first.Same(s) {
			t.Errorf("save %d: the file saved by rename passes for the first one: %+v, %+v", i+1, first, s)
		}
	}
	if saves[1].Ino == first.Ino && first.Birth == 0 {
		t.Logf("this file system reused the inode number and keeps no birth time: the test above would have failed")
	}
}

// Lstat is a symlink itself, Stat the file it leads to; a missing path
// is fs.ErrNotExist, and so is one under a file.
func TestLstatAndStat(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "target"), filepath.Join(dir, "link")
	write(t, target, "x")
	if err := os.Symlink("target", link); err != nil {
		t.Fatal(err)
	}
	l, tf := lstat(t, link), lstat(t, target)
	s, err := Stat(link)
	if err != nil {
		t.Fatal(err)
	}
	if l.Same(tf) || !s.Same(tf) || l.Mode&typeMask != 0o120000 {
		t.Fatalf("link %+v, followed %+v, target %+v", l, s, tf)
	}
	d := lstat(t, dir)
	if !d.IsDir() || tf.IsDir() {
		t.Fatalf("IsDir: dir %v, file %v", d.IsDir(), tf.IsDir())
	}
	for _, p := range []string{filepath.Join(dir, "missing"), filepath.Join(dir, "missing", "x"), filepath.Join(target, "x")} {
		if _, err := Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Lstat(%s): %v, want fs.ErrNotExist", p, err)
		}
	}
}
