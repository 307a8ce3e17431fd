package storetest

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"retrace/state"
	"retrace/state/statetest"
	"retrace/storage"
)

// RunImport runs the import tests alone: for a backend to run again with
// its bulk path set to write every few checkpoints.
func RunImport(t *testing.T, b Backend) {
	t.Run("ImportRoundTrip", func(t *testing.T) { testImportRoundTrip(t, b) })
	t.Run("ImportOverAnExistingSessionRefused", func(t *testing.T) { testImportExistingRefused(t, b) })
	t.Run("ImportUnderANewID", func(t *testing.T) { testImportNewID(t, b) })
	t.Run("ImportRefusesBadInput", func(t *testing.T) { testImportRefusesBadInput(t, b) })
	t.Run("ImportManyVersions", func(t *testing.T) { testImportManyVersions(t, b) })
}

// exportedSession builds a session with a branch and file contents in st
// and returns its export: what the import tests feed another store.
func exportedSession(t *testing.T, st storage.Store) storage.Export {
	t.Helper()
	info := create(t, st, "to import")
	commitScript(t, st, state.New(info.ID), 21, 40)
	if err := st.SetHead(ctx, info.ID, 17); err != nil {
		t.Fatal(err)
	}
	commitScript(t, st, head(t, st, info.ID), 22, 12)
	ex, err := st.Export(ctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Blobs) == 0 {
		t.Fatal("the script changed no file: pick another seed")
	}
	return ex
}

