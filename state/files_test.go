package state_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"retrace/state"
)

func img(b byte) state.FileImage {
	return state.FileImage{Blob: "sha256:" + strings.Repeat(string([]byte{b}), 64), Size: 1, Mode: 0o644}
}

var absent = state.FileImage{Absent: true}

// finished finishes call id with the given file changes.
func finished(id string, changes ...state.FileChange) state.Event {
	ev := assistantFinish(id)
	ev.Files = changes
	return ev
}

// The manifest: a path's first change keeps what it held before the
// session touched it; every change sets what it holds now. The state it
// came from is left as it was, whether built by Apply or a Builder.
func TestManifestFollowsToolCalls(t *testing.T) {
	s := apply(t, executing(t), assistantCalls("a", "b"))
	one := apply(t, s, finished("a", state.FileChange{Path: "x.go", Before: absent, After: img('1')}))
	two := apply(t, one, finished("b",
		state.FileChange{Path: "x.go", Before: img('1'), After: img('2')},
		state.FileChange{Path: "y.go", Before: img('a'), After: absent}))
	want := map[string]state.FileEntry{
		"x.go": {Was: absent, Now: img('2')},
		"y.go": {Was: img('a'), Now: absent},
	}
	if !reflect.DeepEqual(two.Files, want) {
		t.Fatalf("manifest %+v, want %+v", two.Files, want)
	}
	if len(one.Files) != 1 || one.Files["x.go"] != (state.FileEntry{Was: absent, Now: img('1')}) || len(s.Files) != 0 {
		t.Fatalf("the states it came from changed: %+v, %+v", one.Files, s.Files)
	}
	b := state.NewBuilder(s)
	for _, ev := range []state.Event{finished("a", state.FileChange{Path: "x.go", Before: absent, After: img('1')})} {
		if err := b.Apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	mid := b.State()
	if err := b.Apply(finished("b", state.FileChange{Path: "x.go", Before: img('1'), After: img('2')},
		state.FileChange{Path: "y.go", Before: img('a'), After: absent})); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(b.State().Files, want) || !reflect.DeepEqual(mid.Files, one.Files) {
		t.Fatalf("builder: %+v then %+v", mid.Files, b.State().Files)
	}
}

// A restore's events bracket it: restore_started opens it with its plan,
// only files_restored may follow, and neither changes the manifest (it is
// the restored version's already).
func TestRestoreEventsBracketTheRestore(t *testing.T) {
	s := apply(t, executing(t), assistantCalls("a"), finished("a", state.FileChange{Path: "x.go", Before: absent, After: img('1')}))
	plan := []state.FileChange{{Path: "x.go", Before: img('9'), After: img('1')}}
	open := apply(t, s, state.Event{Kind: state.RestoreStarted, At: t0, From: 7, Files: plan})
	if open.Restoring == nil || open.Restoring.From != 7 || !reflect.DeepEqual(open.Restoring.Files, plan) ||
		!reflect.DeepEqual(open.Files, s.Files) || open.Phase != s.Phase {
		t.Fatalf("restore_started: restoring %+v, files %+v, phase %s", open.Restoring, open.Files, open.Phase)
	}
	if _, err := state.Apply(open, state.Event{Kind: state.NoteSet, At: t0, NoteKey: "k", NoteValue: "v"}); err == nil ||
		!strings.Contains(err.Error(), "only files_restored may follow") {
		t.Fatalf("a note during a restore: %v", err)
	}
	closed := apply(t, open, state.Event{Kind: state.FilesRestored, At: t0, Text: "restored 1 file"})
	if closed.Restoring != nil || !reflect.DeepEqual(closed.Files, s.Files) {
		t.Fatalf("files_restored: restoring %+v, files %+v", closed.Restoring, closed.Files)
	}
}

func TestValidPathAndDigest(t *testing.T) {
	for p, want := range map[string]bool{
		"a.go": true, "dir/a.go": true, `back\slash`: true, "..foo": true, "a/..b": true,
		"": false, ".": false, "..": false, "../a": false, "/etc/passwd": false, "a//b": false, "a/./b": false,
		"a/": false, "a\x00b": false, "a/../b": false,
	} {
		if got := state.ValidPath(p); got != want {
			t.Errorf("ValidPath(%q) = %v, want %v", p, got, want)
		}
	}
	good := "sha256:" + strings.Repeat("0123456789abcdef", 4)
	for d, want := range map[string]bool{
		good: true, "sha256:" + strings.Repeat("A", 64): false, "sha256:" + strings.Repeat("a", 63): false,
		"sha256:" + strings.Repeat("a", 65): false, "sha1:" + strings.Repeat("a", 64): false, strings.Repeat("a", 64): false,
		"sha256:" + strings.Repeat("g", 64): false,
	} {
		if got := state.ValidDigest(d); got != want {
			t.Errorf("ValidDigest(%q) = %v, want %v", d, got, want)
		}
	}
}

func TestImageStrings(t *testing.T) {
	for _, c := range []struct {
		img  state.FileImage
		want string
	}{
		{absent, "absent"},
		{state.FileImage{Size: 12, Blob: "sha256:0a1b2c3d" + strings.Repeat("0", 56), Mode: 0o644}, "12 bytes sha256:0a1b2c3d mode 0644"},
		{state.FileImage{Untracked: "a symlink"}, "not tracked: a symlink"},
		{state.FileImage{Size: 3, Blob: "sha256:0a1b2c3d", Mode: 0o755}, "3 bytes sha256:0a1b2c3d mode 0755"},
		{state.FileImage{Size: 3, Blob: "sha256:0a"}, "3 bytes sha256:0a mode 0000"},
	} {
		if got := c.img.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.img, got, c.want)
		}
	}
	if !img('1').Same(img('1')) || img('1').Same(img('2')) || absent.Same(img('1')) {
		t.Fatal("Same compares contents")
	}
	chmod := img('1')
	chmod.Mode = 0o755
	if chmod.Same(img('1')) {
		t.Fatal("Same compares permissions")
	}
}

