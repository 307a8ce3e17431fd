package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"retrace/agent/fileid"
)

// Of what changed around a command, only what its processes wrote is the
// command's: a file the user saved meanwhile is left out, a renamed
// directory covers what is under it, and an ignored directory the command
// wrote into is the command's.
func TestAttributeKeepsTheCommandsOwn(t *testing.T) {
	f := newFixture(t, Options{})
	f.write(".gitignore", "build/\n")
	f.write("mine.txt", "the user's\n")
	f.write("old/a.txt", "a\n")
	f.write("cmd.txt", "before\n")
	f.age()
	m := f.mark()
	f.write("cmd.txt", "by the command\n")
	f.write("mine.txt", "saved by the user meanwhile\n")
	f.write("build/out.bin", "built")
	if err := os.Rename(f.path("old"), f.path("new")); err != nil {
		t.Fatal(err)
	}
	changes, blobs, err := f.w.Changes(t.Context(), m)
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(changes); len(got) != 5 {
		t.Fatalf("changes %v, want 5", got)
	}
	abs := func(rel string) string { return filepath.Join(f.w.dir, rel) }
	by := Written{Watched: true, Made: []string{abs("cmd.txt"), abs("build/out.bin"), abs("elsewhere/../../out")},
		Trees: []string{abs("old"), abs("new")}}
	kept, keptBlobs := f.w.Attribute(changes, blobs, by)
	byDigest := checkResult(t, kept, keptBlobs)
	wantSummary(t, summary(kept, byDigest), []string{
		"build: absent -> untracked: " + notCompared(reasonGitignore),
		"cmd.txt: before\n -> by the command\n",
		"new/a.txt: absent -> a\n",
		"old/a.txt: a\n -> absent",
	})
	for _, b := range keptBlobs {
		if string(b.Data) == "saved by the user meanwhile\n" {
			t.Fatal("the user's content is among the command's blobs")
		}
	}
}

// At a path where the command wrote a file that was there already, the
// change is the command's only when that file is still there and changed
// after the command first opened it: a file the user renamed over it, or
// removed, is the user's, even when the file system gave the user's file
// the old one's inode number again; so is an edit made before the
// command opened the file, with nothing after. A path the command removed
// is its own while nothing is there. What the user writes into the file
// the command holds open is the limit: it counts as the command's.
func TestAttributeTellsAFileReplacedMeanwhile(t *testing.T) {
	f := newFixture(t, Options{})
	names := []string{"written.txt", "replaced.txt", "reused.txt", "gone.txt", "early.txt", "appended.txt", "removed.txt", "recreated.txt"}
	for _, name := range names {
		f.write(name, name+" before\n")
	}
	f.age()
	m := f.mark()
	abs := func(rel string) string { return filepath.Join(f.w.dir, rel) }
	appendTo := func(name, text string) {
		a, err := os.OpenFile(f.path(name), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.WriteString(text); err != nil {
			t.Fatal(err)
		}
		a.Close()
	}
	saveByRename := func(name, text string) {
		f.write(".swp", text)
		if err := os.Rename(f.path(".swp"), f.path(name)); err != nil {
			t.Fatal(err)
		}
	}
	appendTo("early.txt", "the user's, before the command opened it\n")
	// The command opens these for writing, as the launcher sees it.
	by := Written{Watched: true, Removed: []string{abs("removed.txt"), abs("recreated.txt")}, Opened: map[string][]fileid.File{}}
	for _, name := range []string{"written.txt", "replaced.txt", "reused.txt", "gone.txt", "early.txt", "appended.txt"} {
		id, err := fileid.Lstat(f.path(name))
		if errors.Is(err, fileid.ErrNoIdentity) {
			t.Skipf("the temp dir's file system: %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		by.Opened[abs(name)] = []fileid.File{id}
	}
	appendTo("written.txt", "the command's\n")
	saveByRename("replaced.txt", "the user's, saved by rename\n")
	saveByRename("reused.txt", "the user's first save\n")
	saveByRename("reused.txt", "the user's second save\n")
	if err := os.Remove(f.path("gone.txt")); err != nil {
		t.Fatal(err)
	}
	appendTo("appended.txt", "the user's, while the command held it open\n")
	for _, name := range []string{"removed.txt", "recreated.txt"} {
		if err := os.Remove(f.path(name)); err != nil {
			t.Fatal(err)
		}
	}
	f.write("recreated.txt", "the user's, after the command removed it\n")

	changes, blobs, err := f.w.Changes(t.Context(), m)
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(changes); len(got) != len(names) {
		t.Fatalf("changes %v, want %v", got, names)
	}
	kept, keptBlobs := f.w.Attribute(changes, blobs, by)
	wantSummary(t, summary(kept, checkResult(t, kept, keptBlobs)), []string{
		"appended.txt: appended.txt before\n -> appended.txt before\nthe user's, while the command held it open\n",
		"removed.txt: removed.txt before\n -> absent",
		"written.txt: written.txt before\n -> written.txt before\nthe command's\n",
	})
}

// When nobody could watch the command, every change it might have made
// keeps its before, and its after is not kept and has no stamp: a
// rollback over it is a conflict, never a silent undo.
func TestAttributeWithoutAWatch(t *testing.T) {
	f := newFixture(t, Options{})
	f.write("mine.txt", "the user's\n")
	f.write("gone.txt", "gone\n")
	f.age()
	m := f.mark()
	f.write("mine.txt", "saved by the user meanwhile\n")
	f.write("new.txt", "new\n")
	if err := os.Remove(f.path("gone.txt")); err != nil {
		t.Fatal(err)
	}
	changes, blobs, err := f.w.Changes(t.Context(), m)
	if err != nil {
		t.Fatal(err)
	}
	kept, keptBlobs := f.w.Attribute(changes, blobs, Written{Why: "not Linux"})
	byDigest := checkResult(t, kept, keptBlobs)
	doubt := "untracked: " + unwatchedReason("not Linux")
	wantSummary(t, summary(kept, byDigest), []string{
		"gone.txt: gone\n -> absent",
		"mine.txt: the user's\n -> " + doubt,
		"new.txt: absent -> " + doubt,
	})
	for _, c := range kept {
		if c.After.Stamp != "" {
			t.Errorf("%s: the after image has a stamp", c.Path)
		}
	}
	if len(keptBlobs) != 2 {
		t.Errorf("%d blobs, want the two befores", len(keptBlobs))
	}
}
