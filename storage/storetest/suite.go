// Package storetest is the conformance suite for storage.Store: one set of
// tests every backend must pass, so the agent and the TUI can rely on the
// interface and not on a backend.
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, storetest.Backend{NewLocation: ..., Open: ...})
//	}
package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
	"time"

	"retrace/state"
	"retrace/state/statetest"
	"retrace/storage"
)

// Backend tells the suite how to make stores.
type Backend struct {
	// NewLocation returns a fresh, empty place for a store (a file path,
	// a database name).
	NewLocation func(t *testing.T) string
	// Open opens the store at loc, creating it if needed. Opening a loc
	// again, after or while another store has it open, must reach the same
	// data. The backend closes its stores at the end of the test.
	Open func(t *testing.T, loc string) storage.Store
}

// Run runs the whole suite.
func Run(t *testing.T, b Backend) {
	tests := []struct {
		name string
		fn   func(t *testing.T, b Backend)
	}{
		{"CreateAndList", testCreateAndList},
		{"AppendHeadAndEveryVersion", testAppendHeadAndEveryVersion},
		{"VersionZeroIsTheEmptySession", testVersionZero},
		{"VersionOutOfRange", testVersionOutOfRange},
		{"StaleParentIsAConflict", testStaleParent},
		{"IllegalTransitionIsNotKept", testIllegalTransition},
		{"RollbackStartsABranch", testRollbackStartsABranch},
		{"RollbackToTheRoot", testRollbackToRoot},
		{"ForkMovesTheHeadAndKeepsInOneStep", testFork},
		{"Delete", testDelete},
		{"ResolvePrefix", testResolvePrefix},
		{"NewestFirst", testNewestFirst},
		{"PersistsAcrossReopen", testPersistsAcrossReopen},
		{"ConcurrentAppendsToDifferentSessions", testConcurrentAppends},
		{"OneWriterPerSession", testOneWriterPerSession},
		{"Export", testExport},
		{"UnknownSession", testUnknownSession},
		{"BlobRoundTrip", testBlobRoundTrip},
		{"BlobsSharedAndKeptAfterDelete", testBlobsShared},
		{"BlobMismatchRefused", testBlobMismatchRefused},
		{"BlobMissingRefused", testBlobMissingRefused},
		{"UnknownBlob", testUnknownBlob},
		{"ExportCarriesReferencedBlobs", testExportCarriesReferencedBlobs},
		{"WriteExportIsTheEncodersBytes", testWriteExportIsTheEncodersBytes},
		{"WriteExportHoldsAPieceOfAContent", testWriteExportHoldsAPieceOfAContent},
		{"CopyBlobRefuses", testCopyBlobRefuses},
		{"FilesAfterReopen", testFilesAfterReopen},
		{"LargeContents", testLargeContents},
		{"RecentIsTheWholeWindowed", testRecentIsTheWholeWindowed},
		{"ArrivalIsClosedAndKept", testArrival},
		{"ArrivalWorkspaceRefused", testArrivalWorkspaceRefused},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, b) })
	}
	RunImport(t, b)
	RunMemory(t, b)
	RunGC(t, b)
}

var ctx = context.Background()

var created = time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)

func open(t *testing.T, b Backend) storage.Store {
	t.Helper()
	return b.Open(t, b.NewLocation(t))
}

func create(t *testing.T, st storage.Store, title string) storage.SessionInfo {
	t.Helper()
	info, err := st.Create(ctx, storage.NewSession{Title: title, Model: "gpt-test", Workspace: "/src/app", CreatedAt: created})
	if err != nil {
		t.Fatalf("create %q: %v", title, err)
	}
	return info
}

// commitScript commits n scripted events to a session starting from s and
// returns the last state and every state it passed through, by version.
func commitScript(t *testing.T, st storage.Store, s state.State, seed uint64, n int) (state.State, map[int]state.State) {
	t.Helper()
	last, seen, _ := commitScriptEvents(t, st, s, seed, n)
	return last, seen
}

