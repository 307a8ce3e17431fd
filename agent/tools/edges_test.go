package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Every cap at its edge, cap-1, cap and cap+1, with the results written
// out by hand from the tool descriptions and the caps they state.

// read_file takes whole lines while they fit: a range exactly as long as
// the cap is shown whole.
func TestReadFileCapEdge(t *testing.T) {
	r, _ := newTestRegistry(t, Options{MaxReadBytes: 16}, map[string]string{
		"15.txt": "aaaaaaa\nbbbbbb\n",            // 8 + 7 bytes
		"16.txt": "aaaaaaa\nbbbbbbb\n",           // 8 + 8
		"17.txt": "aaaaaaa\nbbbbbbbb\n",          // 8 + 9
		"more":   "aaaaaaa\nbbbbbbb\nccc\nddd\n", // 8 + 8 + 4 + 4
	})
	for _, tc := range []struct{ path, want string }{
		{"15.txt", "aaaaaaa\nbbbbbb\n"},
		{"16.txt", "aaaaaaa\nbbbbbbb\n"},
		{"17.txt", "aaaaaaa\n[truncated: showed lines 1-1 of 2 (16 bytes cap); ask for a line range]"},
		{"more", "aaaaaaa\nbbbbbbb\n[truncated: showed lines 1-2 of 4 (16 bytes cap); ask for a line range]"},
	} {
		got, err := call(t, r, "read_file", map[string]any{"path": tc.path})
		checkErr(t, err, "")
		if got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.path, got, tc.want)
		}
	}
}

// Line ranges at their edges.
func TestReadFileRangeEdges(t *testing.T) {
	r, _ := newTestRegistry(t, Options{}, map[string]string{"ten.txt": numbered(10)})
	for _, tc := range []struct {
		args      map[string]any
		want, err string
	}{
		{map[string]any{"start_line": 1, "end_line": 1}, "line 1\n", ""},
		{map[string]any{"start_line": 10, "end_line": 10}, "line 10\n", ""},
		{map[string]any{"start_line": 10}, "line 10\n", ""},
		{map[string]any{"start_line": 11}, "", "start_line 11 is past the end of ten.txt, which has 10 lines"},
		{map[string]any{"start_line": 0}, "", "start_line must be at least 1 (lines are numbered from 1), got 0"},
		{map[string]any{"start_line": -1}, "", "start_line must be at least 1 (lines are numbered from 1), got -1"},
		{map[string]any{"end_line": 0}, "", "end_line 0 is before start_line 1"},
		{map[string]any{"start_line": 3, "end_line": 2}, "", "end_line 2 is before start_line 3"},
	} {
		tc.args["path"] = "ten.txt"
		got, err := call(t, r, "read_file", tc.args)
		checkErr(t, err, tc.err)
		if got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.args, got, tc.want)
		}
	}
	// A file of one line without a newline has one line.
	r, _ = newTestRegistry(t, Options{}, map[string]string{"one": "only"})
	_, err := call(t, r, "read_file", map[string]any{"path": "one", "start_line": 2})
	checkErr(t, err, "start_line 2 is past the end of one, which has 1 line")
}

// A cut never splits a rune, wherever the cap falls.
func TestReadFileCutOnRuneBoundary(t *testing.T) {
	r, _ := newTestRegistry(t, Options{MaxReadBytes: 11}, map[string]string{
		"u.txt": strings.Repeat("é", 20),
		// Bytes that continue a rune but start none (Windows-1252 quotes).
		"w.txt": strings.Repeat("\x93", 20),
	})
	got, err := call(t, r, "read_file", map[string]any{"path": "u.txt"})
	checkErr(t, err, "")
	if want := "ééééé\n[truncated: line 1 is longer than the 11 bytes cap; showed its start only]"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	got, err = call(t, r, "read_file", map[string]any{"path": "w.txt"})
	checkErr(t, err, "")
	if !strings.HasSuffix(got, "[truncated: line 1 is longer than the 11 bytes cap; showed its start only]") {
		t.Fatalf("got %q", got)
	}
}

