package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"retrace/state"
	"retrace/storage"
)

// collector is a store that removes what is no longer wanted: both
// backends are one.
type collector interface {
	GC(ctx context.Context, opts storage.GCOptions) (storage.GCReport, error)
}

// RunGC runs the suite's part on gc --branches: which versions go, and
// the edges of every run of removed versions (its first and its last,
// and the kept ones on either side), on the store and after reopening it.
func RunGC(t *testing.T, b Backend) {
	t.Run("GCBranchesRangeEdges", func(t *testing.T) { testGCRangeEdges(t, b) })
}

// branchyScript builds a session whose abandoned versions form runs with
// kept versions between them: v1..v4, then from v2 v5..v7, from v6 v8,
// and from v1 v9..v12, the head. Keeping v6 leaves the runs 3–4 and 7–8.
func branchyScript(t *testing.T, st storage.Store, id string) map[int]state.State {
	t.Helper()
	all := map[int]state.State{}
	s := state.New(id)
	for _, step := range []struct{ from, n int }{{0, 4}, {2, 3}, {6, 1}, {1, 4}} {
		if step.from > 0 {
			if err := st.SetHead(ctx, id, step.from); err != nil {
				t.Fatal(err)
			}
			s = all[step.from]
		}
		var seen map[int]state.State
		s, seen = commitScript(t, st, s, uint64(10+step.from), step.n)
		for v, x := range seen {
			all[v] = x
		}
	}
	if s.Version != 12 {
		t.Fatalf("the script ends at v%d, want v12", s.Version)
	}
	return all
}

func testGCRangeEdges(t *testing.T, b Backend) {
	loc := b.NewLocation(t)
	st := b.Open(t, loc)
	gc, ok := st.(collector)
	if !ok {
		t.Fatalf("%T has no GC", st)
	}
	info := create(t, st, "branchy")
	all := branchyScript(t, st, info.ID)

	rep, err := gc.GC(ctx, storage.GCOptions{Branches: true, Keep: map[string][]int{info.ID: {6}}})
	if err != nil {
		t.Fatal(err)
	}
	checkGone(t, "gc keeping v6", info.ID, rep, []int{3, 4, 7, 8})
	checkRemoved(t, "gc keeping v6", st, info.ID, all, []int{3, 4, 7, 8})
	// Again without the kept version: v2, v5 and v6 go, and the runs
	// join into one, 2–8.
	if rep, err = gc.GC(ctx, storage.GCOptions{Branches: true}); err != nil {
		t.Fatal(err)
	}
	checkGone(t, "gc after it", info.ID, rep, []int{2, 5, 6})
	checkRemoved(t, "gc after it", st, info.ID, all, []int{2, 3, 4, 5, 6, 7, 8})
	// Another store on the same data (it cannot move the head: this one
	// holds the session) reads the same.
	checkRemoved(t, "after reopening", readOnly{b.Open(t, loc)}, info.ID, all, []int{2, 3, 4, 5, 6, 7, 8})

	// A removed number is never given again.
	next, err := storage.Commit(ctx, st, all[12], nextEvent(rand.New(rand.NewPCG(99, 0)), all[12]))
	if err != nil || next.Version != 13 {
		t.Fatalf("the next version after gc: v%d, %v; want v13", next.Version, err)
	}
}

// checkGone fails unless the report names exactly the versions want as
// removed, in branches of session id.
func checkGone(t *testing.T, what, id string, rep storage.GCReport, want []int) {
	t.Helper()
	var got []int
	for _, b := range rep.Branches {
		if b.Session.ID != id {
			t.Fatalf("%s: a branch of session %s, want %s", what, b.Session.ID, id)
		}
		got = append(got, b.Versions...)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("%s: the report removes %v, want %v", what, got, want)
	}
}

// checkRemoved fails unless each version in gone is refused as removed
// (At, SetHead, the tree and the export), the versions beside them read
// as before, and a version past the last is refused as never made.
func checkRemoved(t *testing.T, what string, st storage.Store, id string, all map[int]state.State, gone []int) {
	t.Helper()
	for v := 1; v <= 12; v++ {
		s, err := st.At(ctx, id, v)
		if !slices.Contains(gone, v) {
			if err != nil {
				t.Fatalf("%s: v%d, which stays: %v", what, v, err)
			}
			sameState(t, fmt.Sprintf("%s: v%d", what, v), s, all[v])
			continue
		}
		var ve *storage.VersionError
		if !errors.As(err, &ve) || !ve.Removed || !errors.Is(err, storage.ErrVersionNotFound) {
			t.Fatalf("%s: v%d, removed: %v; want a VersionError that says it was removed", what, v, err)
		}
		if _, ro := st.(readOnly); ro {
			continue
		}
		if err := st.SetHead(ctx, id, v); !errors.As(err, &ve) || !ve.Removed {
			t.Fatalf("%s: the head moved to v%d, which gc removed: %v", what, v, err)
		}
	}
	var ve *storage.VersionError
	if _, err := st.At(ctx, id, 99); !errors.As(err, &ve) || ve.Removed {
		t.Fatalf("%s: v99, never made: %v; want a VersionError that says it does not exist", what, err)
	}
	tree, err := st.Tree(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := st.Export(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var nodes, exported []int
	for _, n := range tree.Nodes {
		nodes = append(nodes, n.Version)
	}
	for _, r := range ex.Checkpoints {
		exported = append(exported, r.Version)
	}
	var want []int
	for v := 1; v <= 12; v++ {
		if !slices.Contains(gone, v) {
			want = append(want, v)
		}
	}
	if !slices.Equal(nodes, want) || !slices.Equal(exported, want) {
		t.Fatalf("%s: the tree holds %v and the export %v; want %v", what, nodes, exported, want)
	}
}

// readOnly marks a store the session is held away from.
type readOnly struct{ storage.Store }
