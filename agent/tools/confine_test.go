package tools

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// outsideSecret is what the files outside the workspace hold in the tests
// of confinement; no file inside holds it.
const outsideSecret = "OUTSIDE SECRET\n"

// swapFixture is a workspace whose directory d holds secret.txt, next to a
// directory outside holding a different secret.txt and a file of its own,
// and a symlink, park, inside the workspace leading to that directory.
// Exchanging d and park turns d into a way out.
func swapFixture(t *testing.T) (r *Registry, root, outside string) {
	t.Helper()
	base := t.TempDir()
	root, outside = filepath.Join(base, "ws"), filepath.Join(base, "outside")
	writeTree(t, root, map[string]string{"d/secret.txt": "inside\n"})
	writeTree(t, outside, map[string]string{"secret.txt": outsideSecret, "outside-only.txt": outsideSecret})
	if err := os.Symlink(outside, filepath.Join(root, "park")); err != nil {
		t.Fatal(err)
	}
	ws, err := NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	return New(ws, Options{}), ws.Root(), outside
}

// checkOutsideUntouched fails if anything was created in, or changed in,
// the outside directory of swapFixture, or if a temporary file of a write
// was left anywhere.
func checkOutsideUntouched(t *testing.T, root, outside string) {
	t.Helper()
	entries, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"outside-only.txt", "secret.txt"}; !slices.Equal(names, want) {
		t.Errorf("outside holds %q, want %q", names, want)
	}
	for _, name := range []string{"outside-only.txt", "secret.txt"} {
		if b, err := os.ReadFile(filepath.Join(outside, name)); err != nil || string(b) != outsideSecret {
			t.Errorf("outside %s: %q, %v", name, b, err)
		}
	}
	// WalkDir does not follow symlinks, so this sees each real directory
	// once, wherever the swaps left it.
	var temps []string
	err = filepath.WalkDir(filepath.Dir(root), func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".retrace-tmp-") {
			temps = append(temps, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(temps) > 0 {
		t.Errorf("%d temporary files left, among them %q", len(temps), temps[:min(3, len(temps))])
	}
}

// TestSwapRaceStaysInside runs the attack that found the hole: a loop
// exchanges a directory of the workspace with a symlink to a directory
// outside while the real tools read, write, list and search through it.
// Whatever the interleaving, nothing may come from outside or land there.
// On correct code no interleaving can fail it; on code that checks a path
// and then opens it by name, some reads return the outside file.
func TestSwapRaceStaysInside(t *testing.T) {
	r, root, outside := swapFixture(t)
	d, park := filepath.Join(root, "d"), filepath.Join(root, "park")
	if err := exchange(d, park); err != nil {
		t.Skipf("cannot exchange a directory and a symlink (renameat2): %v", err)
	}
	if err := exchange(d, park); err != nil {
		t.Fatal(err)
	}
	stop, started := make(chan struct{}), make(chan struct{})
	type swapped struct {
		n   int
		err error
	}
	done := make(chan swapped)
	go func() {
		n := 0
		for {
			if err := exchange(d, park); err != nil {
				done <- swapped{n, err}
				return
			}
			if n++; n == 1 {
				close(started)
			}
			// Yielding lets more calls get past their check between two
			// swaps, so the window between check and use is met: without
			// it nearly every call saw the symlink at its check (1 read
			// in 300 got past) and the old code's escapes went unseen.
			runtime.Gosched()
			select {
			case <-stop:
				done <- swapped{n, nil}
				return
			default:
			}
		}
	}()
	// The calls start once the swapping has, so they all overlap it.
	<-started

	const writes = 1000
	var reads, readsOK, writesOK, walks int
	for i := range writes {
		if _, err := call(t, r, "write_file", map[string]any{"path": "d/w.txt", "content": "written\n"}); err == nil {
			writesOK++
		}
		if i%10 < 3 {
			reads++
			out, err := call(t, r, "read_file", map[string]any{"path": "d/secret.txt"})
			if strings.Contains(out, "OUTSIDE") {
				t.Errorf("read %d returned the file outside: %q", reads, out)
			}
			if err == nil {
				readsOK++
			}
		}
		if i%10 == 0 {
			walks++
			if out, _ := call(t, r, "list_files", map[string]any{"path": "d"}); strings.Contains(out, "outside-only") {
				t.Errorf("list_files listed the directory outside: %q", out)
			}
			if out, _ := call(t, r, "search_text", map[string]any{"pattern": "SECRET", "path": "d"}); strings.Contains(out, "OUTSIDE") {
				t.Errorf("search_text searched the directory outside: %q", out)
			}
		}
	}
	close(stop)
	sw := <-done
	if sw.err != nil {
		t.Fatalf("swap %d: %v", sw.n+1, sw.err)
	}
	t.Logf("%d swaps; %d of %d reads and %d of %d writes succeeded, the rest refused; %d lists and searches",
		sw.n, readsOK, reads, writesOK, writes, walks)
	checkOutsideUntouched(t, root, outside)
}

// A file hard-linked into the workspace from outside is a file of the
// workspace like any other: read_file reads it, whatever else links to it.
// A write or an edit replaces the workspace's name with a new file, so the
// other links keep the old content: the package managers that fill
// node_modules or .venv with hard links to a shared store keep their store.
func TestHardLinkedFile(t *testing.T) {
	r, root := newTestRegistry(t, Options{}, nil)
	store := t.TempDir()
	shared := filepath.Join(store, "shared.txt")
	writeTree(t, store, map[string]string{"shared.txt": "shared\n"})
	for _, name := range []string{"read.txt", "written.txt", "edited.txt"} {
		if err := os.Link(shared, filepath.Join(root, name)); err != nil {
			t.Skipf("cannot hard-link from one temporary directory to another: %v", err)
		}
	}
	got, err := call(t, r, "read_file", map[string]any{"path": "read.txt"})
	checkErr(t, err, "")
	if got != "shared\n" {
		t.Fatalf("read_file: %q", got)
	}
	_, err = call(t, r, "write_file", map[string]any{"path": "written.txt", "content": "written\n"})
	checkErr(t, err, "")
	_, err = call(t, r, "edit_file", map[string]any{"path": "edited.txt", "old_text": "shared", "new_text": "edited"})
	checkErr(t, err, "")
	for name, want := range map[string]string{"written.txt": "written\n", "edited.txt": "edited\n", "read.txt": "shared\n"} {
		if got := readFileT(t, filepath.Join(root, name)); got != want {
			t.Errorf("%s holds %q, want %q", name, got, want)
		}
	}
	if got := readFileT(t, shared); got != "shared\n" {
		t.Errorf("the link outside now holds %q", got)
	}
	// The store's file is left with itself and read.txt.
	if n := links(t, shared); n != 2 {
		t.Errorf("the file outside has %d links, want 2", n)
	}
}

// links is the number of hard links to the file at p.
func links(t *testing.T, p string) uint64 {
	t.Helper()
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		t.Skipf("no link count on %s", runtime.GOOS)
	}
	return uint64(st.Nlink)
}

