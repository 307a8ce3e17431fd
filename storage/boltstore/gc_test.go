package boltstore

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"retrace/state"
	"retrace/storage"
	"retrace/storage/storebench"
)

// gcFile is a file of four sessions for gc and compact to work on:
//
//	old      updated 200 days before now; talks at length, then refers to
//	         "old only" and "shared"
//	branchy  updated now; v1-v5 keep "shared", v6-v8 (abandoned: the head
//	         went back to v5) keep "abandoned only", v9-v11 "kept"
//	held     updated 200 days before now, held by another store
//	plain    updated now; a chat
type gcFile struct {
	path                      string
	now                       time.Time
	old, branchy, held, plain string
	other                     *Store // holds "held"
}

func buildGCFile(t *testing.T) gcFile {
	t.Helper()
	ctx := context.Background()
	f := gcFile{path: filepath.Join(t.TempDir(), "retrace.db"), now: t0.Add(200 * 24 * time.Hour)}
	st, err := Open(f.path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	create := func(title string) string {
		info, err := st.Create(ctx, storage.NewSession{Title: title, CreatedAt: t0})
		if err != nil {
			t.Fatal(err)
		}
		return info.ID
	}
	commit := func(cur *storage.Cursor, at time.Time, evs []state.Event) {
		for _, ev := range evs {
			ev.At = at.Add(time.Duration(cur.State().Version) * time.Second)
			if _, err := cur.Commit(ctx, ev); err != nil {
				t.Fatalf("%s: %v", ev.Kind, err)
			}
		}
	}
	change := func(cur *storage.Cursor, at time.Time, path, text string) {
		b, img := content(text)
		evs := FileChangeEvents(cur.State().Phase, "call_"+path, state.FileChange{Path: path, Before: state.FileImage{Absent: true}, After: img})
		evs[len(evs)-1].Blobs = []state.Blob{b}
		commit(cur, at, evs)
	}

	f.old = create("old")
	cur := storage.NewCursor(st, state.New(f.old))
	// A long talk, so that what gc frees outgrows bbolt's step in file
	// size and compact has a file to shrink.
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		commit(cur, t0, []state.Event{
			{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: storebench.Text(rng, 2000)}}},
			{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: storebench.Text(rng, 2000)}}},
		})
	}
	change(cur, t0, "a.txt", "old only")
	change(cur, t0, "s.txt", "shared")

	f.branchy = create("branchy")
	cur = storage.NewCursor(st, state.New(f.branchy))
	change(cur, f.now, "s.txt", "shared")
	change(cur, f.now, "b.txt", "abandoned only")
	if err := st.SetHead(ctx, f.branchy, 5); err != nil {
		t.Fatal(err)
	}
	at5, err := st.At(ctx, f.branchy, 5)
	if err != nil {
		t.Fatal(err)
	}
	cur = storage.NewCursor(st, at5)
	change(cur, f.now, "k.txt", "kept")

	f.held = create("held")
	commit(storage.NewCursor(st, state.New(f.held)), t0, []state.Event{
		{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "hello"}}}})
	f.plain = create("plain")
	commit(storage.NewCursor(st, state.New(f.plain)), f.now, []state.Event{
		{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "hi"}}},
		{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: "hello"}}}})

	st.Close() // the builder's claims go; one store holds "held"
	if f.other, err = Open(f.path, Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.other.Close() })
	if err := f.other.Claim(ctx, f.held); err != nil {
		t.Fatal(err)
	}
	return f
}

func exportJSON(t *testing.T, st *Store, id string) string {
	t.Helper()
	ex, err := st.Export(context.Background(), id)
	if err != nil {
		t.Fatalf("export %s: %v", id, err)
	}
	js, err := json.Marshal(ex)
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}

