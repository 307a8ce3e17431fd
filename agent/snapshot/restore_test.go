package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"retrace/state"
)

func fileImage(data string, mode uint32) state.FileImage {
	return state.FileImage{Blob: Digest([]byte(data)), Size: int64(len(data)), Mode: mode}
}

// entries lists a directory, to see what a write left behind.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	list, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range list {
		names = append(names, e.Name())
	}
	return names
}

func TestPutWritesContentAndMode(t *testing.T) {
	f := newFixture(t, Options{})
	for _, c := range []struct {
		path, data string
		mode       uint32
	}{
		{"new/deep/a.txt", "created with its parents", 0o640},
		{"run.sh", "#!/bin/sh\n", 0o755},
		{"run.sh", "replaced", 0o600},
		{"empty", "", 0o644},
	} {
		if err := f.w.Put(c.path, fileImage(c.data, c.mode), []byte(c.data)); err != nil {
			t.Fatalf("Put(%s): %v", c.path, err)
		}
		got, err := os.ReadFile(f.path(c.path))
		if err != nil || string(got) != c.data {
			t.Errorf("%s holds %q, %v; want %q", c.path, got, err, c.data)
		}
		if info, err := os.Stat(f.path(c.path)); err != nil || uint32(info.Mode().Perm()) != c.mode {
			t.Errorf("%s has mode %v, %v; want %#o", c.path, info.Mode(), err, c.mode)
		}
		// The watcher's own view agrees: what Put wrote is the image.
		if img, _, err := f.w.Image(c.path); err != nil || !img.Same(fileImage(c.data, c.mode)) {
			t.Errorf("Image(%s) after Put = %+v, %v", c.path, img, err)
		}
	}
	if got := entries(t, f.dir); !slices.Equal(got, []string{"empty", "new", "run.sh"}) {
		t.Errorf("the workspace holds %v: a temporary file was left behind", got)
	}
	if got := entries(t, f.path("new/deep")); !slices.Equal(got, []string{"a.txt"}) {
		t.Errorf("new/deep holds %v", got)
	}
}

