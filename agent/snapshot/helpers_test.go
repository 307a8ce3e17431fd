package snapshot

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"retrace/state"
)

// fixture is a workspace in a temporary directory with a Watcher on it,
// its own content cache, and a log of the files the Watcher read.
type fixture struct {
	t    *testing.T
	dir  string
	opts Options
	w    *Watcher

	mu    sync.Mutex // the hook is called from a scan's goroutines
	reads []string
}

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	if opts.CacheDir == "" {
		opts.CacheDir = t.TempDir()
	}
	f := &fixture{t: t, dir: t.TempDir(), opts: opts}
	f.w = f.open()
	return f
}

// open starts a Watcher on the fixture's workspace and cache, as a new
// process would, and makes it the fixture's.
func (f *fixture) open() *Watcher {
	f.t.Helper()
	w, err := New(f.dir, f.opts)
	if err != nil {
		f.t.Fatalf("New: %v", err)
	}
	f.t.Cleanup(func() { _ = w.Close() })
	w.onRead = func(p string) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.reads = append(f.reads, p)
	}
	f.w = w
	return w
}

// trustStamps moves the watcher's clock an hour ahead, so that no stamp
// is recent and every file read is vouched for at once. Tests of the stat
// cache use it so the racy-entry rule does not re-read what they count;
// TestRecentStampIsReadAgain tests that rule with the real clock.
func (f *fixture) trustStamps() {
	f.w.now = func() time.Time { return time.Now().Add(time.Hour) }
}

// takeReads returns the files read since the last call, sorted.
func (f *fixture) takeReads() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.reads
	f.reads = nil
	slices.Sort(r)
	return r
}

func (f *fixture) path(rel string) string { return filepath.Join(f.dir, filepath.FromSlash(rel)) }

func (f *fixture) write(rel, content string) {
	f.t.Helper()
	p := f.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// age sets the mtime of every file and directory in the workspace an hour
// back, so that any change a test makes afterwards moves it even within one
// clock tick.
func (f *fixture) age() {
	f.t.Helper()
	old := time.Now().Add(-time.Hour)
	err := filepath.Walk(f.dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.Mode()&os.ModeSymlink != 0 {
			return err
		}
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) mark() Mark {
	f.t.Helper()
	m, err := f.w.Mark(context.Background())
	if err != nil {
		f.t.Fatalf("Mark: %v", err)
	}
	return m
}

// changes calls Changes and checks its result the way the store would:
// every change valid for a checkpoint, sorted, every digest's blob there
// and true to it. It returns the blobs by digest.
func (f *fixture) changes(m Mark) ([]state.FileChange, map[string][]byte) {
	f.t.Helper()
	changes, blobs, err := f.w.Changes(context.Background(), m)
	if err != nil {
		f.t.Fatalf("Changes: %v", err)
	}
	return changes, checkResult(f.t, changes, blobs)
}

func checkResult(t *testing.T, changes []state.FileChange, blobs []state.Blob) map[string][]byte {
	t.Helper()
	if len(changes) > 0 {
		// restore_started carries file changes in any phase and checks
		// them as tool_finished does: paths and images.
		ev := state.Event{Kind: state.RestoreStarted, Files: changes}
		if _, err := state.Apply(state.New("t"), ev); err != nil {
			t.Fatalf("the changes would not make a valid checkpoint: %v", err)
		}
	}
	if !slices.IsSortedFunc(changes, func(a, b state.FileChange) int { return strings.Compare(a.Path, b.Path) }) {
		t.Errorf("changes not sorted by path: %v", paths(changes))
	}
	byDigest := map[string][]byte{}
	for _, b := range blobs {
		if _, dup := byDigest[b.Digest]; dup {
			t.Errorf("blob %s sent twice", b.Digest)
		}
		if got := Digest(b.Data); got != b.Digest {
			t.Errorf("blob %s holds content %s", b.Digest, got)
		}
		byDigest[b.Digest] = b.Data
	}
	for _, digest := range (state.Event{Files: changes}).BlobDigests() {
		if _, ok := byDigest[digest]; !ok {
			t.Errorf("no blob for %s", digest)
		}
	}
	return byDigest
}

func paths(changes []state.FileChange) []string {
	var out []string
	for _, c := range changes {
		out = append(out, c.Path)
	}
	return out
}

// content says what an image holds, for comparisons in tests: "absent",
// the file's bytes, or "untracked: reason".
func content(img state.FileImage, blobs map[string][]byte) string {
	switch {
	case img.Absent:
		return "absent"
	case img.Untracked != "":
		return "untracked: " + img.Untracked
	}
	data, ok := blobs[img.Blob]
	if !ok {
		return "missing blob " + img.Blob
	}
	return string(data)
}

// summary lists the changes as "path: before -> after" lines.
func summary(changes []state.FileChange, blobs map[string][]byte) []string {
	var out []string
	for _, c := range changes {
		out = append(out, c.Path+": "+content(c.Before, blobs)+" -> "+content(c.After, blobs))
	}
	return out
}

func wantSummary(t *testing.T, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("changes:\n got %q\nwant %q", got, want)
	}
}

// withoutStamp is img with its stamp cleared, for comparing images whose
// stamps a test cannot know.
func withoutStamp(img state.FileImage) state.FileImage {
	img.Stamp = ""
	return img
}
