package pgstore_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"retrace/storage"
	"retrace/storage/pgstore"
	"retrace/storage/pgstore/pgtest"
)

// newDatabase is a fresh database of the test's own (see pgtest).
func newDatabase(t *testing.T) string { return pgtest.NewDatabase(t) }

// openStore opens a store for a test and closes it when the test ends.
func openStore(t *testing.T, loc string) storage.Store {
	t.Helper()
	return openPG(t, loc, pgstore.Options{})
}

func openPG(t *testing.T, loc string, opts pgstore.Options) *pgstore.Store {
	t.Helper()
	st, err := pgstore.Open(context.Background(), loc, opts)
	if err != nil {
		t.Fatalf("open %s: %v", loc, err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("close %s: %v", st, err)
		}
	})
	return st
}

// sql runs statements on a database directly, as a person with psql
// would: to damage rows, read pg_locks, end a backend.
func sql(t *testing.T, loc, query string, args ...any) {
	t.Helper()
	if _, err := connect(t, loc).Exec(context.Background(), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func connect(t *testing.T, loc string) *pgx.Conn { return pgtest.Connect(t, loc) }