func TestPutRefusesWhatItCannotRestore(t *testing.T) {
	f := newFixture(t, Options{})
	f.write("a.txt", "original")
	for _, c := range []struct {
		name string
		img  state.FileImage
		data string
		want error
	}{
		{"data of another digest", fileImage("expected", 0o644), "tampered", ErrDigestMismatch},
		{"no digest", state.FileImage{Size: 3, Mode: 0o644}, "abc", ErrDigestMismatch},
		{"untracked", state.FileImage{Size: 3, Untracked: reasonSymlink}, "abc", ErrNotRestorable},
	} {
		if err := f.w.Put("a.txt", c.img, []byte(c.data)); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
	if got, _ := os.ReadFile(f.path("a.txt")); string(got) != "original" {
		t.Errorf("a refused Put changed the file to %q", got)
	}
	if got := entries(t, f.dir); !slices.Equal(got, []string{"a.txt"}) {
		t.Errorf("a refused Put left %v", got)
	}
	if err := f.w.Put("../a.txt", fileImage("x", 0o644), []byte("x")); !errors.Is(err, ErrInvalidPath) {
		t.Errorf("Put outside: err = %v, want ErrInvalidPath", err)
	}
}

func TestPutAbsentRemoves(t *testing.T) {
	f := newFixture(t, Options{})
	f.write("dir/a.txt", "a")
	if err := f.w.Put("dir/a.txt", state.FileImage{Absent: true}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(f.path("dir/a.txt")); !os.IsNotExist(err) {
		t.Errorf("the file is still there: %v", err)
	}
	if _, err := os.Lstat(f.path("dir")); !os.IsNotExist(err) {
		t.Errorf("the directory the removal emptied is still there: %v", err)
	}
	for _, p := range []string{"dir/a.txt", "never/was"} {
		if err := f.w.Remove(p); err != nil {
			t.Errorf("Remove(%s) of a missing file: %v", p, err)
		}
	}
	// A directory with something else in it stays; so does one at path.
	f.write("keep/a.txt", "a")
	f.write("keep/b.txt", "b")
	if err := f.w.Remove("keep/a.txt"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(f.path("keep/b.txt")); err != nil {
		t.Errorf("Remove took a directory that was not empty: %v", err)
	}
	if err := f.w.Remove("keep"); err != nil {
		t.Errorf("Remove of a directory (no file there): %v", err)
	}
	if _, err := os.Lstat(f.path("keep/b.txt")); err != nil {
		t.Errorf("Remove of a directory path removed its files: %v", err)
	}
}

// TestPutReplacesAnEmptyDirectory: a file goes back where a later version
// left an empty directory; a directory with files in it is not removed.
func TestPutReplacesAnEmptyDirectory(t *testing.T) {
	f := newFixture(t, Options{})
	if err := os.MkdirAll(f.path("a.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	img := state.FileImage{Blob: Digest([]byte("file")), Size: 4, Mode: 0o644}
	if err := f.w.Put("a.txt", img, []byte("file")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(f.path("a.txt")); err != nil || string(b) != "file" {
		t.Fatalf("a.txt = %q, %v", b, err)
	}
	f.write("full/x", "x")
	if err := f.w.Put("full", img, []byte("file")); err == nil {
		t.Fatal("Put replaced a directory with files in it")
	}
	if _, err := os.Lstat(f.path("full/x")); err != nil {
		t.Fatalf("full/x: %v", err)
	}
}

// TestPutReplacesSymlinkNotTarget: a symlink where the file goes is
// replaced by the file; its target, outside, is untouched.
func TestPutReplacesSymlinkNotTarget(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "target")
	if err := os.WriteFile(outside, []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, Options{})
	if err := os.Symlink(outside, f.path("link")); err != nil {
		t.Fatal(err)
	}
	if err := f.w.Put("link", fileImage("restored", 0o644), []byte("restored")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(outside); string(got) != "outside" {
		t.Errorf("the symlink's target became %q", got)
	}
	if info, err := os.Lstat(f.path("link")); err != nil || !info.Mode().IsRegular() {
		t.Errorf("link is not a regular file now: %v %v", info, err)
	}

	if err := os.Symlink(outside, f.path("link2")); err != nil {
		t.Fatal(err)
	}
	if err := f.w.Remove("link2"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("Remove of a symlink removed its target: %v", err)
	}
}

// TestPutDoesNotWriteThroughSymlinkedParent: a parent directory that is a
// symlink out of the workspace stops the write; nothing lands outside.
func TestPutDoesNotWriteThroughSymlinkedParent(t *testing.T) {
	outside := t.TempDir()
	f := newFixture(t, Options{})
	if err := os.Symlink(outside, f.path("out")); err != nil {
		t.Fatal(err)
	}
	if err := f.w.Put("out/x.txt", fileImage("x", 0o644), []byte("x")); err == nil {
		t.Error("Put through a symlink out of the workspace succeeded")
	}
	if err := f.w.Put("out/new/x.txt", fileImage("x", 0o644), []byte("x")); err == nil {
		t.Error("Put of new directories through a symlink out of the workspace succeeded")
	}
	if got := entries(t, outside); len(got) != 0 {
		t.Errorf("Put wrote %v outside the workspace", got)
	}
	if err := os.WriteFile(filepath.Join(outside, "x.txt"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.w.Remove("out/x.txt"); err == nil {
		t.Error("Remove through a symlink out of the workspace succeeded")
	}
	if _, err := os.Stat(filepath.Join(outside, "x.txt")); err != nil {
		t.Errorf("Remove reached outside the workspace: %v", err)
	}
}

// TestSweepRemovesWhatAKilledPutLeft: the temporary files beside a path
// go; a look-alike with another name or suffix stays.
func TestSweepRemovesWhatAKilledPutLeft(t *testing.T) {
	f := newFixture(t, Options{})
	f.write("dir/a.txt", "a")
	for _, n := range []string{".a.txt.retrace-0123456789ab", ".a.txt.retrace-nothexnothex", ".b.txt.retrace-0123456789ab", ".a.txt.retrace-0123"} {
		f.write("dir/"+n, "left")
	}
	if err := f.w.Sweep("dir/a.txt"); err != nil {
		t.Fatal(err)
	}
	names, err := os.ReadDir(f.path("dir"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range names {
		got = append(got, n.Name())
	}
	if strings.Join(got, " ") != ".a.txt.retrace-0123 .a.txt.retrace-nothexnothex .b.txt.retrace-0123456789ab a.txt" {
		t.Fatalf("left %v", got)
	}
	if err := f.w.Sweep("gone/a.txt"); err != nil {
		t.Fatalf("a missing directory: %v", err)
	}
}

// PutIf replaces nothing, and leaves no temporary file, when the look it
// takes just before the rename refuses what the path holds; the same for
// a removal.
func TestPutIfLooksAgainBeforeReplacing(t *testing.T) {
	f := newFixture(t, Options{})
	f.write("a.txt", "the user's")
	var seen state.FileImage
	refuse := func(now state.FileImage) bool { seen = now; return false }
	if err := f.w.PutIf("a.txt", fileImage("restored", 0o644), []byte("restored"), refuse); !errors.Is(err, ErrChangedMeanwhile) {
		t.Fatalf("PutIf: err = %v, want ErrChangedMeanwhile", err)
	}
	if !seen.Same(fileImage("the user's", 0o644)) {
		t.Fatalf("ok was shown %v", seen)
	}
	if err := f.w.PutIf("a.txt", state.FileImage{Absent: true}, nil, refuse); !errors.Is(err, ErrChangedMeanwhile) {
		t.Fatalf("PutIf of an absent image: err = %v, want ErrChangedMeanwhile", err)
	}
	if got, _ := os.ReadFile(f.path("a.txt")); string(got) != "the user's" {
		t.Fatalf("a.txt holds %q", got)
	}
	if got := entries(t, f.dir); !slices.Equal(got, []string{"a.txt"}) {
		t.Fatalf("the workspace holds %v", got)
	}
	allow := func(state.FileImage) bool { return true }
	if err := f.w.PutIf("a.txt", fileImage("restored", 0o644), []byte("restored"), allow); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(f.path("a.txt")); string(got) != "restored" {
		t.Fatalf("a.txt holds %q", got)
	}
}
