package boltstore

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
	"retrace/storage"
)

// salvageEvent is the i-th event of a chat (a user message when i is odd,
// then its answer), saying text, at t0 plus i seconds.
func salvageEvent(i int, text string) state.Event {
	ev := chat(i - 1)
	ev.Messages[0].Content = text
	return ev
}

// crafted is a session written record by record: versions[v-1] is v's
// parent, phase and text; broken ones get a bad checksum.
type crafted struct {
	id       string
	info     *infoRecord // nil: a damaged info record
	versions []craftedVersion
	noBucket bool // no versions bucket at all
}

type craftedVersion struct {
	parent int
	phase  state.Phase
	n      int // the event: salvageEvent(n, text)
	text   string
	broken bool
}

func writeCrafted(t *testing.T, path string, sessions []crafted) {
	t.Helper()
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = st.update(context.Background(), func(tx *bolt.Tx) error {
		for _, c := range sessions {
			b, err := tx.Bucket(sessionsBucket).CreateBucket([]byte(c.id))
			if err != nil {
				return err
			}
			info := []byte{1, 0, 0, 0, 0, '{', '}'} // its checksum fails
			if c.info != nil {
				if info, err = encodeInfo(*c.info); err != nil {
					return err
				}
			}
			if err := b.Put(infoKey, info); err != nil {
				return err
			}
			if c.noBucket {
				continue
			}
			vb, err := b.CreateBucket(versionsBucket)
			if err != nil {
				return err
			}
			for i, v := range c.versions {
				rec := record(t, v.parent, v.phase, salvageEvent(v.n, v.text))
				if v.broken {
					rec[len(rec)-3] ^= 0x01
				}
				if err := vb.Put(versionKey(i+1), rec); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Recover, on a file whose records were damaged below bbolt's structure:
// what it keeps, how it numbers it, and what it reports.
func TestRecoverRenumbers(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "damaged.db"), filepath.Join(dir, "recovered.db")
	info := func(title string, head, versions int, phase state.Phase) *infoRecord {
		return &infoRecord{Title: title, Model: "m", Workspace: "/w", CreatedAt: t0, UpdatedAt: t0.Add(time.Hour), Head: head, Versions: versions, Phase: phase}
	}
	P, D := state.Planning, state.Done
	writeCrafted(t, src, []crafted{
		{id: "a-clean", info: info("clean", 2, 3, D), versions: []craftedVersion{
			{0, P, 1, "a1", false}, {1, D, 2, "a2", false}, {2, P, 3, "a3", false}}},
		// v3 is damaged, so v4 (under it) is lost too; v5 and v6 (under
		// v2) are kept, as v3 and v4; v7 names itself as its parent.
		{id: "b-damaged", info: info("damaged", 6, 7, D), versions: []craftedVersion{
			{0, P, 1, "b1", false}, {1, D, 2, "b2", false}, {2, P, 3, "b3", true}, {3, D, 4, "b4", false},
			{2, P, 3, "b5", false}, {5, D, 4, "b6", false}, {7, P, 5, "b7", false}}},
		{id: "c-noinfo", versions: []craftedVersion{{0, P, 1, "c1", false}, {1, D, 2, "c2", false}}},
		{id: "d-noversions", info: info("gone", 0, 0, state.Idle), noBucket: true},
		// v2 names itself as its parent: that, not a lost parent, is
		// the reason it is lost.
		{id: "f-selfparent", info: info("self", 2, 2, D), versions: []craftedVersion{
			{0, P, 1, "f1", false}, {2, D, 2, "f2", false}}},
		// The head, v3, is lost: the session goes on from v2.
		{id: "e-headlost", info: info("head lost", 3, 3, P), versions: []craftedVersion{
			{0, P, 1, "e1", false}, {1, D, 2, "e2", false}, {2, P, 3, "e3", true}}},
	})
	before, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}

	r, err := Recover(ctx, src, dst)
	if err != nil {
		t.Fatal(err)
	}
	if r.Sessions != 5 || r.Versions != 3+4+2+2+1 {
		t.Errorf("recovered %d sessions, %d versions; want 5 and 12", r.Sessions, r.Versions)
	}
	wantLost := []Loss{
		{Session: "b-damaged", Lost: []int{3, 4, 7}, Reason: "v3: checksum mismatch", Renumbered: true},
		{Session: "c-noinfo", Reason: "its session record: checksum mismatch"},
		{Session: "d-noversions", Reason: "its versions are missing", Whole: true},
		{Session: "e-headlost", Lost: []int{3}, Reason: "v3: checksum mismatch"},
		{Session: "f-selfparent", Lost: []int{2}, Reason: "v2: its parent v2 is not older than it"},
	}
	if len(r.Lost) != len(wantLost) {
		t.Fatalf("losses %+v; want %+v", r.Lost, wantLost)
	}
	for i, w := range wantLost {
		g := r.Lost[i]
		if !strings.HasPrefix(g.Reason, w.Reason) {
			t.Errorf("loss %d: reason %q; want it to start %q", i, g.Reason, w.Reason)
		}
		g.Reason = w.Reason
		if !reflect.DeepEqual(g, w) {
			t.Errorf("loss %d: %+v; want %+v", i, g, w)
		}
	}
	after, err := os.ReadFile(src)
	if err != nil || !bytes.Equal(before, after) {
		t.Fatalf("Recover changed the damaged file (%v)", err)
	}

	st, err := Open(dst, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	type node struct {
		v, parent int
		phase     state.Phase
		text      string
	}
	for _, w := range []struct {
		id    string
		info  storage.SessionInfo
		nodes []node
	}{
		{"a-clean", storage.SessionInfo{ID: "a-clean", Title: "clean", Model: "m", Workspace: "/w", CreatedAt: t0, UpdatedAt: t0.Add(time.Hour), Head: 2, Versions: 3, Phase: D},
			[]node{{1, 0, P, "a1"}, {2, 1, D, "a2"}, {3, 2, P, "a3"}}},
		{"b-damaged", storage.SessionInfo{ID: "b-damaged", Title: "damaged", Model: "m", Workspace: "/w", CreatedAt: t0, UpdatedAt: t0.Add(time.Hour), Head: 4, Versions: 4, Phase: D},
			[]node{{1, 0, P, "b1"}, {2, 1, D, "b2"}, {3, 2, P, "b5"}, {4, 3, D, "b6"}}},
		{"c-noinfo", storage.SessionInfo{ID: "c-noinfo", Title: "(recovered session)", Head: 2, Versions: 2, Phase: D},
			[]node{{1, 0, P, "c1"}, {2, 1, D, "c2"}}},
		{"e-headlost", storage.SessionInfo{ID: "e-headlost", Title: "head lost", Model: "m", Workspace: "/w", CreatedAt: t0, UpdatedAt: t0.Add(time.Hour), Head: 2, Versions: 2, Phase: D},
			[]node{{1, 0, P, "e1"}, {2, 1, D, "e2"}}},
		{"f-selfparent", storage.SessionInfo{ID: "f-selfparent", Title: "self", Model: "m", Workspace: "/w", CreatedAt: t0, UpdatedAt: t0.Add(time.Hour), Head: 1, Versions: 1, Phase: P},
			[]node{{1, 0, P, "f1"}}},
	} {
		got, err := st.Session(ctx, w.id)
		if err != nil || !reflect.DeepEqual(got, w.info) {
			t.Errorf("session %s: %+v, %v\nwant %+v", w.id, got, err, w.info)
		}
		ex, err := st.Export(ctx, w.id)
		if err != nil {
			t.Fatal(err)
		}
		var nodes []node
		for _, r := range ex.Checkpoints {
			nodes = append(nodes, node{r.Version, r.Parent, r.Phase, r.Data.Messages[0].Content})
		}
		if !reflect.DeepEqual(nodes, w.nodes) {
			t.Errorf("session %s holds %+v; want %+v", w.id, nodes, w.nodes)
		}
	}
	if _, err := st.Session(ctx, "d-noversions"); err == nil {
		t.Error("a session with nothing to keep was copied")
	}
}
