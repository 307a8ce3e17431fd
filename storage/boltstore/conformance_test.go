package boltstore_test

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"retrace/state"
	"retrace/state/statetest"
	"retrace/storage"
	"retrace/storage/boltstore"
	"retrace/storage/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Backend{
		NewLocation: func(t *testing.T) string { return filepath.Join(t.TempDir(), "retrace.db") },
		Open:        openStore,
	})
}

// openStore opens a store for a test and, when the test ends, closes it and
// checks the whole file: bbolt's own consistency check and every record.
func openStore(t *testing.T, path string) storage.Store {
	t.Helper()
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() {
		st.Close()
		if err := boltstore.Verify(context.Background(), path); err != nil {
			t.Errorf("verify %s: %v", path, err)
		}
	})
	return st
}

// scripted is the script's next event in s, its files given contents the
// store can check (statetest names digests of text it does not keep).
func scripted(rng *rand.Rand, s state.State) state.Event {
	return storetest.WithContents(statetest.NextEvent(rng, s))
}

// TestConformanceImportInBatches runs the import tests with a bulk path
// that commits every 7 checkpoints: the staged import, published at the
// end, must behave as the one-transaction import does.
func TestConformanceImportInBatches(t *testing.T) {
	defer boltstore.SetImportBatch(7)()
	storetest.RunImport(t, storetest.Backend{
		NewLocation: func(t *testing.T) string { return filepath.Join(t.TempDir(), "retrace.db") },
		Open:        openStore,
	})
}
