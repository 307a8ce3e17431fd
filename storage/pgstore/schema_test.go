package pgstore_test

import (
	"errors"
	"strings"
	"testing"

	"retrace/storage"
	"retrace/storage/pgstore"
)

// A database a newer retrace migrated is refused, by Open and by a store
// that was open before the migration, before anything is written.
func TestNewerSchemaRefused(t *testing.T) {
	loc := newDatabase(t)
	st := openPG(t, loc, pgstore.Options{})
	info, err := st.Create(ctx, storage.NewSession{Title: "old"})
	if err != nil {
		t.Fatal(err)
	}
	sql(t, loc, "UPDATE retrace_schema SET version = 99")
	_, err = pgstore.Open(ctx, loc, pgstore.Options{})
	if !errors.Is(err, storage.ErrTooNew) || !strings.Contains(err.Error(), "99") {
		t.Fatalf("open of a schema-99 database: %v; want ErrTooNew naming 99", err)
	}
	if _, err := st.Append(ctx, info.ID, 0, hello(ctxTime)); !errors.Is(err, storage.ErrTooNew) {
		t.Fatalf("append after a newer retrace migrated: %v; want ErrTooNew", err)
	}
}

// Opening a database again leaves its schema as it is, and many stores
// opening a new database at once migrate it once (the advisory lock).
func TestMigrationOnceUnderConcurrentOpens(t *testing.T) {
	loc := newDatabase(t)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			st, err := pgstore.Open(ctx, loc, pgstore.Options{})
			if err == nil {
				err = st.Close()
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent open: %v", err)
		}
	}
	var n, version int
	if err := connect(t, loc).QueryRow(ctx, "SELECT count(*), max(version) FROM retrace_schema").Scan(&n, &version); err != nil || n != 1 || version != pgstore.SchemaVersion {
		t.Fatalf("retrace_schema: %d rows, version %d, %v", n, version, err)
	}
}
