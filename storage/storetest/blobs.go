package storetest

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"retrace/state"
	"retrace/storage"
)

// WithContents gives a scripted event's file changes contents a store can
// check. statetest scripts name digests of text they do not keep; each is
// replaced by the digest of content made from it (Content), and the event
// carries that content in ev.Blobs. The same digest always becomes the
// same content, so a script's files share contents across versions and
// sessions, as a real workspace's do.
func WithContents(ev state.Event) state.Event {
	if len(ev.Files) == 0 {
		return ev
	}
	files := slices.Clone(ev.Files)
	var blobs []state.Blob
	for i := range files {
		for _, img := range []*state.FileImage{&files[i].Before, &files[i].After} {
			if img.Blob == "" {
				continue
			}
			data := Content(img.Blob)
			img.Blob, img.Size = storage.Digest(data), int64(len(data))
			blobs = append(blobs, state.Blob{Digest: img.Blob, Data: data})
		}
	}
	ev.Files, ev.Blobs = files, blobs
	return ev
}

// Content is file content made from seed: a few lines to a few KiB of Go,
// the same for the same seed.
func Content(seed string) []byte {
	sum := sha256.Sum256([]byte(seed))
	var b bytes.Buffer
	fmt.Fprintf(&b, "package scripted\n\n// made from %s\n", seed)
	for i := range int(sum[0]) % 96 {
		fmt.Fprintf(&b, "func f%d() int { return %d }\n", i, sum[1+i%31])
	}
	return b.Bytes()
}

// blob is a content with its digest, for the tests below.
func blob(text string) state.Blob {
	return state.Blob{Digest: storage.Digest([]byte(text)), Data: []byte(text)}
}

func kept(b state.Blob) state.FileImage {
	return state.FileImage{Blob: b.Digest, Size: int64(len(b.Data)), Mode: 0o644}
}

var absent = state.FileImage{Absent: true}

func change(path string, before, after state.FileImage) state.FileChange {
	return state.FileChange{Path: path, Before: before, After: after}
}

// toolRun brings a session from s to a started tool call in executing
// (a user message and a plan first, when s is not executing), so the next
// event can be the tool_finished that carries file changes.
func toolRun(t *testing.T, st storage.Store, s state.State) state.State {
	t.Helper()
	at := created.Add(time.Duration(s.Version+1) * time.Minute)
	var evs []state.Event
	if s.Phase != state.Executing {
		evs = append(evs,
			state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "change the files"}}},
			state.Event{Kind: state.PlanSet, Plan: []state.Step{{Text: "edit"}}})
	}
	call := fmt.Sprintf("call_v%d", s.Version)
	evs = append(evs,
		state.Event{Kind: state.AssistantMessage, Messages: []state.Message{{Role: state.RoleAssistant,
			ToolCalls: []state.ToolRequest{{ID: call, Name: "write_file", Arguments: `{}`}}}}},
		state.Event{Kind: state.ToolStarted, Tool: &state.ToolCall{ID: call}})
	for i, ev := range evs {
		ev.At = at.Add(time.Duration(i) * time.Second)
		next, err := storage.Commit(ctx, st, s, ev)
		if err != nil {
			t.Fatalf("%s at v%d: %v", ev.Kind, s.Version, err)
		}
		s = next
	}
	return s
}

// finished is the tool_finished of the call toolRun started, with files
// and the contents it carries.
func finished(s state.State, files []state.FileChange, blobs ...state.Blob) state.Event {
	open := s.OpenCalls()
	return state.Event{Kind: state.ToolFinished, At: created.Add(time.Duration(s.Version+1) * time.Minute),
		Tool: &state.ToolCall{ID: open[0].ID, Result: "written"}, Files: files, Blobs: blobs}
}

// commitFiles runs a tool call from s that changes files.
func commitFiles(t *testing.T, st storage.Store, s state.State, files []state.FileChange, blobs ...state.Blob) state.State {
	t.Helper()
	s = toolRun(t, st, s)
	next, err := storage.Commit(ctx, st, s, finished(s, files, blobs...))
	if err != nil {
		t.Fatalf("tool_finished at v%d: %v", s.Version, err)
	}
	return next
}

func readBlob(t *testing.T, st storage.Store, b state.Blob) {
	t.Helper()
	got, err := st.Blob(ctx, b.Digest)
	if err != nil {
		t.Fatalf("blob %s: %v", b.Digest, err)
	}
	if !bytes.Equal(got, b.Data) {
		t.Fatalf("blob %s reads back as %d other bytes", b.Digest, len(got))
	}
}

