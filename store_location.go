package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"

	"retrace/storage"
	"retrace/storage/boltstore"
	"retrace/storage/pgstore"
)

// The database a command works on is, first found: --db, $RETRACE_DB,
// the config file's `database`, the default file. Each names a bbolt file
// by its path or a PostgreSQL database by a postgres:// URL; every
// command that reads or writes sessions works the same on both.

// isDatabaseURL reports whether loc names a PostgreSQL database rather
// than a file.
func isDatabaseURL(loc string) bool {
	return strings.HasPrefix(loc, "postgres://") || strings.HasPrefix(loc, "postgresql://")
}

// dbLocation is the database the command line names.
func (c *cli) dbLocation() (string, error) {
	if c.db != "" {
		return checkLocation(c.db, "--db")
	}
	if loc := os.Getenv("RETRACE_DB"); loc != "" {
		return checkLocation(loc, "RETRACE_DB")
	}
	path := defaultConfigPath(os.Getenv)
	loc, err := configDatabase(path)
	if err != nil {
		return "", err
	}
	if loc != "" {
		return checkLocation(loc, "the config's database ("+path+")")
	}
	return storage.DefaultPath()
}

// checkLocation refuses a URL of a kind retrace does not keep sessions
// in: taken for a path, "postgress://host/db" would make a directory
// "postgress:" and a new, empty database in it.
func checkLocation(loc, from string) (string, error) {
	if scheme, _, ok := strings.Cut(loc, "://"); ok && !isDatabaseURL(loc) && !strings.ContainsAny(scheme, "/.") {
		return "", usagef("%s names a %s:// URL; retrace keeps sessions in a file (a path) or in PostgreSQL (postgres://...)", from, scheme)
	}
	return loc, nil
}

// configDatabase reads the database setting of the config file at path:
// "" when there is no file or no setting.
func configDatabase(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	var fc struct {
		Database string `toml:"database"`
	}
	_, err := toml.DecodeFile(path, &fc)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("config %s: %s", path, oneLine(err.Error()))
	}
	return fc.Database, nil
}

// denyDatabase closes the database file to confined commands: it holds
// every session, and what a command prints goes to a model. Its default
// place is among the sandbox's secret places already; --db, RETRACE_DB
// and the config's database may name any.
func (c *cli) denyDatabase(cfg *config) {
	loc, err := c.dbLocation()
	if err != nil || isDatabaseURL(loc) {
		return
	}
	if abs, err := filepath.Abs(loc); err == nil {
		cfg.Reach.Deny = append(cfg.Reach.Deny, abs)
	}
}

// openStore opens the database the command line names.
func (c *cli) openStore(ctx context.Context) (storage.Store, error) {
	loc, err := c.dbLocation()
	if err != nil {
		return nil, err
	}
	return openLocation(ctx, loc)
}

// openLocation opens the database loc names: a file, or a postgres:// URL.
func openLocation(ctx context.Context, loc string) (storage.Store, error) {
	if isDatabaseURL(loc) {
		return pgstore.Open(ctx, loc, pgstore.Options{})
	}
	return boltstore.Open(loc, boltstore.Options{})
}

// locationName is loc as messages may show it: a URL without its password.
func locationName(loc string) string {
	if isDatabaseURL(loc) {
		return pgstore.Redact(loc)
	}
	return loc
}

// dbFile is the database file the command line names, for a command
// that works on the file itself (recover): a PostgreSQL database is
// refused, named without its password.
func (c *cli) dbFile(command string) (string, error) {
	loc, err := c.dbLocation()
	if err != nil {
		return "", err
	}
	if isDatabaseURL(loc) {
		return "", fmt.Errorf("%s works on a database file, and %s is a PostgreSQL database: PostgreSQL's own backups are what restores it", command, pgstore.Redact(loc))
	}
	return loc, nil
}

// storeName names where a store keeps its sessions, never with a password.
func storeName(st storage.Store) string {
	switch s := st.(type) {
	case *boltstore.Store:
		return s.Path()
	case *pgstore.Store:
		return s.String()
	}
	return "the database"
}
