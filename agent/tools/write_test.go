package tools

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile(t *testing.T) {
	r, root := newTestRegistry(t, Options{}, map[string]string{"old.txt": "old\n", "sub/in.txt": "in\n", "dir/": ""})
	outside := t.TempDir()
	for name, target := range map[string]string{"in-link": "sub/in.txt", "out-link": outside} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, path, content, want, file, err string
	}{
		{"new file", "new.txt", "hello\n", "wrote 6 bytes to new.txt", "new.txt", ""},
		{"new directories", "a/b/c.txt", "x", "wrote 1 bytes to a/b/c.txt", "a/b/c.txt", ""},
		{"overwrite", "old.txt", "new\n", "wrote 4 bytes to old.txt", "old.txt", ""},
		{"empty content", "empty.txt", "", "wrote 0 bytes to empty.txt", "empty.txt", ""},
		{"through a symlink inside writes its target", "in-link", "linked\n", "wrote 7 bytes to in-link", "sub/in.txt", ""},
		{"directory", "dir", "x", "", "", "dir is a directory"},
		{"outside", "../escape.txt", "x", "", "", `path "../escape.txt" is outside the workspace`},
		{"symlinked directory outside", "out-link/x.txt", "x", "", "", "is outside the workspace"},
		{"under a file", "old.txt/x", "x", "", "", "not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := call(t, r, "write_file", map[string]any{"path": tc.path, "content": tc.content})
			checkErr(t, err, tc.err)
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			if tc.file != "" {
				if body := readFileT(t, filepath.Join(root, tc.file)); body != tc.content {
					t.Fatalf("%s holds %q, want %q", tc.file, body, tc.content)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(outside, "x.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("a write reached outside the workspace")
	}
	if fi, err := os.Lstat(filepath.Join(root, "in-link")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatal("writing through a symlink replaced the symlink")
	}
	checkNoTempFiles(t, root)
}

func TestWriteFileModes(t *testing.T) {
	r, root := newTestRegistry(t, Options{}, map[string]string{"run.sh": "#!/bin/sh\n"})
	if err := os.Chmod(filepath.Join(root, "run.sh"), 0o750); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		mode fs.FileMode
	}{{"run.sh", 0o750}, {"fresh.txt", 0o644}, {"d/fresh.txt", 0o644}} {
		if _, err := call(t, r, "write_file", map[string]any{"path": tc.path, "content": "x"}); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(filepath.Join(root, tc.path))
		if err != nil || fi.Mode().Perm() != tc.mode {
			t.Errorf("%s: mode %v (%v), want %v", tc.path, fi.Mode().Perm(), err, tc.mode)
		}
	}
	if fi, _ := os.Stat(filepath.Join(root, "d")); !fi.IsDir() || fi.Mode().Perm()&0o700 != 0o700 {
		t.Errorf("created directory mode %v", fi.Mode())
	}
}

func TestEditFile(t *testing.T) {
	const src = "package x\n\nfunc A() int {\n\treturn 1\n}\n\nfunc B() int {\n\treturn 1\n}\n"
	for _, tc := range []struct {
		name, file, old, new, want, after, err string
	}{
		{"replace once", src, "func A() int {\n\treturn 1", "func A() int {\n\treturn 2\n\t// two", "edited x.go: replaced 2 lines with 3",
			"package x\n\nfunc A() int {\n\treturn 2\n\t// two\n}\n\nfunc B() int {\n\treturn 1\n}\n", ""},
		{"delete", src, "\nfunc B() int {\n\treturn 1\n}\n", "", "edited x.go: replaced 4 lines with 0",
			"package x\n\nfunc A() int {\n\treturn 1\n}\n", ""},
		{"crlf file", "a\r\nb\r\nc\r\n", "a\nb", "A\nB", "edited x.go: replaced 2 lines with 2", "A\r\nB\r\nc\r\n", ""},
		{"not found", src, "func C()", "x", "", src, "old_text was not found in x.go; read the file again"},
		{"whitespace matters", src, "return  1", "x", "", src, "was not found"},
		{"ambiguous", src, "\treturn 1\n", "\treturn 3\n", "", src, "old_text appears 2 times in x.go; include more surrounding lines"},
		{"empty old", src, "", "x", "", src, "old_text must not be empty"},
		{"same text", src, "package x", "package x", "", src, "old_text and new_text are the same"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, root := newTestRegistry(t, Options{}, map[string]string{"x.go": tc.file})
			got, err := call(t, r, "edit_file", map[string]any{"path": "x.go", "old_text": tc.old, "new_text": tc.new})
			checkErr(t, err, tc.err)
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			if body := readFileT(t, filepath.Join(root, "x.go")); body != tc.after {
				t.Fatalf("file now %q\nwant %q", body, tc.after)
			}
			checkNoTempFiles(t, root)
		})
	}
}

func TestEditFileErrors(t *testing.T) {
	r, root := newTestRegistry(t, Options{}, map[string]string{"dir/": ""})
	if err := os.Symlink("/etc/hostname", filepath.Join(root, "host")); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"missing.go": "missing.go does not exist; use write_file to create it",
		"dir":        "dir is a directory",
		"host":       "is outside the workspace",
		"../x":       "is outside the workspace",
	} {
		_, err := call(t, r, "edit_file", map[string]any{"path": path, "old_text": "a", "new_text": "b"})
		checkErr(t, err, want)
	}
}

func TestEditFileKeepsMode(t *testing.T) {
	r, root := newTestRegistry(t, Options{}, map[string]string{"run.sh": "echo a\n"})
	p := filepath.Join(root, "run.sh")
	if err := os.Chmod(p, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := call(t, r, "edit_file", map[string]any{"path": "run.sh", "old_text": "a", "new_text": "b"}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o700 {
		t.Fatalf("mode %v", fi.Mode().Perm())
	}
}

// checkNoTempFiles fails if an atomic write left its temporary file.
func checkNoTempFiles(t *testing.T, root string) {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(root, "*", ".retrace-tmp-*"))
	top, _ := filepath.Glob(filepath.Join(root, ".retrace-tmp-*"))
	if len(matches)+len(top) > 0 {
		t.Fatalf("temporary files left: %v %v", top, matches)
	}
}

func TestWriteAtomicFailureLeavesNothing(t *testing.T) {
	_, dir := newTestRegistry(t, Options{}, map[string]string{"busy/inner": "keep"})
	ws, err := NewWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "busy")
	// Renaming a file over a non-empty directory fails after the temporary
	// file was written: it must be removed and the directory untouched.
	if err := ws.writeAtomic(target, "busy", []byte("x"), 0o644); err == nil {
		t.Fatal("no error")
	}
	checkNoTempFiles(t, dir)
	if body := readFileT(t, filepath.Join(target, "inner")); body != "keep" {
		t.Fatalf("inner now %q", body)
	}
}