func noBlob(t *testing.T, st storage.Store, digest, why string) {
	t.Helper()
	if got, err := st.Blob(ctx, digest); !errors.Is(err, storage.ErrBlobNotFound) || got != nil {
		t.Fatalf("%s: Blob(%s) = %d bytes, %v; want ErrBlobNotFound", why, digest, len(got), err)
	}
}

// versions is how many versions a session holds.
func versions(t *testing.T, st storage.Store, id string) int {
	t.Helper()
	info, err := st.Session(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return info.Versions
}

func testBlobRoundTrip(t *testing.T, b Backend) {
	st := open(t, b)
	info := create(t, st, "files")
	rng := rand.New(rand.NewPCG(31, 31))
	noise := make([]byte, 64<<10)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	large := strings.Repeat("a line of a large text file that spans many pages\n", 8000)
	contents := []state.Blob{
		blob("package main\n\nfunc main() {}\n"),
		blob(""),                                     // an empty file is content too
		{Digest: storage.Digest(noise), Data: noise}, // does not compress
		blob(large),
	}
	files := []state.FileChange{
		change("main.go", absent, kept(contents[0])),
		change("empty", absent, kept(contents[1])),
		change("bin/noise", absent, kept(contents[2])),
		change("docs/large.txt", absent, kept(contents[3])),
	}
	s := commitFiles(t, st, state.New(info.ID), files, contents...)
	for _, c := range contents {
		readBlob(t, st, c)
	}
	readBlobs(t, st, contents)
	for _, f := range files {
		if got := s.Files[f.Path]; !got.Now.Same(f.After) || !got.Was.Same(absent) {
			t.Fatalf("manifest of %s: %+v", f.Path, got)
		}
	}
	sameState(t, "head with files", head(t, st, info.ID), s)
}

func testBlobsShared(t *testing.T, b Backend) {
	st := open(t, b)
	one, two := create(t, st, "one"), create(t, st, "two")
	shared, first, second := blob("shared content\n"), blob("v1\n"), blob("v2\n")

	// One session refers to shared twice, carrying it both times; the
	// other carries it too. Each Append keeps it only if it is new.
	s1 := commitFiles(t, st, state.New(one.ID), []state.FileChange{change("a.go", absent, kept(shared))}, shared)
	commitFiles(t, st, s1, []state.FileChange{change("b.go", kept(first), kept(shared))}, first, shared)
	s2 := commitFiles(t, st, state.New(two.ID), []state.FileChange{change("a.go", kept(shared), kept(second))}, shared, second)
	// Content the store holds needs not travel again.
	s2 = commitFiles(t, st, s2, []state.FileChange{change("a.go", kept(second), kept(shared))})
	readBlob(t, st, shared)

	if err := st.Delete(ctx, one.ID); err != nil {
		t.Fatal(err)
	}
	for _, c := range []state.Blob{shared, first, second} {
		readBlob(t, st, c) // another session may share it: kept until a gc
	}
	sameState(t, "the session sharing the content", head(t, st, two.ID), s2)
	if err := st.Delete(ctx, two.ID); err != nil {
		t.Fatal(err)
	}
	readBlob(t, st, shared)
}

func testBlobMismatchRefused(t *testing.T, b Backend) {
	st := open(t, b)
	info := create(t, st, "mismatch")
	s := toolRun(t, st, state.New(info.ID))
	n := versions(t, st, info.ID)
	good, other := blob("what the file holds\n"), blob("something else\n")
	for _, c := range []struct {
		name string
		bad  state.Blob
	}{
		{"data that hashes to another digest", state.Blob{Digest: good.Digest, Data: other.Data}},
		{"a digest that is no sha256", state.Blob{Digest: "sha256:" + strings.Repeat("G", 64), Data: good.Data}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev := finished(s, []state.FileChange{change("a.go", absent, state.FileImage{Blob: c.bad.Digest, Size: 1})}, c.bad)
			if c.bad.Digest == good.Digest {
				// The checkpoint also carries a good content: it must not
				// be kept either.
				ev.Files = append(ev.Files, change("b.go", absent, kept(other)))
				ev.Blobs = append(ev.Blobs, other)
			}
			_, err := st.Append(ctx, info.ID, s.Version, ev)
			if !errors.Is(err, storage.ErrInvalid) || !strings.Contains(err.Error(), c.bad.Digest) {
				t.Fatalf("append: %v; want ErrInvalid naming %s", err, c.bad.Digest)
			}
			if got := versions(t, st, info.ID); got != n {
				t.Fatalf("the refused checkpoint was kept: %d versions, want %d", got, n)
			}
			noBlob(t, st, good.Digest, "the mismatched content")
			noBlob(t, st, other.Digest, "a content the refused checkpoint carried")
		})
	}
}

