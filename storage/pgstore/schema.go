package pgstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"retrace/storage"
)

// The schema's migrations are SQL files in the binary, migrations/NNNN_*.sql:
// file N brings the database from schema N-1 to N. retrace_schema holds
// the one number; a database without it is schema 0 (nothing of ours).
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// schemaLockKey is the advisory lock that keeps two processes from
// migrating at once: the second waits, then finds the work done.
const schemaLockKey int64 = 0x7265747261636501 // "retrac" e, 1

type migration struct {
	version int
	name    string
	sql     string
}

// migrations reads the embedded files, in order, and checks they number
// 1, 2, 3... with no gap.
var migrations = func() []migration {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		panic(err)
	}
	slices.Sort(names)
	var out []migration
	for i, name := range names {
		base := path.Base(name)
		n, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil || n != i+1 {
			panic(fmt.Sprintf("pgstore: migration %s is not number %d", base, i+1))
		}
		b, err := migrationFiles.ReadFile(name)
		if err != nil {
			panic(err)
		}
		out = append(out, migration{version: n, name: base, sql: string(b)})
	}
	return out
}()

// schemaVersion is the schema this build writes: its last migration.
var schemaVersion = len(migrations)

// migrate brings the database to schemaVersion in one transaction, under
// an advisory transaction lock, and refuses a newer one.
func (s *Store) migrate(ctx context.Context) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", schemaLockKey); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS retrace_schema (version integer NOT NULL)"); err != nil {
			return err
		}
		rows, _ := tx.Query(ctx, "SELECT version FROM retrace_schema")
		versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
		if err != nil {
			return err
		}
		from := 0
		switch len(versions) {
		case 0:
			if _, err := tx.Exec(ctx, "INSERT INTO retrace_schema (version) VALUES (0)"); err != nil {
				return err
			}
		case 1:
			from = versions[0]
		default:
			return &storage.CorruptError{Path: s.where, Reason: fmt.Sprintf("retrace_schema holds %d rows, not one", len(versions))}
		}
		if from > schemaVersion {
			return s.tooNew(from)
		}
		for _, m := range migrations[from:] {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migrate schema %d to %d (%s): %w", m.version-1, m.version, m.name, err)
			}
		}
		if from < schemaVersion {
			_, err = tx.Exec(ctx, "UPDATE retrace_schema SET version = $1", schemaVersion)
		}
		return err
	})
	if errors.Is(err, storage.ErrTooNew) || errors.Is(err, storage.ErrCorrupt) {
		return err
	}
	if err != nil {
		return s.errorf("open database %s: %w", s.where, err)
	}
	return nil
}

func (s *Store) tooNew(schema int) error {
	return fmt.Errorf("%s: %w (schema %d; this retrace reads up to %d): upgrade retrace", s.where, storage.ErrTooNew, schema, schemaVersion)
}

// checkSchema is for the schema number every write reads in its
// transaction: a newer retrace may have migrated the database since Open,
// and rows written without knowing its schema could lose what it keeps.
func (s *Store) checkSchema(schema int) error {
	if schema != schemaVersion {
		if schema > schemaVersion {
			return s.tooNew(schema)
		}
		return &storage.CorruptError{Path: s.where, Reason: fmt.Sprintf("the schema went back to %d since it was read as %d", schema, schemaVersion)}
	}
	return nil
}