// cloneExport is a deep copy of ex, through its JSON, for a test to spoil.
func cloneExport(t *testing.T, ex storage.Export) storage.Export {
	t.Helper()
	b, err := json.Marshal(ex)
	if err != nil {
		t.Fatal(err)
	}
	var out storage.Export
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func exportOf(t *testing.T, st storage.Store, id string) storage.Export {
	t.Helper()
	ex, err := st.Export(ctx, id)
	if err != nil {
		t.Fatalf("export %s: %v", id, err)
	}
	return ex
}

func testImportRoundTrip(t *testing.T, b Backend) {
	from := open(t, b)
	ex := exportedSession(t, from)
	to := open(t, b)
	info, err := to.Import(ctx, cloneExport(t, ex))
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	if !reflect.DeepEqual(info, ex.Session) {
		t.Fatalf("import returned %+v, want %+v", info, ex.Session)
	}
	if got := exportOf(t, to, ex.Session.ID); !reflect.DeepEqual(got, ex) {
		t.Fatalf("the imported session exports differently:\ngot  %+v\nwant %+v", got.Session, ex.Session)
	}
	want, err := from.Tree(ctx, ex.Session.ID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := to.Tree(ctx, ex.Session.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("tree after import:\ngot  %+v\nwant %+v", got, want)
	}
	sameState(t, "head after import", head(t, to, ex.Session.ID), head(t, from, ex.Session.ID))
	for d := range ex.Blobs {
		readBlob(t, to, state.Blob{Digest: d, Data: ex.Blobs[d]})
	}
	// The imported session goes on like any other.
	commitScript(t, to, head(t, to, ex.Session.ID), 23, 5)
}

func testImportExistingRefused(t *testing.T, b Backend) {
	st := open(t, b)
	ex := exportedSession(t, st)
	again := cloneExport(t, ex)
	again.Session.Title = "imported over"
	_, err := st.Import(ctx, again)
	if !errors.Is(err, storage.ErrSessionExists) || !strings.Contains(err.Error(), ex.Session.ID) {
		t.Fatalf("import of a session the store holds: %v, want ErrSessionExists naming %s", err, ex.Session.ID)
	}
	if got := exportOf(t, st, ex.Session.ID); !reflect.DeepEqual(got, ex) {
		t.Fatalf("a refused import changed the session: %+v", got.Session)
	}
}

func testImportNewID(t *testing.T, b Backend) {
	st := open(t, b)
	ex := exportedSession(t, st)
	fresh := cloneExport(t, ex)
	fresh.Session.ID = ""
	info, err := st.Import(ctx, fresh)
	if err != nil {
		t.Fatalf("import under a new id: %v", err)
	}
	if info.ID == "" || info.ID == ex.Session.ID {
		t.Fatalf("import under a new id got id %q (the original is %s)", info.ID, ex.Session.ID)
	}
	got := exportOf(t, st, info.ID)
	got.Session.ID = ex.Session.ID
	if !reflect.DeepEqual(got, ex) {
		t.Fatalf("the copy exports differently: %+v", got.Session)
	}
	if list, err := st.Sessions(ctx); err != nil || len(list) != 2 {
		t.Fatalf("sessions after importing a copy: %d, %v", len(list), err)
	}
}

// spoilings are ways an export can be wrong, each with a word the error
// must contain so a person can find what is wrong.
var spoilings = []struct {
	name, want string
	spoil      func(ex *storage.Export)
}{
	{"versions out of order", "must rise", func(ex *storage.Export) {
		c := ex.Checkpoints
		c[3], c[4] = c[4], c[3]
	}},
	// gc leaves gaps, but never one a kept version hangs under.
	{"a version missing under its child", "parent v6", func(ex *storage.Export) {
		ex.Checkpoints = append(ex.Checkpoints[:5:5], ex.Checkpoints[6:]...)
	}},
	{"parent that does not exist", "parent", func(ex *storage.Export) { ex.Checkpoints[7].Parent = 99 }},
	{"negative parent", "parent", func(ex *storage.Export) { ex.Checkpoints[7].Parent = -1 }},
	{"event that does not replay", "replay", func(ex *storage.Export) {
		ex.Checkpoints[1].Data.Kind, ex.Checkpoints[1].Event = state.ApprovalGiven, state.ApprovalGiven
	}},
	{"header disagrees with its event", "event", func(ex *storage.Export) { ex.Checkpoints[2].Event = state.Failed }},
	{"phase that is not what the event leads to", "phase", func(ex *storage.Export) { ex.Checkpoints[2].Phase = state.AwaitingApproval }},
	{"time that disagrees with the event's", "time", func(ex *storage.Export) { ex.Checkpoints[2].At = ex.Checkpoints[2].At.Add(1) }},
	{"blob whose digest does not match", "sha256:", func(ex *storage.Export) {
		for d := range ex.Blobs {
			ex.Blobs[d] = append(ex.Blobs[d], 'x')
			break
		}
	}},
	{"referenced blob missing", "sha256:", func(ex *storage.Export) {
		for d := range ex.Blobs {
			delete(ex.Blobs, d)
			break
		}
	}},
	{"blob nothing refers to", "sha256:", func(ex *storage.Export) {
		data := []byte("stray")
		ex.Blobs[storage.Digest(data)] = data
	}},
	{"head past the last version", "head", func(ex *storage.Export) { ex.Session.Head = len(ex.Checkpoints) + 1 }},
	{"versions count below the last version", "versions", func(ex *storage.Export) { ex.Session.Versions-- }},
	{"phase at the head wrong", "phase", func(ex *storage.Export) { ex.Session.Phase = state.AwaitingApproval }},
	{"no checkpoints but a head", "head", func(ex *storage.Export) {
		ex.Checkpoints, ex.Blobs, ex.Session.Versions = nil, nil, 0
	}},
}

func testImportRefusesBadInput(t *testing.T, b Backend) {
	src := open(t, b)
	ex := exportedSession(t, src)
	for _, sp := range spoilings {
		t.Run(sp.name, func(t *testing.T) {
			st := open(t, b)
			bad := cloneExport(t, ex)
			sp.spoil(&bad)
			_, err := st.Import(ctx, bad)
			if !errors.Is(err, storage.ErrInvalid) {
				t.Fatalf("import: %v, want an error wrapping ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), sp.want) {
				t.Errorf("the error %q does not say %q", err, sp.want)
			}
			nothingKept(t, st, ex)
		})
	}
}

// nothingKept checks a refused import left no session and no content.
func nothingKept(t *testing.T, st storage.Store, ex storage.Export) {
	t.Helper()
	if list, err := st.Sessions(ctx); err != nil || len(list) != 0 {
		t.Fatalf("after a refused import the store lists %d sessions (%v)", len(list), err)
	}
	for d := range ex.Blobs {
		noBlob(t, st, d, "after a refused import")
	}
}

// testImportManyVersions goes through a backend's bulk path: more
// checkpoints than one transaction of it may hold.
func testImportManyVersions(t *testing.T, b Backend) {
	if testing.Short() {
		t.Skip("slow: builds a session of 3,000 checkpoints")
	}
	ex := ScriptedExport("bulk", 3000, 31)
	st := open(t, b)
	if _, err := st.Import(ctx, cloneExport(t, ex)); err != nil {
		t.Fatalf("import of %d checkpoints: %v", len(ex.Checkpoints), err)
	}
	if got := exportOf(t, st, ex.Session.ID); !reflect.DeepEqual(got, ex) {
		t.Fatalf("the imported session exports differently: %+v", got.Session)
	}
}

// ScriptedExport is the export of a session of n scripted checkpoints,
// with a branch every 500 and file contents, made in memory without a
// store: what import tests and benchmarks feed a store quickly.
func ScriptedExport(id string, n int, seed uint64) storage.Export {
	rng := rand.New(rand.NewPCG(seed, 5))
	ex := storage.Export{Session: storage.SessionInfo{ID: id, Title: "scripted", Model: "gpt-test", Workspace: "/src/app", CreatedAt: created, UpdatedAt: created}}
	var path []int // the versions from the root to the state being built
	s := state.New(id)
	b := state.NewBuilder(s)
	for v := 1; v <= n; v++ {
		if v%500 == 0 && len(path) > 10 {
			// Branch: start again a few versions back.
			path = path[:len(path)-5]
			b = state.NewBuilder(state.New(id))
			for _, p := range path {
				if err := b.Apply(ex.Checkpoints[p-1].Data); err != nil {
					panic(err)
				}
			}
		}
		ev := WithContents(statetest.NextEvent(rng, b.State()))
		ev.At = created.Add(time.Duration(v) * time.Second)
		blobs := ev.Blobs
		ev.Blobs = nil
		ev, err := state.Canonical(ev)
		if err != nil {
			panic(err)
		}
		if err := b.Apply(ev); err != nil {
			panic(err)
		}
		parent := 0
		if len(path) > 0 {
			parent = path[len(path)-1]
		}
		ex.Checkpoints = append(ex.Checkpoints, storage.Record{
			Checkpoint: storage.Checkpoint{Version: v, Parent: parent, Event: ev.Kind, Phase: b.Phase(), At: ev.At},
			Data:       ev,
		})
		for _, bl := range blobs {
			if ex.Blobs == nil {
				ex.Blobs = map[string][]byte{}
			}
			ex.Blobs[bl.Digest] = bl.Data
		}
		path = append(path, v)
		ex.Session.Head, ex.Session.Phase, ex.Session.UpdatedAt = v, b.Phase(), ev.At
	}
	ex.Session.Versions = n
	return ex
}