func testBlobMissingRefused(t *testing.T, b Backend) {
	st := open(t, b)
	info := create(t, st, "missing")
	s := toolRun(t, st, state.New(info.ID))
	n := versions(t, st, info.ID)
	carried, missing := blob("carried\n"), blob("nobody kept this\n")
	ev := finished(s, []state.FileChange{
		change("a.go", absent, kept(carried)),
		change("b.go", kept(missing), absent),
	}, carried)
	_, err := st.Append(ctx, info.ID, s.Version, ev)
	if !errors.Is(err, storage.ErrBlobNotFound) || !strings.Contains(err.Error(), missing.Digest) {
		t.Fatalf("append referring to content nobody kept: %v; want ErrBlobNotFound naming %s", err, missing.Digest)
	}
	if got := versions(t, st, info.ID); got != n {
		t.Fatalf("the refused checkpoint was kept: %d versions, want %d", got, n)
	}
	noBlob(t, st, carried.Digest, "the content a refused checkpoint carried")

	// A conflict refuses the checkpoint after its contents were checked:
	// they go with it.
	ev = finished(s, []state.FileChange{change("a.go", absent, kept(carried))}, carried)
	if _, err := st.Append(ctx, info.ID, s.Version-1, ev); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("append under a stale parent: %v", err)
	}
	noBlob(t, st, carried.Digest, "the content a conflicting checkpoint carried")

	// Once the content is kept, the same checkpoint goes in.
	ev.Files = append(ev.Files, change("b.go", kept(missing), absent))
	ev.Blobs = append(ev.Blobs, missing)
	if _, err := storage.Commit(ctx, st, s, ev); err != nil {
		t.Fatal(err)
	}
	readBlob(t, st, missing)
}

func testUnknownBlob(t *testing.T, b Backend) {
	st := open(t, b)
	unknown := blob("never stored\n")
	noBlob(t, st, unknown.Digest, "a store with nothing in it")
	info := create(t, st, "one content")
	commitFiles(t, st, state.New(info.ID), []state.FileChange{change("a.go", absent, kept(blob("stored\n")))}, blob("stored\n"))
	noBlob(t, st, unknown.Digest, "a digest never stored")
	for _, d := range []string{"", "sha256:", "md5:d41d8cd98f00b204e9800998ecf8427e", strings.ToUpper(unknown.Digest)} {
		if got, err := st.Blob(ctx, d); !errors.Is(err, storage.ErrInvalid) || got != nil {
			t.Errorf("Blob(%q) = %d bytes, %v; want ErrInvalid", d, len(got), err)
		}
	}
}

