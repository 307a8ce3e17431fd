package tools

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		pattern, path string
		match, below  bool
	}{
		{"**", "a", true, true},
		{"**", "a/b/c.go", true, true},
		{"*.go", "main.go", true, true},
		{"*.go", "cmd/main.go", false, false},
		{"**/*.go", "main.go", true, true},
		{"**/*.go", "cmd/x/main.go", true, true},
		{"**/*.go", "cmd/x", false, true},
		{"cmd/**", "cmd", true, true},
		{"cmd/**", "cmd/a/b", true, true},
		{"cmd/**", "internal", false, false},
		{"cmd/*/main.go", "cmd", false, true},
		{"cmd/*/main.go", "cmd/x/main.go", true, true},
		{"cmd/*/main.go", "cmd/x/y", false, false},
		{"a/**/b", "a/b", true, true},
		{"a/**/b", "a/x/y/b", true, true},
		{"a/**/b", "a/x/y/c", false, true},
		{"?.txt", "a.txt", true, true},
		{"?.txt", "ab.txt", false, false},
		{"[ab].txt", "b.txt", true, true},
		{"[ab].txt", "c.txt", false, false},
		{"./src/*.go", "src/x.go", true, true},
		{"**/**/x", "x", true, true},
		{"cmd/**/**/**", "cmd", true, true},
		{"src*/**", "src", true, true},
		{"*.{go,mod}", "go.mod", true, true},
		{"[!a].txt", "b.txt", true, true},
		{"[!a].txt", "a.txt", false, false},
		{"{cmd,internal/app}/*.go", "internal/app/x.go", true, true},
		{"{cmd,internal/app}/*.go", "internal", false, true},
	} {
		g, err := compileGlob(tc.pattern)
		if err != nil {
			t.Fatalf("compileGlob(%q): %v", tc.pattern, err)
		}
		if got := g.match(tc.path, false); got != tc.match {
			t.Errorf("%q match %q = %v, want %v", tc.pattern, tc.path, got, tc.match)
		}
		if got := g.mayMatchBelow(tc.path); got != tc.below {
			t.Errorf("%q mayMatchBelow %q = %v, want %v", tc.pattern, tc.path, got, tc.below)
		}
	}
	if g, _ := compileGlob("cmd/*/"); g.match("cmd/x", false) || !g.match("cmd/x", true) {
		t.Error(`"cmd/*/" should match directories only`)
	}
	for pattern, want := range map[string]string{
		"/etc/*": "must be relative", "../*": "must not contain ..", "[": "syntax error", ".": "empty", "": "empty",
	} {
		if _, err := compileGlob(pattern); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("compileGlob(%q) = %v, want %q", pattern, err, want)
		}
	}
}

// TestGlobPruningIsSound checks that a walk never skips a directory that
// holds a match: for random patterns and paths, every directory above a
// matching path may match below. The alternatives cover the cases the
// pruning must give up on: a "{...}" holding a "/", and one holding "**".
func TestGlobPruningIsSound(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	segs := []string{"*", "**", "?", "a", "a*", "*.go", "[ab]", "[!a]", "{a,b}", "{a,b/c}", "{**,a}", "{a/**,b}/c", "x{a,b/c}", "a**"}
	names := []string{"a", "b", "c", "x.go", "ab", "xa", "xb"}
	for range 50000 {
		var ps, es []string
		for range 1 + rng.IntN(4) {
			ps = append(ps, segs[rng.IntN(len(segs))])
		}
		for range 1 + rng.IntN(5) {
			es = append(es, names[rng.IntN(len(names))])
		}
		g, err := compileGlob(strings.Join(ps, "/"))
		if err != nil || !g.match(strings.Join(es, "/"), false) {
			continue
		}
		for i := 1; i < len(es); i++ {
			if dir := strings.Join(es[:i], "/"); !g.mayMatchBelow(dir) {
				t.Fatalf("%q matches %q, but mayMatchBelow(%q) is false", g.pattern, strings.Join(es, "/"), dir)
			}
		}
	}
}

