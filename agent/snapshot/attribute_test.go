package snapshot

import (
	"os"
	"path/filepath"
	"testing"
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
	by := Written{Watched: true, Paths: []string{abs("cmd.txt"), abs("build/out.bin"), abs("elsewhere/../../out")},
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
