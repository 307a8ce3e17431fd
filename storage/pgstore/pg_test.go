package pgstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"retrace/storage"
	"retrace/storage/pgstore"
)

const skipHow = "set RETRACE_PG_URL to run the PostgreSQL tests, e.g. export $(.ci/postgres start) — see .ci/postgres"

// serverURL is the server the tests run against, or a skip.
func serverURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("RETRACE_PG_URL")
	if u == "" {
		t.Skip(skipHow)
	}
	return u
}

// newDatabase makes a fresh, empty database on the test server, dropped
// when the test ends, and returns its URL: each location of the suite is
// a database of its own, as isolated as bbolt's temp files are (advisory
// locks are per database too).
func newDatabase(t *testing.T) string {
	t.Helper()
	base := serverURL(t)
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
	return withDatabase(t, base, name)
}

// withDatabase is conn with its database replaced.
func withDatabase(t *testing.T, conn, name string) string {
	t.Helper()
	if u, err := url.Parse(conn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.Path = "/" + name
		q := u.Query()
		q.Del("dbname")
		u.RawQuery = q.Encode()
		return u.String()
	}
	return strings.TrimSpace(conn) + " dbname=" + name
}

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
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func connect(t *testing.T, loc string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), loc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}