// Lines longer than the read buffer (64 KiB) are counted as one line, and
// searched as one up to 1 MiB.
func TestLongLines(t *testing.T) {
	long := strings.Repeat("a", 70000)
	r, _ := newTestRegistry(t, Options{MaxReadBytes: 100}, map[string]string{
		"long.txt":  long + "needle\nneedle\n",
		"huge.txt":  strings.Repeat("a", 1<<20-6) + "needle" + "\n" + strings.Repeat("a", 1<<20-5) + "needle" + "\n",
		"short.txt": "needle\n",
	})
	got, err := call(t, r, "read_file", map[string]any{"path": "long.txt", "start_line": 2})
	checkErr(t, err, "")
	if got != "needle\n" {
		t.Fatalf("line 2: %q", got)
	}
	got, err = call(t, r, "read_file", map[string]any{"path": "long.txt"})
	checkErr(t, err, "")
	if want := long[:100] + "\n[truncated: line 1 is longer than the 100 bytes cap; showed its start only]"; got != want {
		t.Fatalf("line 1: %q", got)
	}
	got, err = call(t, r, "search_text", map[string]any{"pattern": "needle"})
	checkErr(t, err, "")
	// The match ending exactly at 1 MiB is found; the one past it is not.
	want := "huge.txt:1: …" + strings.Repeat("a", 50) + "needle\n" +
		"long.txt:1: …" + strings.Repeat("a", 50) + "needle\n" +
		"long.txt:2: needle\n" +
		"short.txt:1: needle\n"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// list_files' caps: entries, then bytes, each at its edge.
func TestListFilesCapEdges(t *testing.T) {
	files := func(n int) map[string]string {
		m := map[string]string{}
		for i := range n {
			m[fmt.Sprintf("f%02d.txt", i)] = ""
		}
		return m
	}
	for _, tc := range []struct {
		opts  Options
		files int
		want  string
	}{
		{Options{MaxEntries: 3}, 2, "f00.txt\nf01.txt\n"},
		{Options{MaxEntries: 3}, 3, "f00.txt\nf01.txt\nf02.txt\n"},
		{Options{MaxEntries: 3}, 4, "f00.txt\nf01.txt\nf02.txt\n[truncated: showed 3 of 4 entries (3-entry cap); narrow the pattern or path]"},
		// Each line is 8 bytes.
		{Options{MaxOutputBytes: 23}, 4, "f00.txt\nf01.txt\n[truncated: showed 2 of 4 entries (23 bytes cap); narrow the pattern or path]"},
		{Options{MaxOutputBytes: 24}, 4, "f00.txt\nf01.txt\nf02.txt\n[truncated: showed 3 of 4 entries (24 bytes cap); narrow the pattern or path]"},
		{Options{MaxOutputBytes: 24}, 3, "f00.txt\nf01.txt\nf02.txt\n"},
		{Options{MaxOutputBytes: 25}, 4, "f00.txt\nf01.txt\nf02.txt\n[truncated: showed 3 of 4 entries (25 bytes cap); narrow the pattern or path]"},
	} {
		r, _ := newTestRegistry(t, tc.opts, files(tc.files))
		got, err := call(t, r, "list_files", nil)
		checkErr(t, err, "")
		if got != tc.want {
			t.Errorf("%+v, %d files: got %q\nwant %q", tc.opts, tc.files, got, tc.want)
		}
	}
}

// search_text's byte cap at its edge; each line is 15 bytes.
func TestSearchTextCapEdge(t *testing.T) {
	four := map[string]string{"a.txt": "hit 1\nhit 2\nhit 3\nhit 4\n"}
	three := map[string]string{"a.txt": "hit 1\nhit 2\nhit 3\n"}
	for _, tc := range []struct {
		max   int
		files map[string]string
		want  string
	}{
		{44, four, "a.txt:1: hit 1\na.txt:2: hit 2\n[truncated: stopped after 2 matches (44 bytes cap); narrow the pattern, path or glob]"},
		{45, four, "a.txt:1: hit 1\na.txt:2: hit 2\na.txt:3: hit 3\n[truncated: stopped after 3 matches (45 bytes cap); narrow the pattern, path or glob]"},
		{45, three, "a.txt:1: hit 1\na.txt:2: hit 2\na.txt:3: hit 3\n"},
		{46, four, "a.txt:1: hit 1\na.txt:2: hit 2\na.txt:3: hit 3\n[truncated: stopped after 3 matches (46 bytes cap); narrow the pattern, path or glob]"},
	} {
		r, _ := newTestRegistry(t, Options{MaxOutputBytes: tc.max}, tc.files)
		got, err := call(t, r, "search_text", map[string]any{"pattern": "hit"})
		checkErr(t, err, "")
		if got != tc.want {
			t.Errorf("cap %d: got %q\nwant %q", tc.max, got, tc.want)
		}
	}
}

// Caps are stated as the descriptions and notes say them.
func TestSizeString(t *testing.T) {
	for n, want := range map[int]string{
		1: "1 byte", 2: "2 bytes", 100: "100 bytes", 1023: "1023 bytes", 1024: "1 KiB", 1025: "1025 bytes",
		1536: "1536 bytes", 2048: "2 KiB", 64 << 10: "64 KiB", 1<<20 - 1024: "1023 KiB", 1 << 20: "1 MiB",
		1<<20 + 1024: "1025 KiB", 1<<20 + 1: "1048577 bytes", 3 << 20: "3 MiB",
	} {
		if got := sizeString(n); got != want {
			t.Errorf("sizeString(%d) = %q, want %q", n, got, want)
		}
	}
	r, _ := newTestRegistry(t, Options{MaxReadBytes: 1 << 20, MaxOutputBytes: 1}, nil)
	for name, want := range map[string]string{"read_file": "Returns at most 1 MiB;", "run_command": "output over 1 byte is cut"} {
		if d, _ := r.Def(name); !strings.Contains(d.Description, want) {
			t.Errorf("%s: %q does not say %q", name, d.Description, want)
		}
	}
}

func TestCutUTF8(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 3, "abc"}, {"abc", 4, "abc"}, {"abc", 2, "ab"}, {"abc", 0, ""},
		{"日本", 6, "日本"}, {"日本", 5, "日"}, {"日本", 4, "日"}, {"日本", 3, "日"}, {"日本", 2, ""},
		// Bytes that continue a rune and start none: nothing is a whole rune.
		{"\x93\x93\x93", 2, ""},
	} {
		if got := string(cutUTF8([]byte(tc.in), tc.n)); got != tc.want {
			t.Errorf("cutUTF8(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// A name the model sent is echoed back up to 64 bytes.
func TestUnknownToolNameShortened(t *testing.T) {
	r, _ := newTestRegistry(t, Options{}, nil)
	const list = "; available: read_file, list_files, search_text, write_file, edit_file, run_command, note, remember, set_plan"
	for _, tc := range []struct{ name, shown string }{
		{strings.Repeat("x", 63), strings.Repeat("x", 63)},
		{strings.Repeat("x", 64), strings.Repeat("x", 64)},
		{strings.Repeat("x", 65), strings.Repeat("x", 64) + "…"},
		{strings.Repeat("日", 30), strings.Repeat("日", 21) + "…"}, // 3 bytes a rune: 63 of 90 kept
	} {
		_, err := r.Run(context.Background(), tc.name, "{}")
		if want := `unknown tool "` + tc.shown + `"` + list; err == nil || err.Error() != want {
			t.Errorf("got %v\nwant %s", err, want)
		}
	}
}

// timeout_seconds up to the maximum, exactly it included, is taken as
// asked; past it the maximum is used and the result says so.
func TestCommandTimeoutEdges(t *testing.T) {
	r, _ := newTestRegistry(t, Options{MaxCommandTimeout: time.Minute}, nil)
	for _, tc := range []struct {
		seconds   any
		want, err string
	}{
		{59.5, "hi\nexit code: 0", ""},
		{60, "hi\nexit code: 0", ""},
		{60.5, "hi\n[timeout_seconds 60.5 is over the limit; used 1m0s]\nexit code: 0", ""},
		{json0("-0"), "", "timeout_seconds must be a positive number of seconds, got -0"},
		{-0.5, "", "timeout_seconds must be a positive number of seconds, got -0.5"},
	} {
		got, err := call(t, r, "run_command", map[string]any{"command": "echo hi", "timeout_seconds": tc.seconds})
		checkErr(t, err, tc.err)
		if got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.seconds, got, tc.want)
		}
		_, err = r.Preview("run_command", args(t, map[string]any{"command": "echo hi", "timeout_seconds": tc.seconds}))
		checkErr(t, err, tc.err)
	}
}

// json0 is a JSON number written as given.
type json0 string

func (j json0) MarshalJSON() ([]byte, error) { return []byte(j), nil }

// deepDir makes dir/deep/d…/d…/… nested past PATH_MAX (4,096 bytes), by
// directory file descriptors, since no path to the deepest ones can be
// given to the kernel whole.
func deepDir(t *testing.T, dir string) {
	t.Helper()
	if err := os.Mkdir(filepath.Join(dir, "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Open(filepath.Join(dir, "deep"), syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.Repeat("d", 250)
	for range 20 {
		if err := syscall.Mkdirat(fd, name, 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := syscall.Openat(fd, name, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
		syscall.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	syscall.Close(fd)
}

// A walk opens each directory one name at a time from the root, so a tree
// deeper than PATH_MAX is read to the bottom.
func TestWalkPastPathMax(t *testing.T) {
	r, root := newTestRegistry(t, Options{MaxOutputBytes: 1 << 20}, nil)
	deepDir(t, root)
	got, err := call(t, r, "list_files", map[string]any{})
	checkErr(t, err, "")
	if n := strings.Count(got, "\n"); n != 21 || strings.Contains(got, "could not be read") {
		t.Fatalf("list_files: %d lines, ending %q", n, got[max(0, len(got)-80):])
	}
}

// unreadableFS is a tree in which one directory cannot be read, as one
// with mode 000 cannot by anyone but the superuser, who may be running
// the tests.
type unreadableFS struct {
	fs.FS
	dir string
}

// ReadDir fails for the unreadable directory.
func (u unreadableFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if name == u.dir {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return fs.ReadDir(u.FS, name)
}

// A directory the walk cannot read is counted and said, not fatal.
func TestUnreadableDirectoryIsReported(t *testing.T) {
	r, _ := newTestRegistry(t, Options{}, map[string]string{"a.txt": "needle\n", "deep/x/y/": ""})
	r.ws.tree = unreadableFS{r.ws.tree, "deep/x/y"}
	got, err := call(t, r, "list_files", map[string]any{"pattern": "**/*.txt"})
	checkErr(t, err, "")
	if want := "a.txt\n\n[1 directory could not be read]"; got != want {
		t.Fatalf("list_files: got %q, want %q", got, want)
	}
	got, err = call(t, r, "search_text", map[string]any{"pattern": "needle"})
	checkErr(t, err, "")
	if want := "a.txt:1: needle\n\n[1 directory could not be read]"; got != want {
		t.Fatalf("search_text: got %q, want %q", got, want)
	}
	// A walk enters only what the pattern can reach, so the unreadable
	// depths are never met.
	for pattern, want := range map[string]string{
		"*.txt":  "a.txt\n",
		"deep/*": "deep/x/\n",
	} {
		got, err = call(t, r, "list_files", map[string]any{"pattern": pattern})
		checkErr(t, err, "")
		if got != want {
			t.Fatalf("list_files %s: got %q, want %q", pattern, got, want)
		}
	}
	got, err = call(t, r, "list_files", map[string]any{"pattern": "**/*.go"})
	checkErr(t, err, "")
	if want := "no entries match \"**/*.go\" in .\n[1 directory could not be read]"; got != want {
		t.Fatalf("list_files: got %q, want %q", got, want)
	}
}

// read_file's one-line summary says the range asked for, and refuses what
// Run would refuse.
func TestPreviewReadRanges(t *testing.T) {
	r, _ := newTestRegistry(t, Options{}, nil)
	for _, tc := range []struct {
		args      map[string]any
		want, err string
	}{
		{map[string]any{"path": "a.go"}, "read a.go", ""},
		{map[string]any{"path": "a.go", "start_line": 5}, "read a.go from line 5", ""},
		{map[string]any{"path": "a.go", "end_line": 5}, "read a.go lines 1-5", ""},
		{map[string]any{"path": "a.go", "start_line": 2, "end_line": 5}, "read a.go lines 2-5", ""},
		{map[string]any{"path": "a.go", "start_line": 0}, "", "start_line must be at least 1"},
		{map[string]any{"path": "a.go", "end_line": 0}, "", "end_line 0 is before start_line 1"},
	} {
		p, err := r.Preview("read_file", args(t, tc.args))
		checkErr(t, err, tc.err)
		if p.Summary != tc.want {
			t.Errorf("%v: summary %q, want %q", tc.args, p.Summary, tc.want)
		}
	}
}

// A write over a file of up to 8 MiB (8,388,608 bytes) is previewed as a
// diff; over a larger one the preview says why there is none.
func TestPreviewDiffSizeEdge(t *testing.T) {
	r, root := newTestRegistry(t, Options{}, nil)
	for _, tc := range []struct {
		size int
		diff string // "" means a real diff
	}{
		{8 << 20, ""},
		{8<<20 + 1, "file too large to diff: 8388609 bytes"},
	} {
		if err := os.WriteFile(filepath.Join(root, "big"), []byte(strings.Repeat("x", tc.size)), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := r.Preview("write_file", args(t, map[string]any{"path": "big", "content": "y\n"}))
		checkErr(t, err, "")
		if p.Summary != "write 1 line to big (replacing 1 line)" {
			t.Errorf("%d bytes: summary %q", tc.size, p.Summary)
		}
		if tc.diff != "" {
			if p.Diff != tc.diff {
				t.Errorf("%d bytes: diff %.100q", tc.size, p.Diff)
			}
			continue
		}
		head, tail := "--- a/big\n+++ b/big\n@@ -1 +1 @@\n-xxx", "xxx\n\\ No newline at end of file\n+y\n"
		if !strings.HasPrefix(p.Diff, head) || !strings.HasSuffix(p.Diff, tail) || len(p.Diff) != len(head)+len(tail)+tc.size-6 {
			t.Errorf("%d bytes: diff of %d bytes, %.60q…", tc.size, len(p.Diff), p.Diff)
		}
	}
}

// Cancellation reaches a long walk: list_files and search_text look at
// the context every 256 entries, so a walk of fewer entries than that
// finishes, and a longer one stops with the context's error.
func TestWalkCancelled(t *testing.T) {
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("d/f%03d.txt", i)] = "x\n"
	}
	files["small/a.txt"] = "x\n"
	r, _ := newTestRegistry(t, Options{}, files)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct{ tool, args string }{
		{"list_files", `{"path":"d"}`},
		{"search_text", `{"pattern":"y","path":"d"}`},
	} {
		if _, err := r.Run(ctx, tc.tool, tc.args); !errors.Is(err, context.Canceled) {
			t.Errorf("%s over 300 files: %v", tc.tool, err)
		}
	}
	got, err := r.Run(ctx, "list_files", `{"path":"small"}`)
	if err != nil || got != "small/a.txt\n" {
		t.Errorf("a small walk: %q, %v", got, err)
	}
}

// search_text and list_files never read through a symlink that leads out
// of the workspace, whether it is met in the walk or named as the path.
func TestWalksStayInside(t *testing.T) {
	r, root := newTestRegistry(t, Options{}, map[string]string{"in.txt": "needle\n"})
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"secret.txt": "needle\n", "dir/deeper.txt": "needle\n"})
	for name, target := range map[string]string{
		"file-link": filepath.Join(outside, "secret.txt"),
		"dir-link":  filepath.Join(outside, "dir"),
	} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := call(t, r, "search_text", map[string]any{"pattern": "needle"})
	checkErr(t, err, "")
	if got != "in.txt:1: needle\n" {
		t.Fatalf("search_text: %q", got)
	}
	got, err = call(t, r, "list_files", map[string]any{"pattern": "**/*.txt"})
	checkErr(t, err, "")
	if got != "in.txt\n" {
		t.Fatalf("list_files: %q", got)
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"search_text", map[string]any{"pattern": "needle", "path": "dir-link"}},
		{"search_text", map[string]any{"pattern": "needle", "path": "file-link"}},
		{"list_files", map[string]any{"path": "dir-link"}},
	} {
		_, err := call(t, r, tc.tool, tc.args)
		if !errors.Is(err, ErrOutsideWorkspace) {
			t.Errorf("%s %v: %v", tc.tool, tc.args, err)
		}
	}
}

// A file is binary when a NUL byte is in its first 8 KiB (8,192 bytes),
// as git and grep judge it: read_file and search_text skip it, a write
// over it is not diffed. A NUL further in is just a byte of text.
func TestBinarySniffEdge(t *testing.T) {
	at := func(i int) string { return strings.Repeat("a", i) + "\x00" + "\nneedle\n" }
	r, _ := newTestRegistry(t, Options{}, map[string]string{"in.txt": at(8191), "past.txt": at(8192), "first.bin": "\x00abc"})
	got, err := call(t, r, "read_file", map[string]any{"path": "first.bin"})
	checkErr(t, err, "")
	if got != "binary file, 4 bytes; not shown" {
		t.Fatalf("NUL at 0: %q", got)
	}
	got, err = call(t, r, "read_file", map[string]any{"path": "in.txt"})
	checkErr(t, err, "")
	if got != "binary file, 8200 bytes; not shown" {
		t.Fatalf("NUL at 8191: %.80q", got)
	}
	got, err = call(t, r, "read_file", map[string]any{"path": "past.txt", "start_line": 2})
	checkErr(t, err, "")
	if got != "needle\n" {
		t.Fatalf("NUL at 8192: %q", got)
	}
	got, err = call(t, r, "search_text", map[string]any{"pattern": "needle"})
	checkErr(t, err, "")
	if got != "past.txt:2: needle\n" {
		t.Fatalf("search: %q", got)
	}
	for path, diff := range map[string]string{
		"in.txt":   "binary file, 8200 bytes; replaced with text",
		"past.txt": "--- a/past.txt\n+++ b/past.txt\n@@ -1,2 +1 @@\n-" + strings.Repeat("a", 8192) + "\x00\n-needle\n+new\n",
	} {
		p, err := r.Preview("write_file", args(t, map[string]any{"path": path, "content": "new\n"}))
		checkErr(t, err, "")
		if p.Diff != diff {
			t.Errorf("%s: diff %.80q", path, p.Diff)
		}
	}
}

// A long file is read or searched with an eye on the context: every 4,096
// lines, so a short one finishes and a long one stops.
func TestLongFileCancelled(t *testing.T) {
	r, _ := newTestRegistry(t, Options{}, map[string]string{"long.txt": numbered(5000), "short.txt": numbered(10)})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tool := range []string{"read_file", "search_text"} {
		for path, stops := range map[string]bool{"long.txt": true, "short.txt": false} {
			a := fmt.Sprintf(`{"path":%q}`, path)
			if tool == "search_text" {
				a = fmt.Sprintf(`{"path":%q,"pattern":"^line 1$"}`, path)
			}
			_, err := r.Run(ctx, tool, a)
			if stops != errors.Is(err, context.Canceled) {
				t.Errorf("%s %s: %v", tool, path, err)
			}
		}
	}
}

// A workspace may be the file system's root: paths are still shown
// relative to it.
func TestWorkspaceAtRoot(t *testing.T) {
	ws, err := NewWorkspace("/")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ws.Resolve("etc/passwd")
	if err != nil || got != "/etc/passwd" || ws.rel(got) != "etc/passwd" {
		t.Fatalf("Resolve = %q, %v; rel %q", got, err, ws.rel(got))
	}
	// The pattern keeps the walk to /etc.
	out, err := New(ws, Options{}).Run(context.Background(), "list_files", `{"pattern":"etc/passwd"}`)
	if err != nil || out != "etc/passwd\n" {
		t.Fatalf("list_files = %q, %v", out, err)
	}
}
