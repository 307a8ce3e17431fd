package snapshot_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"retrace/agent/snapshot"
	"retrace/internal/powercut"
	"retrace/state"
)

// A restored file is on disk when Put returns: a power cut at any moment
// leaves each path a Put acknowledged with that content (or, while a
// later Put of it runs, with the later one, never half of either), also
// in directories the restore made. The writer puts files into a fresh
// workspace, into new directories two deep and over files it put before;
// package powercut replays what strace saw against a disk that loses
// power. Dropping Put's sync of the file or of its directory, or of a
// directory it made, makes this test fail.
func TestPowerCutKeepsEveryRestoredFile(t *testing.T) {
	if powercut.Writing() {
		putWriter(t, os.Getenv("RETRACE_TEST_WORKSPACE"))
		return
	}
	seed := powercut.Seed(t)
	ws := filepath.Join(t.TempDir(), "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	rec := powercut.Run(t, []string{"-test.run=^TestPowerCutKeepsEveryRestoredFile$"},
		"RETRACE_TEST_WORKSPACE="+ws, "XDG_CACHE_HOME="+t.TempDir())
	acked := 0
	syncs, cuts := rec.Replay(t, ws, seed, func(c *powercut.Cut, lines []string) {
		acked = checkPuts(t, c, ws, seed, lines)
	})
	if acked != len(putPlan) {
		t.Fatalf("the writer acknowledged %d puts of %d:\n%s", acked, len(putPlan), rec.Stdout)
	}
	t.Logf("seed %d: %d syncs, %d power cuts checked, %d puts acknowledged, none lost", seed, syncs, cuts, acked)
}

// putPlan is what the writer restores, in order: new files at the top,
// in new directories, and again over files it put already.
var putPlan = []struct{ path, content string }{
	{"a.txt", "first a\n"},
	{"src/b.go", "package b\n"},
	{"src/deep/er/c.md", "# c\n"},
	{"a.txt", "second a, longer than the first\n"},
	{"src/deep/er/c.md", "# c again\n"},
	{"new/dir/d.txt", strings.Repeat("d", 10000)},
}

// checkPuts checks every path against what the writer acknowledged of
// it, and returns how many puts it acknowledged.
func checkPuts(t *testing.T, c *powercut.Cut, ws string, seed uint64, lines []string) int {
	t.Helper()
	acked := map[string]string{}   // path -> the content last acknowledged
	pending := map[string]string{} // path -> the content of a put begun, not acknowledged
	n := 0
	for _, l := range lines {
		var what string
		var i int
		if _, err := fmt.Sscanf(l, "%s %d", &what, &i); err != nil {
			continue
		}
		p := putPlan[i]
		switch what {
		case "put":
			pending[p.path] = p.content
		case "done":
			acked[p.path] = p.content
			delete(pending, p.path)
			n++
		}
	}
	for path, want := range acked {
		got, ok := c.File(filepath.Join(ws, path))
		switch {
		case !ok:
			t.Fatalf("seed %d: a power cut before call %d loses %s, which Put acknowledged", seed, c.At, path)
		case string(got) != want && string(got) != pending[path]:
			t.Fatalf("seed %d: a power cut before call %d leaves %s holding %q; Put acknowledged %q", seed, c.At, path, got, want)
		}
	}
	return n
}

// putWriter is the traced process: it puts putPlan's files one by one,
// saying before each ("put I") and once it returned ("done I").
func putWriter(t *testing.T, ws string) {
	w, err := snapshot.New(ws, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for i, p := range putPlan {
		img := state.FileImage{Blob: snapshot.Digest([]byte(p.content)), Size: int64(len(p.content)), Mode: 0o644}
		fmt.Printf("put %d\n", i)
		if err := w.Put(p.path, img, []byte(p.content)); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("done %d\n", i)
	}
}
