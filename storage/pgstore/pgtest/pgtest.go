// Package pgtest gives tests a PostgreSQL database of their own, on the
// server RETRACE_PG_URL names (.ci/postgres starts a private one), or
// skips them with one line saying how to run them.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
	base := ServerURL(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to the test server: %v", err)
	}
	defer admin.Close(ctx)
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "retrace_test_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		admin, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop database %s: %v", name, err)
			return
		}
		defer admin.Close(ctx)
		if _, err := admin.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	return WithDatabase(base, name)
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