// Tracked: a restore can bring back an absent path or a kept content,
// nothing else.
func TestTracked(t *testing.T) {
	if !absent.Tracked() || !img('1').Tracked() || (state.FileImage{Untracked: "a symlink"}).Tracked() {
		t.Fatal("Tracked is true exactly when the image has no reason it was not kept")
	}
}

// BlobDigests names each content an event's changes refer to once, in
// order of first mention, and nothing for absent or untracked images.
func TestBlobDigests(t *testing.T) {
	ev := state.Event{Kind: state.ToolFinished, Files: []state.FileChange{
		{Path: "a", Before: absent, After: img('1')},
		{Path: "b", Before: img('2'), After: img('1')},
		{Path: "c", Before: state.FileImage{Untracked: "ignored by .gitignore"}, After: img('2')},
	}}
	got := ev.BlobDigests()
	if want := []string{img('1').Blob, img('2').Blob}; !reflect.DeepEqual(got, want) {
		t.Fatalf("digests %v, want %v", got, want)
	}
	if (state.Event{Kind: state.ToolFinished}).BlobDigests() != nil {
		t.Fatal("an event without files refers to no content")
	}
}

// BenchmarkApplyManyFiles applies the tool_finished of a command that
// made 100,000 files to a session that touched one file before: what
// every load of such a session replays.
//
//	go test ./state -run '^$' -bench ApplyManyFiles
func BenchmarkApplyManyFiles(b *testing.B) {
	s := apply(b, state.New("s1"), userMsg("make the files"),
		state.Event{Kind: state.PlanSet, At: t0, Plan: []state.Step{{Text: "make them"}}}, assistantCalls("a", "b"))
	s = apply(b, s, finished("a", state.FileChange{Path: "x.go", Before: absent, After: img('1')}))
	changes := make([]state.FileChange, 100_000)
	for i := range changes {
		changes[i] = state.FileChange{Path: fmt.Sprintf("gen/d%d/f%d.txt", i/1000, i), Before: absent, After: img('2')}
	}
	ev := finished("b", changes...)
	for b.Loop() {
		if _, err := state.Apply(s, ev); err != nil {
			b.Fatal(err)
		}
	}
}
