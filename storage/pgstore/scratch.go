package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Scratch makes a new, empty database on the server conn names, for a
// benchmark or a test that must not touch the sessions kept there, and
// returns its connection string and how to drop it. Its name is
// retrace_<purpose>_ and random hex digits. The role conn logs in as
// needs the CREATEDB privilege.
func Scratch(ctx context.Context, conn, purpose string) (string, func() error, error) {
	secret := passwordIn(conn)
	where := Redact(conn)
	admin, err := pgx.Connect(ctx, conn)
	if err != nil {
		return "", nil, scrub(fmt.Errorf("connect to %s: %w", where, err), secret)
	}
	defer admin.Close(ctx)
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "retrace_" + purpose + "_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, scrub(fmt.Errorf("create a scratch database on %s: %w", where, err), secret)
	}
	drop := func() error {
		admin, err := pgx.Connect(context.Background(), conn)
		if err != nil {
			return scrub(fmt.Errorf("drop database %s on %s: %w", name, where, err), secret)
		}
		defer admin.Close(context.Background())
		if _, err := admin.Exec(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			return scrub(fmt.Errorf("drop database %s on %s: %w", name, where, err), secret)
		}
		return nil
	}
	return WithDatabase(conn, name), drop, nil
}

// WithDatabase is conn (a URL or key=value settings) naming database
// name instead of its own.
func WithDatabase(conn, name string) string {
	if u, err := url.Parse(conn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.Path = "/" + name
		q := u.Query()
		q.Del("dbname")
		u.RawQuery = q.Encode()
		return u.String()
	}
	return strings.TrimSpace(conn) + " dbname=" + name
}

// Size is the bytes the store's tables take on the server, their
// indexes and out-of-line values included: what the sessions cost, not
// the few megabytes an empty database takes already.
func (s *Store) Size(ctx context.Context) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind = 'r' AND c.relname LIKE 'retrace\_%' AND n.nspname = current_schema()`).Scan(&n)
	return n, s.wrap(err, "measure the size of the database", "")
}