// TestSwapAfterCheck makes the race of TestSwapRaceStaysInside happen
// every time: each operation's path is checked while d is a directory,
// d is then replaced by a symlink to outside, and only then is the
// operation carried out. It must refuse, in the words used for any path
// outside, and leave nothing outside.
func TestSwapAfterCheck(t *testing.T) {
	swap := func(t *testing.T, root, outside string) {
		t.Helper()
		d := filepath.Join(root, "d")
		if err := os.Rename(d, d+".moved"); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, d); err != nil {
			t.Fatal(err)
		}
	}
	refused := func(t *testing.T, err error) {
		t.Helper()
		if !errors.Is(err, ErrOutsideWorkspace) || !strings.Contains(err.Error(), `path "d/`) {
			t.Fatalf("got %v, want a refusal naming the path", err)
		}
	}
	t.Run("read", func(t *testing.T) {
		r, root, outside := swapFixture(t)
		abs, err := r.ws.Resolve("d/secret.txt")
		checkErr(t, err, "")
		swap(t, root, outside)
		_, _, err = r.ws.openRegular(abs, "d/secret.txt")
		refused(t, err)
		_, err = r.ws.stat(abs, "d/secret.txt")
		refused(t, err)
	})
	t.Run("write", func(t *testing.T) {
		r, root, outside := swapFixture(t)
		var planned []change
		for _, p := range []string{"d/new.txt", "d/sub/new.txt", "d/secret.txt"} {
			c, err := r.planWrite(&writeArgs{Path: p, Content: "written\n"})
			checkErr(t, err, "")
			planned = append(planned, c)
		}
		swap(t, root, outside)
		for _, c := range planned {
			refused(t, c.apply(r.ws))
		}
		checkOutsideUntouched(t, root, outside)
	})
	t.Run("edit", func(t *testing.T) {
		r, root, outside := swapFixture(t)
		c, err := r.planEdit(&editArgs{Path: "d/secret.txt", OldText: "inside", NewText: "edited"})
		checkErr(t, err, "")
		swap(t, root, outside)
		refused(t, c.apply(r.ws))
		checkOutsideUntouched(t, root, outside)
	})
	t.Run("walk", func(t *testing.T) {
		r, root, outside := swapFixture(t)
		var seen []string
		unreadable, err := r.ws.walkTree(context.Background(), root, func(_, rel string, d fs.DirEntry) error {
			seen = append(seen, rel)
			if rel == "d" {
				swap(t, root, outside)
			}
			return nil
		})
		checkErr(t, err, "")
		if want := []string{"d", "park"}; !slices.Equal(seen, want) || unreadable != 1 {
			t.Fatalf("walk saw %q and %d unreadable directories, want %q and 1", seen, unreadable, want)
		}
	})
}

// isEscape knows os.Root's refusal by its text, which Go does not export.
// Should a Go release reword it, this fails, rather than the tools
// reporting a path outside as an unexplained error.
func TestEscapeRecognised(t *testing.T) {
	r, _, _ := swapFixture(t)
	_, err := r.ws.dir.Open("park/secret.txt")
	if !isEscape(err) {
		t.Fatalf("os.Root's refusal %v is not recognised", err)
	}
	_, err = r.ws.dir.Open("d/missing.txt")
	if err == nil || isEscape(err) {
		t.Fatalf("a missing file: %v", err)
	}
}
