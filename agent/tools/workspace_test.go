package tools

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNewWorkspace(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, dir, root, err string
	}{
		{"directory", dir, dir, ""},
		{"symlink resolved", link, dir, ""},
		{"missing", filepath.Join(dir, "nope"), "", "no such file"},
		{"file", file, "", "not a directory"},
		{"empty", "", "", "empty path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := NewWorkspace(tc.dir)
			checkErr(t, err, tc.err)
			if err == nil && ws.Root() != tc.root {
				t.Fatalf("Root() = %s, want %s", ws.Root(), tc.root)
			}
		})
	}
	t.Run("relative made absolute", func(t *testing.T) {
		t.Chdir(dir)
		ws, err := NewWorkspace(".")
		checkErr(t, err, "")
		if ws.Root() != dir {
			t.Fatalf("Root() = %s, want %s", ws.Root(), dir)
		}
	})
}

// resolveFixture is a workspace with every kind of symlink Resolve must
// judge, next to an outside directory holding a secret.
func resolveFixture(t testing.TB) (ws *Workspace, root, outside string) {
	t.Helper()
	base := t.TempDir()
	root, outside = filepath.Join(base, "root"), filepath.Join(base, "outside")
	writeTree(t, root, map[string]string{"a.txt": "a", "sub/b.txt": "b", "sub/deep/c.txt": "c", "a/": ""})
	writeTree(t, outside, map[string]string{"secret": "s", "dir/x": "x"})
	links := map[string]string{
		"out-file":          filepath.Join(outside, "secret"),
		"out-dir":           outside,
		"out-rel":           "../outside/secret",
		"sub/deep/out-deep": "../../../outside/dir",
		"in-file":           "a.txt",
		"in-dir":            "sub",
		"chain1":            "chain2",
		"chain2":            "chain3",
		"chain3":            filepath.Join(outside, "secret"),
		"inchain1":          "inchain2",
		"inchain2":          "sub/b.txt",
		"dangling-out":      filepath.Join(outside, "new-file"),
		"dangling-in":       "sub/not-yet.txt",
		"loop1":             "loop2",
		"loop2":             "loop1",
		"via-out":           filepath.Join(outside, "back"),
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	// A symlink outside that points back in: what matters is where a path
	// lands, not the route.
	if err := os.Symlink(filepath.Join(root, "sub"), filepath.Join(outside, "back")); err != nil {
		t.Fatal(err)
	}
	ws, err := NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	return ws, ws.Root(), outside
}

func TestResolve(t *testing.T) {
	ws, root, _ := resolveFixture(t)
	for _, tc := range []struct {
		name, path, want, err string
	}{
		{"relative file", "a.txt", "a.txt", ""},
		{"nested", "sub/deep/c.txt", "sub/deep/c.txt", ""},
		{"root", ".", ".", ""},
		{"absolute inside", filepath.Join(root, "sub/b.txt"), "sub/b.txt", ""},
		{"dot dot that stays inside", "sub/../a.txt", "a.txt", ""},
		{"new file", "new.txt", "new.txt", ""},
		{"new file in new dirs", "x/y/z.txt", "x/y/z.txt", ""},
		{"symlink to file inside", "in-file", "a.txt", ""},
		{"through symlinked dir inside", "in-dir/deep/c.txt", "sub/deep/c.txt", ""},
		{"new file under symlinked dir inside", "in-dir/new.txt", "sub/new.txt", ""},
		{"chain inside", "inchain1", "sub/b.txt", ""},
		{"dangling symlink to inside", "dangling-in", "sub/not-yet.txt", ""},
		{"route through outside lands inside", "via-out/b.txt", "sub/b.txt", ""},
		{"empty", "", "", "empty path"},
		{"NUL byte", "a\x00b", "", `path "a\x00b" contains a NUL byte`},
		{"parent", "../x", "", `path "../x" is outside the workspace ` + root},
		{"hidden escape", "./a/../../etc", "", `path "./a/../../etc" is outside the workspace`},
		{"deep escape", "sub/deep/../../../../etc/passwd", "", "is outside the workspace"},
		{"absolute outside", "/etc/passwd", "", `path "/etc/passwd" is outside the workspace`},
		{"root's parent absolute", filepath.Dir(root), "", "is outside the workspace"},
		{"prefix sibling", root + "-other/x", "", "is outside the workspace"},
		{"symlink file outside", "out-file", "", `path "out-file" is outside the workspace`},
		{"relative symlink outside", "out-rel", "", "is outside the workspace"},
		{"symlinked dir outside", "out-dir/secret", "", "is outside the workspace"},
		{"new file under symlinked dir outside", "out-dir/new.txt", "", "is outside the workspace"},
		{"symlink outside at depth", "sub/deep/out-deep/x", "", "is outside the workspace"},
		{"symlink chain outside", "chain1", "", "is outside the workspace"},
		{"dangling symlink to outside", "dangling-out", "", "is outside the workspace"},
		{"symlink loop", "loop1", "", "resolve path"},
		{"through a file", "a.txt/x", "", "not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ws.Resolve(tc.path)
			checkErr(t, err, tc.err)
			if err != nil {
				if got != "" {
					t.Fatalf("Resolve returned %q with its error", got)
				}
				return
			}
			if want := filepath.Join(root, tc.want); got != want {
				t.Fatalf("Resolve(%q) = %s, want %s", tc.path, got, want)
			}
		})
	}
}