func testExportCarriesReferencedBlobs(t *testing.T, b Backend) {
	st := open(t, b)
	one, two := create(t, st, "exported"), create(t, st, "other")
	a, a2, c, elsewhere := blob("a v1\n"), blob("a v2\n"), blob("c\n"), blob("only in the other session\n")
	s := commitFiles(t, st, state.New(one.ID), []state.FileChange{change("a.go", absent, kept(a))}, a)
	commitFiles(t, st, s, []state.FileChange{change("a.go", kept(a), kept(a2)), change("c.go", kept(c), absent)}, a2, c)
	commitFiles(t, st, state.New(two.ID), []state.FileChange{change("x.go", absent, kept(elsewhere))}, elsewhere)

	ex, err := st.Export(ctx, one.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{a.Digest: a.Data, a2.Digest: a2.Data, c.Digest: c.Data}
	if !reflect.DeepEqual(ex.Blobs, want) {
		t.Fatalf("export carries %v; want exactly %v", slices.Sorted(maps.Keys(ex.Blobs)), slices.Sorted(maps.Keys(want)))
	}
	for _, r := range ex.Checkpoints {
		if r.Data.Blobs != nil {
			t.Fatalf("v%d's event carries its contents; they belong to the export's blobs", r.Version)
		}
	}
	// JSON carries the bytes (as base64) and brings them back whole.
	js, err := json.Marshal(ex)
	if err != nil {
		t.Fatal(err)
	}
	var back storage.Export
	if err := json.Unmarshal(js, &back); err != nil || !reflect.DeepEqual(back.Blobs, want) {
		t.Fatalf("export's blobs after JSON: %v", err)
	}
	// A session without files exports no blobs at all.
	plain := create(t, st, "no files")
	commitScript(t, st, state.New(plain.ID), 33, 3)
	if ex, err := st.Export(ctx, plain.ID); err != nil || ex.Blobs != nil {
		t.Fatalf("a session without files exports blobs %v, %v", ex.Blobs, err)
	}
}

func testFilesAfterReopen(t *testing.T, b Backend) {
	loc := b.NewLocation(t)
	st := b.Open(t, loc)
	info := create(t, st, "manifest")
	a1, a2, a3, bb := blob("a one\n"), blob("a two\n"), blob("a three\n"), blob("b\n")
	seen := map[int]state.State{}
	s := commitFiles(t, st, state.New(info.ID), []state.FileChange{change("a.go", absent, kept(a1))}, a1)
	seen[s.Version] = s
	fork := s
	s = commitFiles(t, st, s, []state.FileChange{change("a.go", kept(a1), kept(a2)), change("b.go", absent, kept(bb))}, a2, bb)
	seen[s.Version] = s
	s = commitFiles(t, st, s, []state.FileChange{change("b.go", kept(bb), absent)})
	seen[s.Version] = s
	// Roll back and change a.go another way: the branch's manifest must
	// not see b.go at all.
	if err := st.SetHead(ctx, info.ID, fork.Version); err != nil {
		t.Fatal(err)
	}
	forked := commitFiles(t, st, fork, []state.FileChange{change("a.go", kept(a1), kept(a3))}, a3)
	seen[forked.Version] = forked
	// Scripted changes as well, on another session.
	other := create(t, st, "scripted")
	_, scripted := commitScript(t, st, state.New(other.ID), 34, 120)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	again := b.Open(t, loc)
	for v, want := range seen {
		got, err := again.At(ctx, info.ID, v)
		if err != nil {
			t.Fatal(err)
		}
		sameState(t, fmt.Sprintf("v%d after reopen", v), got, want)
	}
	for v, want := range map[int]map[string]state.FileEntry{
		s.Version:      {"a.go": {Now: kept(a2), Was: absent}, "b.go": {Now: absent, Was: absent}},
		forked.Version: {"a.go": {Now: kept(a3), Was: absent}},
	} {
		got, err := again.At(ctx, info.ID, v)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Files, want) {
			t.Fatalf("manifest at v%d after reopen:\ngot  %+v\nwant %+v", v, got.Files, want)
		}
	}
	files := 0
	for v, want := range scripted {
		got, err := again.At(ctx, other.ID, v)
		if err != nil {
			t.Fatal(err)
		}
		sameState(t, fmt.Sprintf("scripted v%d after reopen", v), got, want)
		for _, e := range got.Files {
			for _, img := range []state.FileImage{e.Now, e.Was} {
				if img.Blob == "" {
					continue
				}
				data, err := again.Blob(ctx, img.Blob)
				if err != nil || storage.Digest(data) != img.Blob || int64(len(data)) != img.Size {
					t.Fatalf("scripted v%d: content %s: %d bytes, %v", v, img.Blob, len(data), err)
				}
				files++
			}
		}
	}
	if files == 0 {
		t.Fatal("the script changed no file: pick another seed")
	}
}

// readBlobs reads contents in one go, where the store can, and checks
// each; a digest it does not hold stops the read with ErrBlobNotFound.
func readBlobs(t *testing.T, st storage.Store, contents []state.Blob) {
	t.Helper()
	br, ok := st.(storage.BlobsReader)
	if !ok {
		return
	}
	var digests []string
	for _, c := range contents {
		digests = append(digests, c.Digest)
	}
	i := 0
	err := br.Blobs(ctx, digests, func(d string, data []byte) error {
		if d != contents[i].Digest || !bytes.Equal(data, contents[i].Data) {
			t.Errorf("Blobs gave %s (%d bytes) at %d, want %s (%d bytes)", d, len(data), i, contents[i].Digest, len(contents[i].Data))
		}
		i++
		return nil
	})
	if err != nil || i != len(contents) {
		t.Fatalf("Blobs: %v after %d of %d", err, i, len(contents))
	}
	missing := storage.Digest([]byte("never kept"))
	if err := br.Blobs(ctx, append(digests[:1:1], missing), func(string, []byte) error { return nil }); !errors.Is(err, storage.ErrBlobNotFound) {
		t.Errorf("Blobs of a content never kept: %v, want ErrBlobNotFound", err)
	}
}
