package snapshot

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"retrace/state"
)

func TestImageOfAFile(t *testing.T) {
	f := newFixture(t, Options{})
	f.write("dir/a.txt", "hello")
	if err := os.Chmod(f.path("dir/a.txt"), 0o750); err != nil {
		t.Fatal(err)
	}
	img, data, err := f.w.Image("dir/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := state.FileImage{Blob: Digest([]byte("hello")), Size: 5, Mode: 0o750}
	if img != want || string(data) != "hello" {
		t.Errorf("Image = %+v %q, want %+v \"hello\"", img, data, want)
	}
}

func TestImageRefusesUncleanPaths(t *testing.T) {
	f := newFixture(t, Options{})
	for _, p := range []string{"", ".", "..", "../x", "/etc/passwd", "a//b", "a/./b", "a/../b", "a/"} {
		if _, _, err := f.w.Image(p); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("Image(%q): err = %v, want ErrInvalidPath", p, err)
		}
	}
}

// TestSymlinksAreNotFollowed: a symlink is listed, never read through,
// whether it points inside the workspace or out of it.
func TestSymlinksAreNotFollowed(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, Options{})
	f.trustStamps()
	f.write("a.txt", "a")
	f.write("sub/b.txt", "b")
	for link, target := range map[string]string{
		"link":    "a.txt",
		"out":     filepath.Join(outside, "secret"),
		"outdir":  outside,
		"escape":  "../../../../../../etc/passwd",
		"insub":   "sub",
		"dangles": "nothing",
	} {
		if err := os.Symlink(target, f.path(link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ path, want string }{
		{"link", reasonSymlink},
		{"out", reasonSymlink},
		{"escape", reasonSymlink},
		{"dangles", reasonSymlink},
		{"outdir/secret", reasonViaSymlink},
		{"insub/b.txt", reasonViaSymlink},
	} {
		img, data, err := f.w.Image(c.path)
		if c.want == reasonSymlink && img.Stamp == "" {
			t.Errorf("Image(%s) has no stamp", c.path)
		}
		if err != nil || withoutStamp(img) != (state.FileImage{Untracked: c.want}) || data != nil {
			t.Errorf("Image(%s) = %+v, %q, %v; want untracked %q", c.path, img, data, err, c.want)
		}
	}

	m := f.mark()
	if got := f.takeReads(); !slices.Equal(got, []string{"a.txt", "sub/b.txt"}) {
		t.Errorf("the scan read %v, want only the two regular files", got)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("outside, changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(f.path("link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub/b.txt", f.path("link")); err != nil {
		t.Fatal(err)
	}
	changes, blobs := f.changes(m)
	wantSummary(t, summary(changes, blobs), []string{
		"link: untracked: " + reasonSymlink + " -> untracked: " + reasonSymlink,
	})
	if got := f.takeReads(); len(got) != 0 {
		t.Errorf("Changes read %v", got)
	}
}

func TestFilesOverTheCap(t *testing.T) {
	f := newFixture(t, Options{MaxFileSize: 1024})
	f.trustStamps()
	big := string(make([]byte, 2048))
	f.write("big", big)
	f.write("small", "small")
	overCap := "larger than the 1 KiB cap"

	img, data, err := f.w.Image("big")
	want := state.FileImage{Size: 2048, Mode: 0o644, Untracked: overCap}
	if err != nil || withoutStamp(img) != want || img.Stamp == "" || data != nil {
		t.Errorf("Image(big) = %+v, %d bytes, %v; want %+v with a stamp", img, len(data), err, want)
	}
	m := f.mark()
	if got := f.takeReads(); !slices.Equal(got, []string{"small"}) {
		t.Errorf("read %v, want only small", got)
	}
	f.write("big", big+"more")
	f.write("small", big)
	changes, blobs := f.changes(m)
	wantSummary(t, summary(changes, blobs), []string{
		"big: untracked: " + overCap + " -> untracked: " + overCap,
		"small: small -> untracked: " + overCap,
	})
	if changes[0].After.Size != 2052 {
		t.Errorf("big's after size %d, want 2052", changes[0].After.Size)
	}
	if got := f.takeReads(); len(got) != 0 {
		t.Errorf("Changes read %v", got)
	}
}

func TestCapReasonNamesTheCap(t *testing.T) {
	for limit, want := range map[int64]string{
		DefaultMaxFileSize: "larger than the 10 MiB cap",
		512 << 10:          "larger than the 512 KiB cap",
		1000:               "larger than the 1000 bytes cap",
	} {
		if got := capReason(limit); got != want {
			t.Errorf("capReason(%d) = %q, want %q", limit, got, want)
		}
	}
}

// endless yields zeros forever and counts what it gave.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	clear(p)
	e.n += int64(len(p))
	return len(p), nil
}

// TestReadCappedStopsAtTheCap: a file that grows while it is read (its
// stat said it was small) is read no further than one byte past the cap.
func TestReadCappedStopsAtTheCap(t *testing.T) {
	r := &endless{}
	if _, err := readCapped(r, 10, 1000); !errors.Is(err, errOverCap) {
		t.Fatalf("err = %v, want errOverCap", err)
	}
	if r.n != 1001 {
		t.Errorf("read %d bytes, want 1001", r.n)
	}
	data, err := readCapped(io.LimitReader(r, 1000), 10, 1000)
	if err != nil || len(data) != 1000 {
		t.Errorf("a file of exactly the cap: %d bytes, %v", len(data), err)
	}
}