func TestGlobManyStarsIsCheap(t *testing.T) {
	// Backtracking over 30 "**" against 30 elements would never finish.
	g, err := compileGlob(strings.Repeat("**/a/", 30) + "b")
	if err != nil {
		t.Fatal(err)
	}
	if g.match(strings.Repeat("a/", 30)+"c", false) {
		t.Fatal("matched")
	}
}

func TestListFiles(t *testing.T) {
	r, root := newTestRegistry(t, Options{}, map[string]string{
		"main.go": "", "go.mod": "", "cmd/app/main.go": "", "cmd/app/help.txt": "", "a.b": "",
		".git/config": "", "sub/.git/HEAD": "", ".github/ci.yml": "", "empty/": "",
	})
	if err := os.Symlink(t.TempDir(), filepath.Join(root, "outlink")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
		err  string
	}{
		{"everything", nil,
			".github/\n.github/ci.yml\na.b\ncmd/\ncmd/app/\ncmd/app/help.txt\ncmd/app/main.go\nempty/\ngo.mod\nmain.go\noutlink\nsub/\n", ""},
		{"top level go", map[string]any{"pattern": "*.go"}, "main.go\n", ""},
		{"all go", map[string]any{"pattern": "**/*.go"}, "cmd/app/main.go\nmain.go\n", ""},
		{"alternatives", map[string]any{"pattern": "**/*.{go,mod}"}, "cmd/app/main.go\ngo.mod\nmain.go\n", ""},
		{"under a path", map[string]any{"path": "cmd", "pattern": "*/*.txt"}, "cmd/app/help.txt\n", ""},
		{"path only", map[string]any{"path": "cmd/app"}, "cmd/app/help.txt\ncmd/app/main.go\n", ""},
		{"directories", map[string]any{"pattern": "*/"}, ".github/\ncmd/\nempty/\nsub/\n", ""},
		{"no match", map[string]any{"pattern": "*.rs"}, `no entries match "*.rs" in .`, ""},
		{"not a directory", map[string]any{"path": "main.go"}, "", "main.go is not a directory; use read_file"},
		{"missing", map[string]any{"path": "nope"}, "", "nope does not exist"},
		{"outside", map[string]any{"path": ".."}, "", "is outside the workspace"},
		{"through symlink outside", map[string]any{"path": "outlink"}, "", "is outside the workspace"},
		{"bad pattern", map[string]any{"pattern": "[x"}, "", "invalid arguments for list_files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := call(t, r, "list_files", tc.args)
			checkErr(t, err, tc.err)
			if got != tc.want {
				t.Fatalf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestListFilesCaps(t *testing.T) {
	files := map[string]string{}
	for i := range 30 {
		files[fmt.Sprintf("f%02d.txt", i)] = ""
	}
	r, _ := newTestRegistry(t, Options{MaxEntries: 5}, files)
	got, err := call(t, r, "list_files", nil)
	checkErr(t, err, "")
	want := "f00.txt\nf01.txt\nf02.txt\nf03.txt\nf04.txt\n[truncated: showed 5 of 30 entries (5-entry cap); narrow the pattern or path]"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	r, _ = newTestRegistry(t, Options{MaxOutputBytes: 20}, files)
	got, err = call(t, r, "list_files", nil)
	checkErr(t, err, "")
	want = "f00.txt\nf01.txt\n[truncated: showed 2 of 30 entries (20 bytes cap); narrow the pattern or path]"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// repoTree is a middling repository, 5,000 files in some 220 directories, as
// list_files' walk meets it: a directory before what it holds.
func repoTree() (entries []string, files map[string]string) {
	files = map[string]string{}
	for i := range 20 {
		top := fmt.Sprintf("pkg%02d", i)
		if i < 4 {
			top = fmt.Sprintf("cmd/tool%d", i)
		}
		entries = append(entries, top+"/")
		for j := range 10 {
			dir := fmt.Sprintf("%s/sub%02d", top, j)
			entries = append(entries, dir+"/")
			for k := range 25 {
				name := fmt.Sprintf("%s/file%02d%s", dir, k, []string{".go", "_test.go", ".md", ".txt", ".go"}[k%5])
				entries = append(entries, name)
				files[name] = ""
			}
		}
	}
	return entries, files
}

// globPatterns are the patterns a model sends list_files and search_text.
var globPatterns = []string{"**", "**/*.go", "*.go", "cmd/**/*_test.go", "pkg0?/sub0[0-4]/*.md", "**/sub01/**/*.txt"}

// BenchmarkGlobMatch matches every entry of a repository against each
// pattern, as a walk that prunes nothing would.
func BenchmarkGlobMatch(b *testing.B) {
	entries, _ := repoTree()
	for _, pattern := range globPatterns {
		g, err := compileGlob(pattern)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(pattern, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, e := range entries {
					rel, dir := strings.CutSuffix(e, "/")
					if dir {
						g.mayMatchBelow(rel)
					}
					g.match(rel, dir)
				}
			}
		})
	}
}

// BenchmarkListFiles lists a repository on disk, walk and all.
func BenchmarkListFiles(b *testing.B) {
	_, files := repoTree()
	r, _ := newTestRegistry(b, Options{}, files)
	for _, pattern := range globPatterns {
		a, err := json.Marshal(map[string]string{"pattern": pattern})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(pattern, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Run(b.Context(), "list_files", string(a)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A name that could break a line or blur where an entry ends is shown
// Go-quoted, so each entry is one line and reads back as one path; other
// names, however foreign, are shown as they are. search_text shows paths
// the same way.
func TestListFilesQuotesNames(t *testing.T) {
	r, _ := newTestRegistry(t, Options{}, map[string]string{
		"plain.txt": "needle\n", "héllo.txt": "", "two\nlines.txt": "needle\n", "tab\there/": "",
		"esc\x1b[31m.txt": "", `"quoted".txt`: "", `back\slash`: "", "bad\xffutf8": "",
		"nl\ndir/in.txt": "", "nbsp\u00a0.txt": "", "cr\r.txt": "",
	})
	got, err := call(t, r, "list_files", map[string]any{})
	checkErr(t, err, "")
	want := strings.Join([]string{
		`"\"quoted\".txt"`,
		`"back\\slash"`,
		`"bad\xffutf8"`,
		`"cr\r.txt"`,
		`"esc\x1b[31m.txt"`,
		`héllo.txt`,
		`"nbsp\u00a0.txt"`,
		`"nl\ndir/"`,
		`"nl\ndir/in.txt"`,
		`plain.txt`,
		`"tab\there/"`,
		`"two\nlines.txt"`,
	}, "\n") + "\n"
	if got != want {
		t.Fatalf("list_files:\n%s\nwant:\n%s", got, want)
	}
	// Unquoted, each entry names its file for the other tools (all but the
	// one that is not UTF-8, which no JSON string can name).
	for _, entry := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		name := entry
		if strings.HasPrefix(entry, `"`) {
			if name, err = strconv.Unquote(entry); err != nil {
				t.Fatalf("%s: %v", entry, err)
			}
		}
		if strings.HasSuffix(name, "/") || !utf8.ValidString(name) {
			continue
		}
		if _, err := call(t, r, "read_file", map[string]any{"path": name}); err != nil {
			t.Errorf("read_file %q, from %s: %v", name, entry, err)
		}
	}
	got, err = call(t, r, "search_text", map[string]any{"pattern": "needle"})
	checkErr(t, err, "")
	if want := "plain.txt:1: needle\n\"two\\nlines.txt\":1: needle\n"; got != want {
		t.Fatalf("search_text: got %q, want %q", got, want)
	}
	// The model is told the rule.
	for _, name := range []string{"list_files", "search_text"} {
		if d, _ := r.Def(name); !strings.Contains(d.Description, "quote") {
			t.Errorf("%s: %q does not say how paths are quoted", name, d.Description)
		}
	}
}
