package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestHomePaths(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		name  string
		env   map[string]string
		goBin string
		want  []string
	}{
		{"defaults from HOME", map[string]string{"HOME": "/home/u", "PATH": "/usr/bin:/home/u/bin"}, "/usr/local/go/bin/go",
			[]string{"/home/u", "/usr/local/go", "/home/u/go", "/home/u/.config/go", "/home/u/.config/git", "/home/u/.gitconfig", "/usr/bin", "/home/u/bin"}},
		{"what the environment names", map[string]string{
			"HOME": "/home/u", "XDG_CONFIG_HOME": "/cfg", "GOROOT": "/opt/go", "GOPATH": "/a:/b",
			"GOMODCACHE": "/mods", "GOENV": "/cfg/goenv", "PATH": "/opt/go/bin"}, "",
			[]string{"/home/u", "/opt/go", "/a", "/b", "/mods", "/cfg/goenv", "/cfg/go", "/cfg/git", "/home/u/.gitconfig", "/opt/go/bin"}},
		// A PATH that names the root or a relative directory would open
		// far more than programs; GOENV=off is no path.
		{"too wide or not paths", map[string]string{"HOME": "/home/u", "GOENV": "off", "PATH": "/:.:bin::/home/u/"}, "/weird/go",
			[]string{"/home/u", "/home/u/go", "/home/u/.config/go", "/home/u/.config/git", "/home/u/.gitconfig", "/home/u"}},
		{"no home", map[string]string{"PATH": "/usr/bin"}, "", []string{"/usr/bin"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := homePaths(env(tc.env), tc.goBin); !slices.Equal(got, tc.want) {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	dirs, files := classify([]string{dir, file, filepath.Join(dir, "missing"), dir})
	if !slices.Equal(dirs, []string{dir}) || !slices.Equal(files, []string{file}) {
		t.Fatalf("dirs %q files %q", dirs, files)
	}
}

// Each workspace has a cache of its own, named by its path, under
// $XDG_CACHE_HOME or ~/.cache.
func TestWorkspaceCache(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	home := map[string]string{"HOME": "/home/u"}
	a, b := workspaceCache(env(home), "/src/a"), workspaceCache(env(home), "/src/b")
	if a == b || !strings.HasPrefix(a, "/home/u/.cache/retrace/sandbox/") || workspaceCache(env(home), "/src/a/") != a {
		t.Fatalf("workspaces /src/a and /src/b: caches %q and %q", a, b)
	}
	if c := workspaceCache(env(map[string]string{"HOME": "/home/u", "XDG_CACHE_HOME": "/c"}), "/src/a"); filepath.Dir(c) != "/c/retrace/sandbox" {
		t.Fatalf("with XDG_CACHE_HOME=/c: %q", c)
	}
	if c := workspaceCache(env(map[string]string{}), "/src/a"); c != "" {
		t.Fatalf("with neither HOME nor XDG_CACHE_HOME: %q", c)
	}
}

// TestNewPolicy: an unconfined command gets no rules; a confined one may
// write the workspace, its temp dir, its workspace's cache and the
// directories the configuration adds.
func TestNewPolicy(t *testing.T) {
	env := func(string) string { return "" }
	extra := t.TempDir()
	c := Command{Dir: "/ws", Reach: Reach{Write: []string{extra, "/does/not/exist"}}}
	p := newPolicy(Status{Mode: Off}, c, "/tmp/t", "/c", env, "")
	if p.Confine || p.Write != nil || p.Read != nil || p.Parent != os.Getpid() {
		t.Fatalf("unconfined: %+v", p)
	}
	p = newPolicy(Status{Files: true, Network: true, ABI: 4}, c, "/tmp/t", "/c", env, "")
	if !p.Confine || !p.NoNetwork || !p.Refer || !slices.Equal(p.Write, []string{"/ws", "/tmp/t", "/c", extra}) || !slices.Contains(p.Read, "/usr") {
		t.Fatalf("confined: %+v", p)
	}
	if p = newPolicy(Status{Files: true, ABI: 1}, Command{Dir: "/ws"}, "/tmp/t", "", env, ""); p.Refer || len(p.Write) != 2 {
		t.Fatalf("ABI 1, no cache: %+v", p)
	}
	// The home directory as the workspace: commands write in it, but not
	// in its secret places.
	home := t.TempDir()
	for _, d := range []string{".ssh", "proj"} {
		if err := os.Mkdir(filepath.Join(home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	homeEnv := func(k string) string { return map[string]string{"HOME": home}[k] }
	p = newPolicy(Status{Files: true, ABI: 4}, Command{Dir: home}, "/tmp/t", "", homeEnv, "")
	if slices.Contains(p.Write, home) || slices.Contains(p.Write, filepath.Join(home, ".ssh")) || !slices.Contains(p.Write, filepath.Join(home, "proj")) {
		t.Fatalf("home as the workspace: writes %q", p.Write)
	}
	// A workspace inside a secret place is the person's choice.
	inside := filepath.Join(home, ".ssh")
	if p = newPolicy(Status{Files: true, ABI: 4}, Command{Dir: inside}, "/tmp/t", "", homeEnv, ""); !slices.Contains(p.Write, inside) {
		t.Fatalf("a workspace inside ~/.ssh: writes %q", p.Write)
	}
}

// carve splits a grant around the places denied in it, however they are
// reached: beneath it, through a symlink into them, through a symlinked
// directory that holds one, or through a link that loops back.
func TestCarve(t *testing.T) {
	base := t.TempDir()
	mk := func(rel string) string {
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	link := func(target, rel string) {
		if err := os.Symlink(target, filepath.Join(base, rel)); err != nil {
			t.Fatal(err)
		}
	}
	home := filepath.Join(base, "home")
	mk("home/.ssh/id")
	mk("home/.config/gh/hosts.yml")
	mk("home/.config/nvim/init.lua")
	mk("home/notes.txt")
	mk("dotfiles/aws/credentials")
	mk("elsewhere/tool")
	link(filepath.Join(base, "dotfiles", "aws"), "home/.aws") // the secret lives elsewhere
	link(home, "home/loop")                                   // back to home itself
	link(filepath.Join(base, "dotfiles"), "home/dots")        // a directory that holds the secret
	deny := []string{filepath.Join(home, ".ssh"), filepath.Join(home, ".config", "gh"), filepath.Join(home, ".aws")}
	got := carve([]string{home, filepath.Join(base, "elsewhere"), filepath.Join(base, "missing")}, deny)
	slices.Sort(got)
	want := []string{
		filepath.Join(base, "elsewhere"),
		filepath.Join(home, ".config", "nvim"),
		filepath.Join(home, "notes.txt"),
	}
	if !slices.Equal(got, want) {
		t.Fatalf("carve:\n got  %q\n want %q", got, want)
	}
	// Nothing denied beneath: the grant stays whole.
	if got := carve([]string{filepath.Join(home, ".config", "nvim")}, deny); !slices.Equal(got, []string{filepath.Join(home, ".config", "nvim")}) {
		t.Fatalf("a grant with nothing denied in it: %q", got)
	}
	// A grant inside a denied place goes.
	if got := carve([]string{filepath.Join(home, ".ssh", "id")}, deny); len(got) != 0 {
		t.Fatalf("a grant inside a denied place: %q", got)
	}
}

// The secret places are where the environment says, and at their
// default places under home too, with what the configuration adds.
func TestSecretPlaces(t *testing.T) {
	env := map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "/cfg", "GNUPGHOME": "/keys/gpg"}
	got := secretPlaces(func(k string) string { return env[k] }, []string{"/work/secrets", "relative"}, false)
	for _, want := range []string{"/home/u/.ssh", "/home/u/.config/gh", "/cfg/gh", "/cfg/git/credentials", "/home/u/.local/share/keyrings",
		"/home/u/.local/share/retrace", "/home/u/.cache/retrace", "/keys/gpg", "/work/secrets"} {
		if !slices.Contains(got, want) {
			t.Errorf("%s is not among the secret places", want)
		}
	}
	if slices.Contains(got, "relative") || slices.Contains(got, "/etc/shadow") {
		t.Errorf("a relative path, or the system's secrets for a user, among the secret places")
	}
	if got := secretPlaces(func(k string) string { return env[k] }, nil, true); !slices.Contains(got, "/etc/shadow") || !slices.Contains(got, "/etc/ssl/private") {
		t.Errorf("root's secret places lack the system's: %q", got)
	}
}