func TestResolveErrorKinds(t *testing.T) {
	ws, _, outside := resolveFixture(t)
	for _, p := range []string{"../x", "out-dir/secret", "chain1", filepath.Join(outside, "secret")} {
		if _, err := ws.Resolve(p); !errors.Is(err, ErrOutsideWorkspace) {
			t.Errorf("Resolve(%q) = %v, want ErrOutsideWorkspace", p, err)
		}
	}
	for _, p := range []string{"", "\x00"} {
		if _, err := ws.Resolve(p); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("Resolve(%q) = %v, want ErrInvalidPath", p, err)
		}
	}
	// The error names where a symlink leads, so a person sees why.
	_, err := ws.Resolve("out-file")
	if !strings.Contains(err.Error(), "resolves to "+filepath.Join(outside, "secret")) {
		t.Errorf("error %q does not name the target", err)
	}
}

func TestResolveThroughAlias(t *testing.T) {
	real := t.TempDir()
	alias := filepath.Join(t.TempDir(), "alias")
	if err := os.Symlink(real, alias); err != nil {
		t.Fatal(err)
	}
	ws, err := NewWorkspace(alias)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ws.Resolve(filepath.Join(alias, "f.txt"))
	checkErr(t, err, "")
	if want := filepath.Join(real, "f.txt"); got != want {
		t.Fatalf("Resolve = %s, want %s", got, want)
	}
	if _, err := ws.Resolve(filepath.Join(alias, "..", "x")); !errors.Is(err, ErrOutsideWorkspace) {
		t.Fatalf("escape through the alias: %v", err)
	}
}

func FuzzResolve(f *testing.F) {
	for _, s := range []string{"a", "../a", "/", "a/../../b", "./", "\x00", "sub//x/./../y", "out-dir/x"} {
		f.Add(s)
	}
	ws, root, _ := resolveFixture(f)
	f.Fuzz(func(t *testing.T, p string) {
		got, err := ws.Resolve(p)
		if err == nil && got != root && !strings.HasPrefix(got, root+"/") {
			t.Fatalf("Resolve(%q) = %s, outside %s", p, got, root)
		}
	})
}

// A chain of dangling symlinks is followed 40 links deep, as the kernel
// does (ELOOP); one more and the path is refused.
func TestResolveDanglingChainBound(t *testing.T) {
	for _, tc := range []struct {
		links int
		err   string
	}{{40, ""}, {41, "too many levels of symbolic links"}} {
		root := t.TempDir()
		for i := 1; i <= tc.links; i++ {
			target := fmt.Sprintf("link%d", i+1)
			if i == tc.links {
				target = "new.txt"
			}
			if err := os.Symlink(target, filepath.Join(root, fmt.Sprintf("link%d", i))); err != nil {
				t.Fatal(err)
			}
		}
		ws, err := NewWorkspace(root)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ws.Resolve("link1")
		checkErr(t, err, tc.err)
		if want := filepath.Join(ws.Root(), "new.txt"); err == nil && got != want {
			t.Fatalf("%d links: %s, want %s", tc.links, got, want)
		}
	}
}

// git's own directory is no workspace: a .git directory (in any case),
// one inside it, a link to one, or a bare repository. The repository's
// working tree is, and so is a directory that merely holds a HEAD file.
func TestGitsOwnDirectoryIsNoWorkspace(t *testing.T) {
	repo := t.TempDir()
	mkdir := func(p string) string {
		t.Helper()
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write := func(p string) {
		t.Helper()
		if err := os.WriteFile(p, []byte("ref: refs/heads/main\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitDir := mkdir(filepath.Join(repo, ".git"))
	hooks := mkdir(filepath.Join(gitDir, "hooks"))
	upper := mkdir(filepath.Join(t.TempDir(), ".GIT"))
	link := filepath.Join(t.TempDir(), "plain-name")
	if err := os.Symlink(gitDir, link); err != nil {
		t.Fatal(err)
	}
	bare := mkdir(filepath.Join(t.TempDir(), "project.git"))
	write(filepath.Join(bare, "HEAD"))
	mkdir(filepath.Join(bare, "objects"))
	mkdir(filepath.Join(bare, "refs"))
	for _, dir := range []string{gitDir, hooks, upper, link, bare} {
		if ws, err := NewWorkspace(dir); !errors.Is(err, ErrGitDir) {
			t.Errorf("%s: workspace %v, error %v; want ErrGitDir", dir, ws, err)
		}
	}
	headOnly := mkdir(filepath.Join(t.TempDir(), "notes"))
	write(filepath.Join(headOnly, "HEAD"))
	for _, dir := range []string{repo, headOnly, mkdir(filepath.Join(repo, "git"))} {
		if _, err := NewWorkspace(dir); err != nil {
			t.Errorf("%s: %v", dir, err)
		}
	}
}
