package rewind

import (
	"strings"
	"testing"

	"retrace/state"
)

// Each kind of change reads as people expect, with its line counts, and
// the unified diff is a patch of the two contents.
func TestDiffSaysWhatChanged(t *testing.T) {
	st := newMemStore()
	put := func(s string) state.FileImage {
		img := image([]byte(s), 0o644)
		st.blobs[img.Blob] = []byte(s)
		return img
	}
	absent := state.FileImage{Absent: true}
	huge := state.FileImage{Size: 11 << 20, Untracked: "larger than the 10 MiB cap"}
	for _, c := range []struct {
		before, after state.FileImage
		stat, patch   string
	}{
		{absent, put("a\nb\n"), "created f.txt (+2)", "--- /dev/null\n+++ b/f.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{put("a\nb\nc\n"), put("a\nB\nc\nd\n"), "changed f.txt (+2 −1)", "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n"},
		{put("x\n"), absent, "deleted f.txt (−1)", "--- a/f.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"},
		{absent, put(""), "created f.txt (+0)", ""},
		{put("x\n"), state.FileImage{Blob: put("x\n").Blob, Size: 2, Mode: 0o755}, "changed f.txt (mode only)", ""},
		{put("text\n"), put("\x00\x01binary"), "changed f.txt (binary)", ""},
		{put("text\n"), put("\xff\xfe not utf-8"), "changed f.txt (binary)", ""},
		{put("text\n"), huge, "not tracked f.txt (larger than the 10 MiB cap)", ""},
		{huge, absent, "not tracked f.txt (larger than the 10 MiB cap)", ""},
	} {
		d, err := Diff(ctx, st, state.FileChange{Path: "f.txt", Before: c.before, After: c.after})
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Stat(); got != c.stat {
			t.Errorf("stat %q, want %q", got, c.stat)
		}
		if d.Unified != c.patch {
			t.Errorf("%s: patch\n%s\nwant\n%s", c.stat, d.Unified, c.patch)
		}
	}
	if _, err := Diff(ctx, st, state.FileChange{Path: "f.txt", Before: absent, After: image([]byte("never kept"), 0o644)}); err == nil ||
		!strings.Contains(err.Error(), "f.txt after") {
		t.Fatalf("a blob the store lacks: %v", err)
	}
}

// The manifest lists what the session did from the start, leaving out
// paths that came back to where they were.
func TestManifestLeavesOutRoundTrips(t *testing.T) {
	s := newSession()
	s.write(map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	s.write(map[string]string{"b.txt": ""})
	got := Manifest(s.st.states[s.st.head])
	if len(got) != 1 || got[0].Path != "a.txt" || !got[0].Before.Absent || got[0].After.Absent {
		t.Fatalf("manifest %+v, want a.txt created alone", got)
	}
}
