package sandbox

import (
	"os"
	"path/filepath"
	"slices"
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
			[]string{"/usr/local/go", "/home/u/go", "/home/u/.config/go", "/home/u/.config/git", "/home/u/.gitconfig", "/usr/bin", "/home/u/bin"}},
		{"what the environment names", map[string]string{
			"HOME": "/home/u", "XDG_CONFIG_HOME": "/cfg", "GOROOT": "/opt/go", "GOPATH": "/a:/b",
			"GOMODCACHE": "/mods", "GOENV": "/cfg/goenv", "PATH": "/opt/go/bin"}, "",
			[]string{"/opt/go", "/a", "/b", "/mods", "/cfg/goenv", "/cfg/go", "/cfg/git", "/home/u/.gitconfig", "/opt/go/bin"}},
		// A PATH that names the root, the home directory or a relative
		// directory would open far more than programs; GOENV=off is no path.
		{"too wide or not paths", map[string]string{"HOME": "/home/u", "GOENV": "off", "PATH": "/:/home/u:.:bin::/home/u/"}, "/weird/go",
			[]string{"/home/u/go", "/home/u/.config/go", "/home/u/.config/git", "/home/u/.gitconfig"}},
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

func TestGoCache(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"HOME": "/home/u"}, "/home/u/.cache/retrace/go-build"},
		{map[string]string{"HOME": "/home/u", "XDG_CACHE_HOME": "/c"}, "/c/retrace/go-build"},
		{map[string]string{}, ""},
	} {
		if got := goCache(func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.env, got, tc.want)
		}
	}
}

// TestNewPolicy: an unconfined command gets no rules; a confined one may
// write the workspace, its temp dir and the shared build cache.
func TestNewPolicy(t *testing.T) {
	env := func(string) string { return "" }
	p := newPolicy(Status{Mode: Off}, "/ws", "/tmp/t", "/c", env, "")
	if p.Confine || p.Write != nil || p.Read != nil || p.Parent != os.Getpid() {
		t.Fatalf("unconfined: %+v", p)
	}
	p = newPolicy(Status{Files: true, Network: true, ABI: 4}, "/ws", "/tmp/t", "/c", env, "")
	if !p.Confine || !p.NoNetwork || !p.Refer || !slices.Equal(p.Write, []string{"/ws", "/tmp/t", "/c"}) || !slices.Contains(p.Read, "/usr") {
		t.Fatalf("confined: %+v", p)
	}
	if p = newPolicy(Status{Files: true, ABI: 1}, "/ws", "/tmp/t", "", env, ""); p.Refer || len(p.Write) != 2 {
		t.Fatalf("ABI 1, no cache: %+v", p)
	}
}
