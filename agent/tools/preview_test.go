package tools

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPreview(t *testing.T) {
	r, root := newTestRegistry(t, Options{}, map[string]string{
		"internal/x.go": "package x\n\nfunc A() {\n\ta()\n}\n",
		"bin.dat":       "\x00\x01",
	})
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		want       Preview
		err        string
	}{
		{"run", "run_command", map[string]any{"command": "go test ./..."},
			Preview{Tool: "run_command", Summary: "run: go test ./...", Command: "go test ./..."}, ""},
		{"run many lines", "run_command", map[string]any{"command": "cd x\nmake\nmake test"},
			Preview{Tool: "run_command", Summary: "run: cd x … (+2 lines)", Command: "cd x\nmake\nmake test"}, ""},
		{"new file", "write_file", map[string]any{"path": "cmd/main.go", "content": "package main\n\nfunc main() {}\n"},
			Preview{Tool: "write_file", Summary: "write 3 lines to cmd/main.go (new file)", Path: "cmd/main.go",
				Diff: "--- /dev/null\n+++ b/cmd/main.go\n@@ -0,0 +1,3 @@\n+package main\n+\n+func main() {}\n"}, ""},
		{"overwrite", "write_file", map[string]any{"path": "internal/x.go", "content": "package x\n"},
			Preview{Tool: "write_file", Summary: "write 1 line to internal/x.go (replacing 5 lines)", Path: "internal/x.go",
				Diff: "--- a/internal/x.go\n+++ b/internal/x.go\n@@ -1,5 +1 @@\n package x\n-\n-func A() {\n-\ta()\n-}\n"}, ""},
		{"overwrite with the same", "write_file", map[string]any{"path": "internal/x.go", "content": "package x\n\nfunc A() {\n\ta()\n}\n"},
			Preview{Tool: "write_file", Summary: "write 5 lines to internal/x.go (replacing 5 lines); no change", Path: "internal/x.go"}, ""},
		{"overwrite binary", "write_file", map[string]any{"path": "bin.dat", "content": "text\n"},
			Preview{Tool: "write_file", Summary: "write 1 line to bin.dat (replacing 1 line)", Path: "bin.dat",
				Diff: "binary file, 2 bytes; replaced with text"}, ""},
		{"edit", "edit_file", map[string]any{"path": "internal/x.go", "old_text": "\ta()\n", "new_text": "\ta()\n\tb()\n"},
			Preview{Tool: "edit_file", Summary: "edit internal/x.go: replace 1 line with 2", Path: "internal/x.go",
				Diff: "--- a/internal/x.go\n+++ b/internal/x.go\n@@ -2,4 +2,5 @@\n \n func A() {\n \ta()\n+\tb()\n }\n"}, ""},
		{"read", "read_file", map[string]any{"path": "internal/x.go", "start_line": 2, "end_line": 3},
			Preview{Tool: "read_file", Summary: "read internal/x.go lines 2-3"}, ""},
		{"list", "list_files", map[string]any{"pattern": "*.go"}, Preview{Tool: "list_files", Summary: "list *.go in ."}, ""},
		{"search", "search_text", map[string]any{"pattern": "a\\(", "glob": "*.go"},
			Preview{Tool: "search_text", Summary: "search /a\\(/ (*.go)"}, ""},
		{"note", "note", map[string]any{"key": "tests", "value": "go test ./..."}, Preview{Tool: "note", Summary: "note tests: go test ./..."}, ""},
		{"forget note", "note", map[string]any{"key": "tests", "value": " "}, Preview{Tool: "note", Summary: "forget note tests"}, ""},
		{"plan", "set_plan", map[string]any{"goal": "fix it", "steps": []string{"a", "b"}}, Preview{Tool: "set_plan", Summary: "plan: 2 steps to fix it"}, ""},
		{"edit not found", "edit_file", map[string]any{"path": "internal/x.go", "old_text": "zzz", "new_text": "y"}, Preview{}, "old_text was not found"},
		{"write outside", "write_file", map[string]any{"path": "../x", "content": "y"}, Preview{}, "is outside the workspace"},
		{"bad args", "write_file", map[string]any{"path": "x"}, Preview{}, `missing required field "content"`},
		{"empty plan", "set_plan", map[string]any{"steps": []string{" "}}, Preview{}, "at least one non-empty step"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Preview(tc.tool, args(t, tc.args))
			checkErr(t, err, tc.err)
			if got != tc.want {
				t.Fatalf("got  %#v\nwant %#v", got, tc.want)
			}
		})
	}
	// A preview changes nothing.
	if _, err := os.Stat(filepath.Join(root, "cmd")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("preview created cmd/")
	}
	if body := readFileT(t, filepath.Join(root, "internal/x.go")); !strings.HasSuffix(body, "\ta()\n}\n") {
		t.Fatalf("preview changed the file: %q", body)
	}
}

// TestPreviewMatchesRun checks that applying the previewed diff's change
// is what Run does: the file after Run equals the "after" side of the diff.
func TestPreviewMatchesRun(t *testing.T) {
	r, root := newTestRegistry(t, Options{}, map[string]string{"f.txt": numbered(30)})
	a := args(t, map[string]any{"path": "f.txt", "old_text": "line 10\nline 11\n", "new_text": "ten\n"})
	p, err := r.Preview("edit_file", a)
	checkErr(t, err, "")
	if _, err := r.Run(t.Context(), "edit_file", a); err != nil {
		t.Fatal(err)
	}
	var after []string
	for _, l := range strings.Split(p.Diff, "\n") {
		if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") {
			after = append(after, l[1:])
		}
	}
	if len(after) != 1 || after[0] != "ten" || !strings.Contains(readFileT(t, filepath.Join(root, "f.txt")), "line 9\nten\nline 12\n") {
		t.Fatalf("diff %q, file %q", p.Diff, readFileT(t, filepath.Join(root, "f.txt")))
	}
}