func (f gcFile) open(t *testing.T) *Store {
	t.Helper()
	st, err := Open(f.path, Options{Now: func() time.Time { return f.now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// What gc removes: the old session whole (the held one is named and
// left), the abandoned branch and nothing on the path to the head, and
// the contents only those referred to. The dry run says exactly that and
// writes nothing; the run does it, and what stays reads as before.
func TestGCRemovesOldSessionsAndAbandonedBranches(t *testing.T) {
	ctx := context.Background()
	f := buildGCFile(t)
	st := f.open(t)
	plainBefore := exportJSON(t, st, f.plain)
	heldBefore := exportJSON(t, st, f.held)
	branchyBefore, err := st.Export(ctx, f.branchy)
	if err != nil {
		t.Fatal(err)
	}
	opts := GCOptions{OlderThan: 90 * 24 * time.Hour, Branches: true, DryRun: true}
	sum := fileSum(t, f.path)
	dry, err := st.GC(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if fileSum(t, f.path) != sum {
		t.Fatal("the dry run changed the file")
	}
	check := func(what string, rep GCReport) {
		t.Helper()
		if len(rep.Sessions) != 1 || rep.Sessions[0].ID != f.old || rep.Sessions[0].Bytes <= 0 {
			t.Errorf("%s: sessions %+v; want %s alone", what, rep.Sessions, f.old)
		}
		if len(rep.Skipped) != 1 || rep.Skipped[0].ID != f.held || rep.Skipped[0].PID != os.Getpid() {
			t.Errorf("%s: skipped %+v; want %s held by pid %d", what, rep.Skipped, f.held, os.Getpid())
		}
		if len(rep.Branches) != 1 || rep.Branches[0].Session.ID != f.branchy || !slices.Equal(rep.Branches[0].Versions, []int{6, 7, 8}) || rep.Branches[0].Fork != 5 {
			t.Errorf("%s: branches %+v; want v6-v8 of %s", what, rep.Branches, f.branchy)
		}
		if rep.Blobs != 2 || rep.BlobBytes <= 0 {
			t.Errorf("%s: %d contents (%d bytes); want 2: old only, abandoned only", what, rep.Blobs, rep.BlobBytes)
		}
		want := rep.Sessions[0].Bytes + rep.Branches[0].Bytes + rep.BlobBytes
		if rep.Bytes != want {
			t.Errorf("%s: %d bytes in all; the parts add to %d", what, rep.Bytes, want)
		}
	}
	check("dry run", dry)

	rep, err := st.GC(ctx, GCOptions{OlderThan: opts.OlderThan, Branches: true})
	if err != nil {
		t.Fatal(err)
	}
	check("run", rep)
	if rep.Bytes != dry.Bytes || rep.FreeBytes <= 0 {
		t.Errorf("the run freed %d bytes (%d free in the file); the dry run said %d", rep.Bytes, rep.FreeBytes, dry.Bytes)
	}
	if err := Verify(ctx, f.path); err != nil {
		t.Fatalf("verify after gc: %v", err)
	}
	if _, err := st.Session(ctx, f.old); !errors.Is(err, storage.ErrSessionNotFound) {
		t.Errorf("the old session: %v", err)
	}
	if got := exportJSON(t, st, f.plain); got != plainBefore {
		t.Error("the plain session changed")
	}
	if got := exportJSON(t, st, f.held); got != heldBefore {
		t.Error("the held session changed")
	}
	after, err := st.Export(ctx, f.branchy)
	if err != nil {
		t.Fatal(err)
	}
	keep := slices.DeleteFunc(slices.Clone(branchyBefore.Checkpoints), func(r storage.Record) bool { return r.Version >= 6 && r.Version <= 8 })
	if a, b := mustJSON(t, after.Checkpoints), mustJSON(t, keep); a != b {
		t.Errorf("branchy's kept versions changed:\n%s\nwant\n%s", a, b)
	}
	if after.Session != branchyBefore.Session {
		t.Errorf("branchy's summary changed: %+v, was %+v", after.Session, branchyBefore.Session)
	}
	var ve *storage.VersionError
	if _, err := st.At(ctx, f.branchy, 7); !errors.As(err, &ve) || !ve.Removed {
		t.Errorf("at a removed version: %v; want a VersionError saying gc removed it", err)
	}
	if err := st.SetHead(ctx, f.branchy, 6); !errors.As(err, &ve) || !ve.Removed {
		t.Errorf("set head to a removed version: %v", err)
	}
	for text, want := range map[string]error{"shared": nil, "kept": nil, "old only": storage.ErrBlobNotFound, "abandoned only": storage.ErrBlobNotFound} {
		if _, err := st.Blob(ctx, storage.Digest([]byte(text))); !errors.Is(err, want) {
			t.Errorf("content %q: %v; want %v", text, err, want)
		}
	}
	// Numbers are never given again: the next version is v12.
	cp, err := st.Append(ctx, f.branchy, 11, state.Event{Kind: state.AssistantMessage, At: f.now.Add(time.Hour),
		Messages: []state.Message{{Role: state.RoleAssistant, Content: "on"}}})
	if err != nil || cp.Version != 12 {
		t.Fatalf("append after gc: %+v, %v", cp, err)
	}
	if err := Verify(ctx, f.path); err != nil {
		t.Fatalf("verify after an append: %v", err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	js, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}

// --keep keeps a version on an abandoned branch, and its ancestors.
func TestGCKeepsNamedVersions(t *testing.T) {
	ctx := context.Background()
	f := buildGCFile(t)
	st := f.open(t)
	rep, err := st.GC(ctx, GCOptions{Branches: true, Keep: map[string][]int{f.branchy: {7}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Branches) != 1 || !slices.Equal(rep.Branches[0].Versions, []int{8}) {
		t.Fatalf("branches %+v; want v8 alone", rep.Branches)
	}
	if _, err := st.At(ctx, f.branchy, 7); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GC(ctx, GCOptions{Branches: true, Keep: map[string][]int{f.branchy: {8}}}); !errors.Is(err, storage.ErrVersionNotFound) {
		t.Fatalf("keeping a removed version: %v", err)
	}
}

// Compact returns the pages gc freed to the disk, and what stays reads
// byte for byte as before.
func TestCompactShrinksTheFileAndKeepsEverything(t *testing.T) {
	ctx := context.Background()
	f := buildGCFile(t)
	f.other.Close() // compact refuses while anyone holds a session
	st := f.open(t)
	if _, err := st.GC(ctx, GCOptions{OlderThan: 90 * 24 * time.Hour, Branches: true}); err != nil {
		t.Fatal(err)
	}
	before := map[string]string{}
	list, err := st.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		before[s.ID] = exportJSON(t, st, s.ID)
	}
	rep, err := st.Compact(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(f.path)
	if err != nil {
		t.Fatal(err)
	}
	if rep.After >= rep.Before || fi.Size() != rep.After {
		t.Fatalf("compact: %d -> %d bytes (file now %d)", rep.Before, rep.After, fi.Size())
	}
	t.Logf("compact: %d -> %d bytes", rep.Before, rep.After)
	if err := Verify(ctx, f.path); err != nil {
		t.Fatal(err)
	}
	for id, js := range before {
		if got := exportJSON(t, st, id); got != js {
			t.Errorf("session %s reads differently after compact", id)
		}
	}
	if strays, _ := filepath.Glob(f.path + ".compact-*"); len(strays) > 0 {
		t.Errorf("left %v", strays)
	}
}

// Another store holding a session makes compact refuse, naming it, and
// leave the file as it was.
func TestCompactRefusesWhileASessionIsHeld(t *testing.T) {
	ctx := context.Background()
	f := buildGCFile(t)
	st := f.open(t)
	sum := fileSum(t, f.path)
	_, err := st.Compact(ctx)
	var be *storage.BusyError
	if !errors.As(err, &be) || be.Session != f.held || be.PID != os.Getpid() {
		t.Fatalf("compact with %s held: %v", f.held, err)
	}
	if fileSum(t, f.path) != sum {
		t.Fatal("a refused compact changed the file")
	}
	// Its own claims are given back: another store can take the session
	// (Holder cannot tell: a store's own claim does not count as held),
	// and once the holder lets go, compact goes through.
	claimable := func(when string) {
		t.Helper()
		other, err := Open(f.path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		if err := other.Claim(ctx, f.plain); err != nil {
			t.Fatalf("%s, %s is still claimed: %v", when, f.plain, err)
		}
		if err := other.Release(f.plain); err != nil {
			t.Fatal(err)
		}
	}
	claimable("after a refused compact")
	f.other.Close()
	if _, err := st.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	claimable("after a compact")
}

// A compaction stopped before any of its steps, as a crash there would
// stop it, leaves the old file whole and no copy beside it.
func TestCompactStoppedBeforeAStepLeavesTheOldFile(t *testing.T) {
	ctx := context.Background()
	for _, step := range []string{"copy", "sync", "check", "rename"} {
		t.Run(step, func(t *testing.T) {
			f := buildGCFile(t)
			f.other.Close()
			st := f.open(t)
			sum := fileSum(t, f.path)
			stop := errors.New("stopped")
			undo := StopCompactAt(step, stop)
			_, err := st.Compact(ctx)
			undo()
			if !errors.Is(err, stop) {
				t.Fatalf("compact stopped before %s: %v", step, err)
			}
			if fileSum(t, f.path) != sum {
				t.Fatal("the old file changed")
			}
			if strays, _ := filepath.Glob(f.path + ".compact-*"); len(strays) > 0 {
				t.Fatalf("left %v", strays)
			}
			if err := Verify(ctx, f.path); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A session gc left with gaps exports and imports whole: the gaps come
// back as removed versions (so the whole-file check holds), numbers are
// not reused, and a second export is byte-identical.
func TestImportKeepsTheGapsGCLeft(t *testing.T) {
	ctx := context.Background()
	f := buildGCFile(t)
	st := f.open(t)
	if _, err := st.GC(ctx, GCOptions{Branches: true}); err != nil {
		t.Fatal(err)
	}
	ex, err := st.Export(ctx, f.branchy)
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Checkpoints) >= ex.Session.Versions {
		t.Fatalf("gc left no gap: %d checkpoints of %d versions", len(ex.Checkpoints), ex.Session.Versions)
	}
	freshPath := filepath.Join(t.TempDir(), "fresh.db")
	fresh, err := Open(freshPath, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if _, err := fresh.Import(ctx, ex); err != nil {
		t.Fatalf("import of a session with gc's gaps: %v", err)
	}
	if a, b := exportJSON(t, st, f.branchy), exportJSON(t, fresh, f.branchy); a != b {
		t.Fatalf("export after import differs:\n%s\n%s", a, b)
	}
	if _, err := fresh.At(ctx, f.branchy, 7); !errors.Is(err, storage.ErrVersionNotFound) {
		t.Fatalf("a version gc removed, after import: %v", err)
	}
	if err := Verify(ctx, freshPath); err != nil {
		t.Fatalf("the whole-file check after importing gaps: %v", err)
	}
}
