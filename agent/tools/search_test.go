package tools

import (
	"fmt"
	"strings"
	"testing"
)

func TestSearchText(t *testing.T) {
	long := strings.Repeat("a", 500) + "NEEDLE" + strings.Repeat("b", 500)
	r, _ := newTestRegistry(t, Options{}, map[string]string{
		"main.go":         "package main\n\nfunc main() {\n\tTODO()\n}\n",
		"cmd/x/x.go":      "package x\n// todo: later\n",
		"cmd/x/notes.txt": "TODO in text\n",
		"bin.dat":         "TODO\x00\n",
		".git/info":       "TODO\n",
		"long.txt":        long + "\n",
		"crlf.txt":        "end here\r\n",
	})
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
		err  string
	}{
		{"everywhere", map[string]any{"pattern": "TODO"},
			"cmd/x/notes.txt:1: TODO in text\nmain.go:4: \tTODO()\n", ""},
		{"case insensitive", map[string]any{"pattern": "(?i)todo", "glob": "*.go"},
			"cmd/x/x.go:2: // todo: later\nmain.go:4: \tTODO()\n", ""},
		{"glob with alternatives", map[string]any{"pattern": "TODO", "glob": "*.{txt,go}"},
			"cmd/x/notes.txt:1: TODO in text\nmain.go:4: \tTODO()\n", ""},
		{"glob with a path", map[string]any{"pattern": "package", "glob": "cmd/**/*.go"}, "cmd/x/x.go:1: package x\n", ""},
		{"under a path", map[string]any{"pattern": "TODO", "path": "cmd"}, "cmd/x/notes.txt:1: TODO in text\n", ""},
		{"one file", map[string]any{"pattern": "^package", "path": "cmd/x/x.go"}, "cmd/x/x.go:1: package x\n", ""},
		{"anchored at line end", map[string]any{"pattern": "here$"}, "crlf.txt:1: end here\n", ""},
		{"long line shortened around the match", map[string]any{"pattern": "NEEDLE"},
			"long.txt:1: …" + strings.Repeat("a", 50) + "NEEDLE" + strings.Repeat("b", 144) + "…\n", ""},
		{"no match", map[string]any{"pattern": "nothing here"}, `no matches for "nothing here" (searched 5 files)`, ""},
		{"invalid regexp", map[string]any{"pattern": "a(b"}, "", "invalid regular expression: error parsing regexp: missing closing )"},
		{"empty pattern", map[string]any{"pattern": ""}, "", "pattern must not be empty"},
		{"bad glob", map[string]any{"pattern": "x", "glob": "[x"}, "", "syntax error in pattern"},
		{"outside", map[string]any{"pattern": "x", "path": "/etc"}, "", "is outside the workspace"},
		{"missing path", map[string]any{"pattern": "x", "path": "nope"}, "", "nope does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := call(t, r, "search_text", tc.args)
			checkErr(t, err, tc.err)
			if got != tc.want {
				t.Fatalf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestSearchTextCaps(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 50; i++ {
		fmt.Fprintf(&b, "hit %d\n", i)
	}
	files := map[string]string{"a.txt": b.String()}
	r, _ := newTestRegistry(t, Options{MaxMatches: 3}, files)
	got, err := call(t, r, "search_text", map[string]any{"pattern": "hit"})
	checkErr(t, err, "")
	want := "a.txt:1: hit 1\na.txt:2: hit 2\na.txt:3: hit 3\n[truncated: stopped after 3 matches (3-match cap); narrow the pattern, path or glob]"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	// Exactly as many matches as the cap is not a truncation.
	got, err = call(t, r, "search_text", map[string]any{"pattern": "hit [1-3]$"})
	checkErr(t, err, "")
	if got != "a.txt:1: hit 1\na.txt:2: hit 2\na.txt:3: hit 3\n" {
		t.Fatalf("got %q", got)
	}
	r, _ = newTestRegistry(t, Options{MaxOutputBytes: 40}, files)
	got, err = call(t, r, "search_text", map[string]any{"pattern": "hit"})
	checkErr(t, err, "")
	want = "a.txt:1: hit 1\na.txt:2: hit 2\n[truncated: stopped after 2 matches (40 bytes cap); narrow the pattern, path or glob]"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestExcerpt(t *testing.T) {
	for _, tc := range []struct {
		line string
		at   int
		want string
	}{
		{"short", 0, "short"},
		{strings.Repeat("x", 300), 0, strings.Repeat("x", 200) + "…"},
		{strings.Repeat("x", 300), 290, "…" + strings.Repeat("x", 60)},
		{strings.Repeat("é", 150), 101, "…" + strings.Repeat("é", 100) + "…"},
		{"bad \xff", 0, "bad \uFFFD"},
		// Up to 200 bytes a line is shown whole, wherever the match is.
		{strings.Repeat("x", 200), 100, strings.Repeat("x", 200)},
		{strings.Repeat("x", 201), 100, "…" + strings.Repeat("x", 151)},
		{strings.Repeat("x", 201), 0, strings.Repeat("x", 200) + "…"},
		// 50 bytes before the match falls inside a rune: the excerpt starts
		// at that rune.
		{strings.Repeat("日", 100) + "NEEDLE", 300, "…" + strings.Repeat("日", 17) + "NEEDLE"},
	} {
		if got := excerpt([]byte(tc.line), tc.at); got != tc.want {
			t.Errorf("excerpt(%.20q…, %d) = %q, want %q", tc.line, tc.at, got, tc.want)
		}
	}
}
