// Package pgtest gives tests a PostgreSQL database of their own, on the
// server RETRACE_PG_URL names (.ci/postgres starts a private one), or
// skips them with one line saying how to run them.
package pgtest

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"retrace/storage/pgstore"
)

// SkipHow is what a test without a server says.
const SkipHow = "set RETRACE_PG_URL to run the PostgreSQL tests, e.g. export $(.ci/postgres start) — see .ci/postgres"

// ServerURL is the server the tests run against, or a skip.
func ServerURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("RETRACE_PG_URL")
	if u == "" {
		t.Skip(SkipHow)
	}
	return u
}

// NewDatabase makes a fresh, empty database on the test server, dropped
// when the test ends, and returns its URL: as isolated as a temp file
// (advisory locks are per database too).
func NewDatabase(t testing.TB) string {
	t.Helper()
	url, drop, err := pgstore.Scratch(context.Background(), ServerURL(t), "test")
	if err != nil {
		t.Fatalf("a database of the test's own: %v", err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Error(err)
		}
	})
	return url
}

// WithDatabase is conn with its database replaced (pgstore.WithDatabase).
func WithDatabase(conn, name string) string { return pgstore.WithDatabase(conn, name) }

// Connect is a connection to the database at url, as a person with psql
// would open one, closed when the test ends.
func Connect(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}