// commitScriptEvents is commitScript that also returns the kind of event
// that made each version.
func commitScriptEvents(t *testing.T, st storage.Store, s state.State, seed uint64, n int) (state.State, map[int]state.State, map[int]state.EventKind) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 11))
	seen := map[int]state.State{s.Version: s}
	kinds := map[int]state.EventKind{}
	for range n {
		ev := nextEvent(rng, s)
		next, err := storage.Commit(ctx, st, s, ev)
		if err != nil {
			t.Fatalf("commit at v%d (%s): %v", s.Version, s.Phase, err)
		}
		s = next
		seen[s.Version], kinds[s.Version] = s, ev.Kind
	}
	return s, seen, kinds
}

// nextEvent is a scripted event with contents for its files (see
// WithContents).
func nextEvent(rng *rand.Rand, s state.State) state.Event {
	return WithContents(statetest.NextEvent(rng, s))
}

func head(t *testing.T, st storage.Store, id string) state.State {
	t.Helper()
	s, err := st.Head(ctx, id)
	if err != nil {
		t.Fatalf("head of %s: %v", id, err)
	}
	return s
}

func sameState(t *testing.T, what string, got, want state.State) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s differs:\ngot  %+v\nwant %+v", what, got, want)
	}
}

func testCreateAndList(t *testing.T, b Backend) {
	st := open(t, b)
	if list, err := st.Sessions(ctx); err != nil || len(list) != 0 {
		t.Fatalf("a new store lists %v, %v", list, err)
	}
	info := create(t, st, "first title")
	if info.ID == "" || info.Head != 0 || info.Versions != 0 || info.Phase != state.Idle || !info.CreatedAt.Equal(created) {
		t.Fatalf("new session: %+v", info)
	}
	if err := st.Rename(ctx, info.ID, "fix the build"); err != nil {
		t.Fatal(err)
	}
	got, err := st.Session(ctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "fix the build" || got.Model != "gpt-test" || got.Workspace != "/src/app" {
		t.Fatalf("session read back: %+v", got)
	}
	list, err := st.Sessions(ctx)
	if err != nil || len(list) != 1 || list[0].ID != info.ID {
		t.Fatalf("sessions: %+v, %v", list, err)
	}
}

func testAppendHeadAndEveryVersion(t *testing.T, b Backend) {
	st := open(t, b)
	info := create(t, st, "script")
	last, seen := commitScript(t, st, state.New(info.ID), 1, 80)
	sameState(t, "head", head(t, st, info.ID), last)
	for v, want := range seen {
		got, err := st.At(ctx, info.ID, v)
		if err != nil {
			t.Fatalf("at v%d: %v", v, err)
		}
		sameState(t, fmt.Sprintf("state at v%d", v), got, want)
	}
	got, err := st.Session(ctx, info.ID)
	if err != nil || got.Versions != 80 || got.Head != 80 || got.Phase != last.Phase || !got.UpdatedAt.After(got.CreatedAt) {
		t.Fatalf("session after 80 appends: %+v, %v", got, err)
	}
}

func testVersionZero(t *testing.T, b Backend) {
	st := open(t, b)
	info := create(t, st, "empty")
	commitScript(t, st, state.New(info.ID), 2, 5)
	got, err := st.At(ctx, info.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	sameState(t, "v0", got, state.New(info.ID))
}

func testVersionOutOfRange(t *testing.T, b Backend) {
	st := open(t, b)
	info := create(t, st, "range")
	commitScript(t, st, state.New(info.ID), 3, 4)
	for _, v := range []int{-1, 5, 1 << 30} {
		_, err := st.At(ctx, info.ID, v)
		var ve *storage.VersionError
		if !errors.As(err, &ve) || !errors.Is(err, storage.ErrVersionNotFound) || ve.Versions != 4 || ve.Version != v {
			t.Errorf("At(%d): %v", v, err)
		}
		if err := st.SetHead(ctx, info.ID, v); !errors.Is(err, storage.ErrVersionNotFound) {
			t.Errorf("SetHead(%d): %v", v, err)
		}
	}
	if got := head(t, st, info.ID); got.Version != 4 {
		t.Fatalf("a refused rollback moved the head to v%d", got.Version)
	}
}

func testStaleParent(t *testing.T, b Backend) {
	st := open(t, b)
	info := create(t, st, "stale")
	s, _ := commitScript(t, st, state.New(info.ID), 4, 6)
	older, err := st.At(ctx, info.ID, 4)
	if err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(rand.New(rand.NewPCG(1, 1)), older)
	_, err = storage.Commit(ctx, st, older, ev)
	var ce *storage.ConflictError
	if !errors.As(err, &ce) || ce.Parent != 4 || ce.Head != 6 {
		t.Fatalf("append under v4 with head v6: %v", err)
	}
	sameState(t, "head after a refused append", head(t, st, info.ID), s)
}

func testIllegalTransition(t *testing.T, b Backend) {
	st := open(t, b)
	info := create(t, st, "illegal")
	_, err := st.Append(ctx, info.ID, 0, state.Event{Kind: state.ToolStarted, At: created, Tool: &state.ToolCall{ID: "x"}})
	if !errors.Is(err, state.ErrIllegalTransition) {
		t.Fatalf("tool_started in idle: %v", err)
	}
	got, err := st.Session(ctx, info.ID)
	if err != nil || got.Versions != 0 {
		t.Fatalf("an illegal event was kept: %+v, %v", got, err)
	}
}

func testRollbackStartsABranch(t *testing.T, b Backend) {
	st := open(t, b)
	info := create(t, st, "branches")
	_, seen, kinds := commitScriptEvents(t, st, state.New(info.ID), 5, 6)
	if err := st.SetHead(ctx, info.ID, 3); err != nil {
		t.Fatal(err)
	}
	back := head(t, st, info.ID)
	sameState(t, "head after rollback", back, seen[3])
	if got, _ := st.Session(ctx, info.ID); got.Head != 3 || got.Versions != 6 || got.Phase != seen[3].Phase {
		t.Fatalf("session after rollback: %+v", got)
	}
	fork, forkSeen, forkKinds := commitScriptEvents(t, st, back, 6, 2)
	if fork.Version != 8 || forkSeen[7].ParentVersion != 3 || fork.ParentVersion != 7 {
		t.Fatalf("fork versions: v7 parent %d, v8 parent %d", forkSeen[7].ParentVersion, fork.ParentVersion)
	}
	for v := 1; v <= 6; v++ {
		got, err := st.At(ctx, info.ID, v)
		if err != nil {
			t.Fatal(err)
		}
		sameState(t, fmt.Sprintf("old branch v%d after the fork", v), got, seen[v])
	}
	allKinds, allStates := maps.Clone(kinds), maps.Clone(seen)
	maps.Copy(allKinds, forkKinds)
	maps.Copy(allStates, forkSeen)
	tree, err := st.Tree(ctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	if tree.Head != 8 || len(tree.Nodes) != 8 || len(tree.Branches) != 2 {
		t.Fatalf("tree: head %d, %d nodes, %d branches", tree.Head, len(tree.Nodes), len(tree.Branches))
	}
	want := []storage.Branch{
		{ID: 1, Fork: 0, First: 1, Tip: 6, Versions: 6},
		{ID: 2, Fork: 3, First: 7, Tip: 8, Versions: 2, Current: true},
	}
	if !reflect.DeepEqual(tree.Branches, want) {
		t.Fatalf("branches:\ngot  %+v\nwant %+v", tree.Branches, want)
	}
	for _, n := range tree.Nodes {
		wantCurrent := n.Version <= 3 || n.Version >= 7
		if n.Current != wantCurrent || n.Head != (n.Version == 8) {
			t.Errorf("v%d: current %v head %v", n.Version, n.Current, n.Head)
		}
		if want := map[bool]int{true: 2, false: 1}[n.Version >= 7]; n.Branch != want {
			t.Errorf("v%d on branch %d, want %d", n.Version, n.Branch, want)
		}
		if n.Event != allKinds[n.Version] || n.Phase != allStates[n.Version].Phase {
			t.Errorf("v%d: event %s", n.Version, n.Event)
		}
	}
	if p := tree.Path(8); !reflect.DeepEqual(p, []int{1, 2, 3, 7, 8}) {
		t.Fatalf("path to v8: %v", p)
	}
}

func testRollbackToRoot(t *testing.T, b Backend) {
	st := open(t, b)
	info := create(t, st, "root")
	commitScript(t, st, state.New(info.ID), 7, 3)
	if err := st.SetHead(ctx, info.ID, 0); err != nil {
		t.Fatal(err)
	}
	empty := head(t, st, info.ID)
	sameState(t, "head at the root", empty, state.New(info.ID))
	s, _ := commitScript(t, st, empty, 8, 1)
	if s.Version != 4 || s.ParentVersion != 0 {
		t.Fatalf("first version of a root fork: v%d parent %d", s.Version, s.ParentVersion)
	}
	tree, err := st.Tree(ctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.Branches) != 2 || tree.Branches[1].Fork != 0 || !tree.Branches[1].Current {
		t.Fatalf("branches after a root fork: %+v", tree.Branches)
	}
}

func testDelete(t *testing.T, b Backend) {
	st := open(t, b)
	keep := create(t, st, "keep")
	gone := create(t, st, "gone")
	kept, _ := commitScript(t, st, state.New(keep.ID), 9, 5)
	commitScript(t, st, state.New(gone.ID), 10, 5)
	if err := st.Delete(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Head(ctx, gone.ID); !errors.Is(err, storage.ErrSessionNotFound) {
		t.Fatalf("head of a deleted session: %v", err)
	}
	if err := st.Delete(ctx, gone.ID); !errors.Is(err, storage.ErrSessionNotFound) {
		t.Fatalf("deleting twice: %v", err)
	}
	list, err := st.Sessions(ctx)
	if err != nil || len(list) != 1 || list[0].ID != keep.ID {
		t.Fatalf("sessions after delete: %+v, %v", list, err)
	}
	sameState(t, "the other session", head(t, st, keep.ID), kept)
}

func testResolvePrefix(t *testing.T, b Backend) {
	st := open(t, b)
	// 17 sessions: at least two share a first character, whatever the ids.
	byFirst := map[byte][]string{}
	var ids []string
	for i := range 17 {
		info := create(t, st, fmt.Sprintf("s%d", i))
		ids = append(ids, info.ID)
		byFirst[info.ID[0]] = append(byFirst[info.ID[0]], info.ID)
	}
	for _, id := range ids {
		for _, p := range []string{id, id[:len(id)-1]} {
			if got, err := st.Resolve(ctx, p); err != nil || got != id {
				t.Fatalf("Resolve(%q) = %q, %v; want %q", p, got, err, id)
			}
		}
	}
	for first, group := range byFirst {
		_, err := st.Resolve(ctx, string(first))
		if len(group) == 1 {
			continue
		}
		var ae *storage.AmbiguousError
		if !errors.As(err, &ae) || !errors.Is(err, storage.ErrAmbiguousID) || len(ae.Candidates) != len(group) {
			t.Fatalf("Resolve(%q) with %d matches: %v", first, len(group), err)
		}
		return
	}
	t.Fatal("no two sessions share a first character; the pigeonhole says otherwise")
}

func testNewestFirst(t *testing.T, b Backend) {
	st := open(t, b)
	var infos []storage.SessionInfo
	for i := range 3 {
		info, err := st.Create(ctx, storage.NewSession{Title: fmt.Sprint(i), CreatedAt: created.Add(time.Duration(i) * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		infos = append(infos, info)
	}
	order := func() []string {
		list, err := st.Sessions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var titles []string
		for _, s := range list {
			titles = append(titles, s.Title)
		}
		return titles
	}
	if got := order(); !reflect.DeepEqual(got, []string{"2", "1", "0"}) {
		t.Fatalf("order %v", got)
	}
	// Touching the oldest session brings it to the front.
	ev := state.Event{Kind: state.UserMessage, At: created.Add(5 * time.Hour), Messages: []state.Message{{Role: state.RoleUser, Content: "hi"}}}
	if _, err := storage.Commit(ctx, st, state.New(infos[0].ID), ev); err != nil {
		t.Fatal(err)
	}
	if got := order(); !reflect.DeepEqual(got, []string{"0", "2", "1"}) {
		t.Fatalf("order after an append %v", got)
	}
}

func testPersistsAcrossReopen(t *testing.T, b Backend) {
	loc := b.NewLocation(t)
	st := b.Open(t, loc)
	info := create(t, st, "durable")
	last, seen := commitScript(t, st, state.New(info.ID), 12, 40)
	if err := st.SetHead(ctx, info.ID, 20); err != nil {
		t.Fatal(err)
	}
	treeBefore, err := st.Tree(ctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	again := b.Open(t, loc)
	sameState(t, "head after reopen", head(t, again, info.ID), seen[20])
	got, err := again.At(ctx, info.ID, 40)
	if err != nil {
		t.Fatal(err)
	}
	sameState(t, "v40 after reopen", got, last)
	treeAfter, err := again.Tree(ctx, info.ID)
	if err != nil || !reflect.DeepEqual(treeAfter, treeBefore) {
		t.Fatalf("tree after reopen differs: %v", err)
	}
	// The reopened store can write: the session's claim went with Close.
	commitScript(t, again, seen[20], 13, 3)
}

func testConcurrentAppends(t *testing.T, b Backend) {
	st := open(t, b)
	const workers, each = 4, 40
	want := make([]state.State, workers)
	ids := make([]string, workers)
	for i := range ids {
		ids[i] = create(t, st, fmt.Sprint("worker ", i)).ID
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 99))
			s := state.New(ids[i])
			for range each {
				next, err := storage.Commit(ctx, st, s, nextEvent(rng, s))
				if err != nil {
					errs <- fmt.Errorf("worker %d at v%d: %w", i, s.Version, err)
					return
				}
				s = next
			}
			want[i] = s
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i, id := range ids {
		sameState(t, fmt.Sprint("worker ", i), head(t, st, id), want[i])
	}
}

func testOneWriterPerSession(t *testing.T, b Backend) {
	loc := b.NewLocation(t)
	first := b.Open(t, loc)
	second := b.Open(t, loc)
	info := create(t, first, "contended")
	s, _ := commitScript(t, first, state.New(info.ID), 14, 3)

	ev := nextEvent(rand.New(rand.NewPCG(2, 2)), s)
	_, err := storage.Commit(ctx, second, s, ev)
	var be *storage.BusyError
	if !errors.As(err, &be) || !errors.Is(err, storage.ErrBusy) || be.Session != info.ID {
		t.Fatalf("a second writer on a claimed session: %v", err)
	}
	for name, err := range map[string]error{
		"claim":    second.Claim(ctx, info.ID),
		"rollback": second.SetHead(ctx, info.ID, 1),
		"delete":   second.Delete(ctx, info.ID),
	} {
		if !errors.Is(err, storage.ErrBusy) {
			t.Errorf("%s by a second writer: %v", name, err)
		}
	}
	// Reading is always allowed.
	sameState(t, "head read by the second store", head(t, second, info.ID), s)

	// Other sessions are free to the second store.
	other := create(t, second, "other")
	commitScript(t, second, state.New(other.ID), 15, 3)

	if err := first.Release(info.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := storage.Commit(ctx, second, s, ev); err != nil {
		t.Fatalf("after the first store released the session: %v", err)
	}
	if _, err := storage.Commit(ctx, first, s, ev); !errors.Is(err, storage.ErrBusy) {
		t.Fatalf("the first store writing again after releasing: %v", err)
	}
}

func testExport(t *testing.T, b Backend) {
	st := open(t, b)
	info := create(t, st, "export")
	rng := rand.New(rand.NewPCG(16, 16))
	s := state.New(info.ID)
	var events []state.Event
	blobs := map[string][]byte{}
	for range 60 {
		ev := nextEvent(rng, s)
		next, err := storage.Commit(ctx, st, s, ev)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range ev.Blobs {
			blobs[b.Digest] = b.Data
		}
		// The stored event is the canonical one, without the contents
		// that travelled beside it.
		ev.Blobs = nil
		if ev, err = state.Canonical(ev); err != nil {
			t.Fatal(err)
		}
		events, s = append(events, ev), next
	}
	ex, err := st.Export(ctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ex.Session.ID != info.ID || ex.Session.Versions != 60 || len(ex.Checkpoints) != 60 {
		t.Fatalf("export: %+v with %d checkpoints", ex.Session, len(ex.Checkpoints))
	}
	for i, r := range ex.Checkpoints {
		if r.Version != i+1 || r.Parent != i || r.Event != events[i].Kind || !reflect.DeepEqual(r.Data, events[i]) {
			t.Fatalf("checkpoint %d: %+v\nwant event %+v", i+1, r, events[i])
		}
	}
	if len(blobs) == 0 {
		t.Fatal("the script changed no file: pick another seed")
	}
	if !reflect.DeepEqual(ex.Blobs, blobs) {
		t.Fatalf("the export carries %d contents; the events carried %d", len(ex.Blobs), len(blobs))
	}
}

func testUnknownSession(t *testing.T, b Backend) {
	st := open(t, b)
	create(t, st, "exists")
	const id = "0000000000000000"
	ev := state.Event{Kind: state.UserMessage, At: created, Messages: []state.Message{{Role: state.RoleUser, Content: "x"}}}
	checks := map[string]error{}
	_, checks["head"] = st.Head(ctx, id)
	_, checks["at"] = st.At(ctx, id, 0)
	_, checks["tree"] = st.Tree(ctx, id)
	_, checks["session"] = st.Session(ctx, id)
	_, checks["export"] = st.Export(ctx, id)
	_, checks["append"] = st.Append(ctx, id, 0, ev)
	_, checks["resolve"] = st.Resolve(ctx, "zz")
	checks["sethead"] = st.SetHead(ctx, id, 0)
	checks["delete"] = st.Delete(ctx, id)
	checks["claim"] = st.Claim(ctx, id)
	checks["rename"] = st.Rename(ctx, id, "x")
	checks["path-like id"] = st.SetHead(ctx, "../../etc/passwd", 0)
	for name, err := range checks {
		if !errors.Is(err, storage.ErrSessionNotFound) {
			t.Errorf("%s of an unknown session: %v", name, err)
		}
	}
}

// Fork keeps an event under any version and moves the head to it in one
// step; refused (a version out of range, a transition the phase machine
// refuses), it changes nothing, the head included.
func testFork(t *testing.T, b Backend) {
	st := open(t, b)
	info := create(t, st, "fork")
	_, seen, _ := commitScriptEvents(t, st, state.New(info.ID), 7, 5)
	note := state.Event{Kind: state.NoteSet, At: created.Add(time.Hour), NoteKey: "k", NoteValue: "v"}
	for _, bad := range []struct {
		parent int
		ev     state.Event
	}{
		{6, note},
		{-1, note},
		{0, state.Event{Kind: state.PlanSet, At: created.Add(time.Hour), Plan: []state.Step{{Text: "no task to plan"}}}},
	} {
		if _, err := st.Fork(ctx, info.ID, bad.parent, bad.ev); err == nil {
			t.Fatalf("Fork under v%d of a %s was kept", bad.parent, bad.ev.Kind)
		}
		if got, _ := st.Session(ctx, info.ID); got.Head != 5 || got.Versions != 5 {
			t.Fatalf("a refused Fork under v%d moved the session: %+v", bad.parent, got)
		}
	}
	// A restore_started is legal in any phase: fork it under v2.
	ev := state.Event{Kind: state.RestoreStarted, At: created.Add(time.Hour), From: 5,
		Files: []state.FileChange{{Path: "a.txt", Before: state.FileImage{Absent: true}, After: state.FileImage{Absent: true}}}}
	cp, err := st.Fork(ctx, info.ID, 2, ev)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Version != 6 || cp.Parent != 2 {
		t.Fatalf("fork checkpoint %+v, want v6 under v2", cp)
	}
	got := head(t, st, info.ID)
	if got.Version != 6 || got.ParentVersion != 2 || got.Restoring == nil || len(got.History) != len(seen[2].History) {
		t.Fatalf("head after Fork: v%d under v%d, restoring %v", got.Version, got.ParentVersion, got.Restoring)
	}
}
