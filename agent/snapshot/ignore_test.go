package snapshot

import (
	"os"
	"slices"
	"testing"
)

// ignoredWorkspace writes a workspace with something of every kind the
// rules keep out, and the files they let in.
func ignoredWorkspace(t *testing.T) *fixture {
	f := newFixture(t, Options{Exclude: []string{"secret*", "# a comment", ""}})
	// A file under an excluded directory cannot be re-included (git's
	// rule): the "!" line for build/out.bin changes nothing.
	f.write(".gitignore", "build/\n*.log\n!keep.log\n!build/out.bin\n")
	f.write("sub/.gitignore", "local.txt\r\n")
	f.write("a.txt", "a")
	f.write("build/out.bin", "out")
	f.write("x.log", "x")
	f.write("keep.log", "keep")
	f.write("sub/local.txt", "local")
	f.write("sub/other.txt", "other")
	f.write("local.txt", "only sub's .gitignore names local.txt")
	f.write("secret.env", "TOKEN=1")
	f.write(".git/HEAD", "ref: refs/heads/main\n")
	f.age()
	f.trustStamps()
	return f
}

func TestIgnoredPathsAreNotRead(t *testing.T) {
	f := ignoredWorkspace(t)
	f.mark()
	want := []string{".gitignore", "a.txt", "keep.log", "local.txt", "sub/.gitignore", "sub/other.txt"}
	if got := f.takeReads(); !slices.Equal(got, want) {
		t.Errorf("read %v, want only %v", got, want)
	}
}

func TestIgnoredPathsAreReportedUntracked(t *testing.T) {
	f := ignoredWorkspace(t)
	m := f.mark()
	f.takeReads()
	f.write("build/new.bin", "new")    // the ignored directory's entries change
	f.write("build/out.bin", "in pl.") // inside an ignored directory: not compared
	f.write("x.log", "xx")
	f.write("keep.log", "kept")
	f.write("sub/local.txt", "local, longer")
	f.write("secret.env", "TOKEN=22")
	f.write(".git/index", "git's")
	changes, blobs := f.changes(m)
	ignoredDir := "untracked: " + notCompared(reasonGitignore)
	wantSummary(t, summary(changes, blobs), []string{
		".git: untracked: " + notCompared(reasonGitDir) + " -> untracked: " + notCompared(reasonGitDir),
		"build: " + ignoredDir + " -> " + ignoredDir,
		"keep.log: keep -> kept",
		"secret.env: untracked: " + reasonExclude + " -> untracked: " + reasonExclude,
		"sub/local.txt: untracked: " + reasonGitignore + " -> untracked: " + reasonGitignore,
		"x.log: untracked: " + reasonGitignore + " -> untracked: " + reasonGitignore,
	})
	for _, c := range changes {
		if c.Path == "secret.env" && (c.Before.Size != 7 || c.After.Size != 8) {
			t.Errorf("secret.env sizes %d -> %d, want 7 -> 8", c.Before.Size, c.After.Size)
		}
	}
	if got := f.takeReads(); !slices.Equal(got, []string{"keep.log"}) {
		t.Errorf("Changes read %v, want only keep.log", got)
	}
}

// TestIgnoredPathsCreatedAndDeleted: an ignored path that appears or goes
// away is reported Absent on the side where it is not.
func TestIgnoredPathsCreatedAndDeleted(t *testing.T) {
	f := ignoredWorkspace(t)
	m := f.mark()
	f.write("y.log", "y")
	if err := os.Remove(f.path("x.log")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(f.path("build")); err != nil {
		t.Fatal(err)
	}
	changes, blobs := f.changes(m)
	wantSummary(t, summary(changes, blobs), []string{
		"build: untracked: " + notCompared(reasonGitignore) + " -> absent",
		"x.log: untracked: " + reasonGitignore + " -> absent",
		"y.log: absent -> untracked: " + reasonGitignore,
	})
}

// TestGitignoreEditIsNotAFileChange: a path that turns from ignored to
// tracked because .gitignore changed is not itself a change; .gitignore
// is. From then on the path is tracked: a scan must not take the last
// scan's decision for it once the rules changed.
func TestGitignoreEditIsNotAFileChange(t *testing.T) {
	f := ignoredWorkspace(t)
	m := f.mark()
	f.write(".gitignore", "build/\n")
	f.write("sub/.gitignore", "")
	changes, blobs := f.changes(m)
	wantSummary(t, summary(changes, blobs), []string{
		".gitignore: build/\n*.log\n!keep.log\n!build/out.bin\n -> build/\n",
		"sub/.gitignore: local.txt\r\n -> ",
	})

	m = f.mark()
	f.write("x.log", "now tracked")
	f.write("sub/local.txt", "tracked too")
	changes, blobs = f.changes(m)
	wantSummary(t, summary(changes, blobs), []string{
		"sub/local.txt: local -> tracked too",
		"x.log: x -> now tracked",
	})
}

func TestImageFollowsIgnoreRules(t *testing.T) {
	f := ignoredWorkspace(t)
	f.write("build/deeper/file", "deep")
	for _, c := range []struct{ path, want string }{
		{"a.txt", "a"},
		{"keep.log", "keep"},
		{"sub/other.txt", "other"},
		{"local.txt", "only sub's .gitignore names local.txt"},
		{"x.log", "untracked: " + reasonGitignore},
		{"never.log", "absent"},
		{"sub/local.txt", "untracked: " + reasonGitignore},
		{"build", "untracked: " + reasonGitignore},
		{"build/out.bin", "untracked: " + reasonGitignore},
		{"build/deeper/file", "untracked: " + reasonGitignore},
		{"secret.env", "untracked: " + reasonExclude},
		{".git/HEAD", "untracked: " + reasonGitDir},
		{".git", "untracked: " + reasonGitDir},
	} {
		img, data, err := f.w.Image(c.path)
		if err != nil {
			t.Errorf("Image(%s): %v", c.path, err)
			continue
		}
		blobs := map[string][]byte{img.Blob: data}
		if got := content(img, blobs); got != c.want {
			t.Errorf("Image(%s) = %q, want %q", c.path, got, c.want)
		}
	}
	if got := f.takeReads(); !slices.Equal(got, []string{"a.txt", "keep.log", "local.txt", "sub/other.txt"}) {
		t.Errorf("Image read %v, want only the tracked files", got)
	}
}

// TestIgnoredPathsComparedBySizeAndMtime: an ignored path is never read,
// so only its size and mtime speak for it; a chmod, which moves its ctime,
// is not reported.
func TestIgnoredPathsComparedBySizeAndMtime(t *testing.T) {
	f := ignoredWorkspace(t)
	m := f.mark()
	for _, p := range []string{"x.log", "build", "secret.env"} {
		if err := os.Chmod(f.path(p), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	changes, blobs := f.changes(m)
	wantSummary(t, summary(changes, blobs), nil)
}
