package pgstore_test

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"retrace/state"
	"retrace/state/statetest"
	"retrace/storage"
	"retrace/storage/pgstore"
	"retrace/storage/storetest"
)

// scripted commits n scripted events with file contents to session id
// from s, each at a second after the last from at.
func scripted(t *testing.T, st storage.Store, s state.State, at time.Time, seed uint64, n int) state.State {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 3))
	for range n {
		ev := storetest.WithContents(statetest.NextEvent(rng, s))
		at = at.Add(time.Second)
		ev.At = at
		var err error
		if s, err = storage.Commit(ctx, st, s, ev); err != nil {
			t.Fatalf("commit at v%d: %v", s.Version, err)
		}
	}
	return s
}

// digests is every content a session's versions refer to, by version.
func digests(t *testing.T, st storage.Store, id string) map[int][]string {
	t.Helper()
	ex, err := st.Export(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int][]string{}
	for _, r := range ex.Checkpoints {
		out[r.Version] = r.Data.BlobDigests()
	}
	return out
}

// gc on PostgreSQL keeps the rules it keeps on a file: an old session goes
// whole, an abandoned branch goes and its numbers stay taken, a session
// another process holds is skipped and named, the contents nothing refers
// to any more go, what stays reads back as before, and a dry run changes
// nothing.
func TestGC(t *testing.T) {
	loc := newDatabase(t)
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	st := openPG(t, loc, pgstore.Options{Now: func() time.Time { return now }})
	long := now.Add(-200 * 24 * time.Hour)

	old, err := st.Create(ctx, storage.NewSession{Title: "old", CreatedAt: long})
	if err != nil {
		t.Fatal(err)
	}
	scripted(t, st, state.New(old.ID), long, 1, 30)
	branchy, err := st.Create(ctx, storage.NewSession{Title: "branchy", CreatedAt: now})
	if err != nil {
		t.Fatal(err)
	}
	scripted(t, st, state.New(branchy.ID), now.Add(-time.Hour), 2, 40)
	if err := st.SetHead(ctx, branchy.ID, 20); err != nil {
		t.Fatal(err)
	}
	at20, err := st.At(ctx, branchy.ID, 20)
	if err != nil {
		t.Fatal(err)
	}
	scripted(t, st, at20, now.Add(-time.Minute), 3, 10)
	other := openPG(t, loc, pgstore.Options{Host: "elsewhere"})
	held, err := other.Create(ctx, storage.NewSession{Title: "held", CreatedAt: long})
	if err != nil {
		t.Fatal(err)
	}
	scripted(t, other, state.New(held.ID), long, 4, 5)

	headBefore, err := st.Head(ctx, branchy.ID)
	if err != nil {
		t.Fatal(err)
	}
	refs := digests(t, st, branchy.ID)
	exportHeld, err := st.Export(ctx, held.ID)
	if err != nil {
		t.Fatal(err)
	}
	opts := storage.GCOptions{OlderThan: 90 * 24 * time.Hour, Branches: true, DryRun: true}
	dry, err := st.GC(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	list, _ := st.Sessions(ctx)
	if len(dry.Sessions) != 1 || dry.Sessions[0].ID != old.ID || len(dry.Skipped) != 1 || dry.Skipped[0].ID != held.ID ||
		len(dry.Branches) != 1 || !reflect.DeepEqual(dry.Branches[0].Versions, versions(21, 40)) || dry.Bytes <= 0 || len(list) != 3 {
		t.Fatalf("dry run: %+v (sessions after: %d)", dry, len(list))
	}

	opts.DryRun = false
	rep, err := st.GC(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.DryRun || !reflect.DeepEqual(rep.Sessions, dry.Sessions) || !reflect.DeepEqual(rep.Branches, dry.Branches) || rep.Bytes != dry.Bytes || rep.Blobs != dry.Blobs {
		t.Errorf("the run did other than its dry run said:\n%+v\n%+v", rep, dry)
	}
	if _, err := st.Session(ctx, old.ID); !errors.Is(err, storage.ErrSessionNotFound) {
		t.Errorf("the old session after gc: %v", err)
	}
	var ve *storage.VersionError
	if _, err := st.At(ctx, branchy.ID, 30); !errors.As(err, &ve) || !ve.Removed {
		t.Errorf("v30 of the abandoned branch after gc: %v", err)
	}
	if head, err := st.Head(ctx, branchy.ID); err != nil || !reflect.DeepEqual(head, headBefore) {
		t.Errorf("the head after gc differs: %v", err)
	}
	if ex, err := st.Export(ctx, held.ID); err != nil || !reflect.DeepEqual(ex, exportHeld) {
		t.Errorf("the held session after gc differs: %v", err)
	}
	kept := map[string]bool{}
	for v, ds := range refs {
		for _, d := range ds {
			if v <= 20 || v > 40 {
				kept[d] = true
			}
		}
	}
	gone := 0
	for v, ds := range refs {
		for _, d := range ds {
			_, err := st.Blob(ctx, d)
			switch {
			case kept[d] && err != nil:
				t.Errorf("content %s of a kept version: %v", d, err)
			case !kept[d] && v > 20 && v <= 40 && !errors.Is(err, storage.ErrBlobNotFound):
				t.Errorf("content %s only the abandoned branch had: %v", d, err)
			case !kept[d]:
				gone++
			}
		}
	}
	if gone == 0 || rep.Blobs < 1 {
		t.Errorf("no content went (%d, reported %d): the script made none only the branch had", gone, rep.Blobs)
	}
	if again, err := st.GC(ctx, opts); err != nil || again.Bytes != 0 || len(again.Skipped) != 1 {
		t.Errorf("a second gc: %+v, %v", again, err)
	}
	if _, err := st.Check(ctx); err != nil {
		t.Errorf("check after gc: %v", err)
	}
}

func versions(from, to int) []int {
	var out []int
	for v := from; v <= to; v++ {
		out = append(out, v)
	}
	return out
}

// Compact gives the space of a removed session back, reads every session
// back as before, and refuses while another store holds a session.
func TestCompact(t *testing.T) {
	loc := newDatabase(t)
	st := openPG(t, loc, pgstore.Options{})
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	big, err := st.Create(ctx, storage.NewSession{Title: "big", CreatedAt: now})
	if err != nil {
		t.Fatal(err)
	}
	scripted(t, st, state.New(big.ID), now, 5, 300)
	small, err := st.Create(ctx, storage.NewSession{Title: "small", CreatedAt: now})
	if err != nil {
		t.Fatal(err)
	}
	scripted(t, st, state.New(small.ID), now, 6, 10)
	before, err := st.Export(ctx, small.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, big.ID); err != nil {
		t.Fatal(err)
	}

	other := openPG(t, loc, pgstore.Options{Host: "elsewhere"})
	if err := other.Claim(ctx, small.ID); err == nil {
		t.Fatal("the second store claimed a session the first holds")
	}
	if err := st.Release(small.ID); err != nil {
		t.Fatal(err)
	}
	if err := other.Claim(ctx, small.ID); err != nil {
		t.Fatal(err)
	}
	var be *storage.BusyError
	if _, err := st.Compact(ctx); !errors.As(err, &be) || be.Session != small.ID || be.Host != "elsewhere" {
		t.Fatalf("compact while another store holds a session: %v", err)
	}
	if err := other.Release(small.ID); err != nil {
		t.Fatal(err)
	}
	rep, err := st.Compact(ctx)
	if err != nil || rep.After >= rep.Before {
		t.Fatalf("compact: %d -> %d bytes, %v", rep.Before, rep.After, err)
	}
	if after, err := st.Export(ctx, small.ID); err != nil || !reflect.DeepEqual(after, before) {
		t.Errorf("the session after compact differs: %v", err)
	}
}
