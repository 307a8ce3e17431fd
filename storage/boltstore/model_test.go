package boltstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"retrace/state"
	"retrace/storage"
)

// Time travel against a model: random appends, rollbacks and forks on the
// store and on a reference model built only from state.Apply (a version's
// parent and state, and a head). After every operation the head and the
// version count agree; at the end the whole tree and every version's state
// do.
func TestRandomOperationsMatchModel(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("RETRACE_MODEL_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("RETRACE_MODEL_SEED: %v", err)
		}
	}
	runs := envInt(t, "RETRACE_MODEL_RUNS", 3)
	ops := envInt(t, "RETRACE_MODEL_OPS", 500)
	t.Logf("seeds %d to %d, %d operations each (replay one: RETRACE_MODEL_SEED=<seed> RETRACE_MODEL_RUNS=1)", seed, seed+uint64(runs)-1, ops)
	for i := range uint64(runs) {
		t.Run(fmt.Sprint("seed ", seed+i), func(t *testing.T) { runModel(t, seed+i, ops) })
	}
}

// modelVersion is one version as the model keeps it.
type modelVersion struct {
	parent int
	state  state.State
	json   []byte
}

type model struct {
	versions []modelVersion // index = version; 0 is the empty session
	head     int
}

func runModel(t *testing.T, seed uint64, ops int) {
	ctx := context.Background()
	fail := func(op int, format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d, operation %d: "+format, append([]any{seed, op}, args...)...)
	}
	path := filepath.Join(t.TempDir(), "retrace.db")
	st := openStore(t, path) // verified when the test ends
	info, err := st.Create(ctx, storage.NewSession{Title: "model"})
	if err != nil {
		t.Fatal(err)
	}
	id := info.ID
	empty := state.New(id)
	m := &model{versions: []modelVersion{{state: empty, json: mustJSON(t, empty)}}}
	rng := rand.New(rand.NewPCG(seed, 0x30de1))
	var appends, rollbacks, forks int

	rollback := func(op int) {
		target := rng.IntN(len(m.versions))
		if err := st.SetHead(ctx, id, target); err != nil {
			fail(op, "roll back to v%d: %v", target, err)
		}
		m.head = target
	}
	appendOne := func(op int) {
		from := m.versions[m.head].state
		ev := scripted(rng, from)
		canon, err := state.Canonical(ev)
		if err != nil {
			t.Fatal(err)
		}
		want, err := state.Apply(from, canon)
		if err != nil {
			fail(op, "the model refuses its own event: %v", err)
		}
		want.Version, want.ParentVersion = len(m.versions), m.head
		got, err := storage.Commit(ctx, st, from, ev)
		if err != nil {
			fail(op, "append to v%d: %v", m.head, err)
		}
		js := mustJSON(t, want)
		if g := mustJSON(t, got); !bytes.Equal(g, js) {
			fail(op, "append returned a state other than the model's:\n got %.300s\nwant %.300s", g, js)
		}
		m.versions = append(m.versions, modelVersion{parent: m.head, state: want, json: js})
		m.head = want.Version
	}

	for op := 1; op <= ops; op++ {
		switch r := rng.IntN(100); {
		case r < 60 || len(m.versions) == 1:
			appendOne(op)
			appends++
		case r < 80:
			rollback(op)
			rollbacks++
		default:
			rollback(op)
			appendOne(op)
			forks++
		}
		info, err := st.Session(ctx, id)
		if err != nil {
			fail(op, "%v", err)
		}
		if info.Head != m.head || info.Versions != len(m.versions)-1 {
			fail(op, "the store has head v%d of %d versions; the model v%d of %d", info.Head, info.Versions, m.head, len(m.versions)-1)
		}
	}

	tree, err := st.Tree(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if tree.Head != m.head || len(tree.Nodes) != len(m.versions)-1 {
		fail(ops, "the tree has head v%d and %d versions; the model v%d and %d", tree.Head, len(tree.Nodes), m.head, len(m.versions)-1)
	}
	current := m.path()
	for i, n := range tree.Nodes {
		v := i + 1
		if n.Version != v || n.Parent != m.versions[v].parent {
			fail(ops, "tree node %d is v%d under v%d; the model has v%d under v%d", i, n.Version, n.Parent, v, m.versions[v].parent)
		}
		if n.Phase != m.versions[v].state.Phase || n.Head != (v == m.head) || n.Current != current[v] {
			fail(ops, "tree node v%d: phase %s, head %v, current %v; the model: %s, %v, %v",
				v, n.Phase, n.Head, n.Current, m.versions[v].state.Phase, v == m.head, current[v])
		}
	}
	if got, want := len(tree.Branches), m.branches(); got != want {
		fail(ops, "the tree has %d branches; the model %d", got, want)
	}
	for v, mv := range m.versions {
		s, err := st.At(ctx, id, v)
		if err != nil {
			fail(ops, "At(%d): %v", v, err)
		}
		if got := mustJSON(t, s); !bytes.Equal(got, mv.json) {
			fail(ops, "the state at v%d is not the model's:\n got %.300s\nwant %.300s", v, got, mv.json)
		}
	}
	t.Logf("seed %d: %d operations (%d appends, %d rollbacks, %d forks): %d versions in %d branches, head v%d; every version matches the model",
		seed, ops, appends, rollbacks, forks, len(m.versions)-1, m.branches(), m.head)
}

// path marks the versions from the root to the head.
func (m *model) path() map[int]bool {
	on := map[int]bool{}
	for v := m.head; v > 0; v = m.versions[v].parent {
		on[v] = true
	}
	return on
}

// branches counts the branches the model's versions form: a version starts
// a branch unless it is the first child of a version (the root's children
// each start one).
func (m *model) branches() int {
	n := 0
	continued := map[int]bool{}
	for v := 1; v < len(m.versions); v++ {
		p := m.versions[v].parent
		if p == 0 || continued[p] {
			n++
		}
		continued[p] = true
	}
	return n
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	js, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return js
}
