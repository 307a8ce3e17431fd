package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// numbered is lines "line 1\n" to "line n\n".
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestReadFile(t *testing.T) {
	long := strings.Repeat("x", 300)
	r, root := newTestRegistry(t, Options{MaxReadBytes: 100}, map[string]string{
		"ten.txt":      numbered(10),
		"many.txt":     numbered(50),
		"no-eol.txt":   "one\ntwo",
		"empty.txt":    "",
		"bin.dat":      "abc\x00def",
		"bad-utf8.txt": "ok \xff\xfe end\n",
		"long.txt":     long + "\nshort\n",
		"crlf.txt":     "a\r\nb\r\n",
		"dir/x.txt":    "x",
	})
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(root, "passwd")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
		err  string
	}{
		{"whole file", map[string]any{"path": "ten.txt"}, numbered(10), ""},
		{"range", map[string]any{"path": "ten.txt", "start_line": 3, "end_line": 4}, "line 3\nline 4\n", ""},
		{"from a line", map[string]any{"path": "ten.txt", "start_line": 9}, "line 9\nline 10\n", ""},
		{"to a line", map[string]any{"path": "ten.txt", "end_line": 2}, "line 1\nline 2\n", ""},
		{"end past the end", map[string]any{"path": "ten.txt", "start_line": 10, "end_line": 99}, "line 10\n", ""},
		{"one line", map[string]any{"path": "ten.txt", "start_line": 5, "end_line": 5}, "line 5\n", ""},
		{"no final newline", map[string]any{"path": "no-eol.txt", "start_line": 2}, "two", ""},
		{"crlf kept", map[string]any{"path": "crlf.txt"}, "a\r\nb\r\n", ""},
		{"empty", map[string]any{"path": "empty.txt"}, "[empty file]", ""},
		{"binary", map[string]any{"path": "bin.dat"}, "binary file, 7 bytes; not shown", ""},
		{"invalid utf-8", map[string]any{"path": "bad-utf8.txt"}, "ok \uFFFD end\n", ""},
		{"cap", map[string]any{"path": "many.txt"},
			numbered(13) + "[truncated: showed lines 1-13 of 50 (100 bytes cap); ask for a line range]", ""},
		{"cap in a range", map[string]any{"path": "many.txt", "start_line": 20},
			"line 20\nline 21\nline 22\nline 23\nline 24\nline 25\nline 26\nline 27\nline 28\nline 29\nline 30\nline 31\n" +
				"[truncated: showed lines 20-31 of 50 (100 bytes cap); ask for a line range]", ""},
		{"first line over the cap", map[string]any{"path": "long.txt"},
			long[:100] + "\n[truncated: line 1 is longer than the 100 bytes cap; showed its start only]", ""},
		{"long line after shown ones", map[string]any{"path": "long.txt", "start_line": 2}, "short\n", ""},
		{"start past the end", map[string]any{"path": "ten.txt", "start_line": 11}, "", "start_line 11 is past the end of ten.txt, which has 10 lines"},
		{"start zero", map[string]any{"path": "ten.txt", "start_line": 0}, "", "start_line must be at least 1"},
		{"end before start", map[string]any{"path": "ten.txt", "start_line": 5, "end_line": 4}, "", "end_line 4 is before start_line 5"},
		{"directory", map[string]any{"path": "dir"}, "", "dir is a directory; use list_files to see what it contains"},
		{"missing", map[string]any{"path": "nope.txt"}, "", "nope.txt does not exist"},
		{"fifo", map[string]any{"path": "fifo"}, "", "fifo is not a regular file"},
		{"outside", map[string]any{"path": "../x"}, "", `path "../x" is outside the workspace`},
		{"symlink outside", map[string]any{"path": "passwd"}, "", "is outside the workspace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := call(t, r, "read_file", tc.args)
			checkErr(t, err, tc.err)
			if got != tc.want {
				t.Fatalf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// The default cap is 64 KiB, 65,536 bytes: of "line 1\n" to "line 20000\n",
// lines 1-6664 take 65,533 bytes and line 6665 would pass it.
func TestReadFileDefaultCap(t *testing.T) {
	r, _ := newTestRegistry(t, Options{}, map[string]string{"big.txt": numbered(20000)})
	got, err := call(t, r, "read_file", map[string]any{"path": "big.txt"})
	checkErr(t, err, "")
	if want := numbered(6664) + "[truncated: showed lines 1-6664 of 20000 (64 KiB cap); ask for a line range]"; got != want {
		t.Fatalf("%d bytes ending %q", len(got), got[max(0, len(got)-120):])
	}
}

func TestReadFileCutsLongLineOnRuneBoundary(t *testing.T) {
	r, _ := newTestRegistry(t, Options{MaxReadBytes: 10}, map[string]string{"u.txt": strings.Repeat("é", 20)})
	got, err := call(t, r, "read_file", map[string]any{"path": "u.txt"})
	checkErr(t, err, "")
	if first, _, _ := strings.Cut(got, "\n"); first != strings.Repeat("é", 5) {
		t.Fatalf("first line %q", first)
	}
}
