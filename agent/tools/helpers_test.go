package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// newTestRegistry makes a registry over a fresh workspace holding files
// (path -> content; a path ending in / makes a directory).
func newTestRegistry(t testing.TB, opts Options, files map[string]string) (*Registry, string) {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, files)
	ws, err := NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	return New(ws, opts), ws.Root()
}

// writeTree creates files under root.
func writeTree(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// args marshals a tool's arguments the way the model would send them.
func args(t *testing.T, v map[string]any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// call runs a tool with arguments given as a map.
func call(t *testing.T, r *Registry, name string, a map[string]any) (string, error) {
	t.Helper()
	return r.Run(context.Background(), name, args(t, a))
}

// readFileT reads a file the test expects to exist.
func readFileT(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkErr fails unless err is nil when want is "", or holds want.
func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case want != "" && err == nil:
		t.Fatalf("no error; want one containing %q", want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Fatalf("error %q does not contain %q", err, want)
	}
}
