package boltstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"retrace/storage"
)

// errNoFile: a read found no database file. Readers treat it as "no
// sessions yet"; nothing is created for a read.
var errNoFile = errors.New("no database file")

var errClosed = errors.New("store is closed")

// boltTimeout bounds bbolt's own wait for its file lock. Our "db" lock is
// taken first, so bbolt waits only when a program other than retrace (the
// bbolt CLI, say) has the file open.
const boltTimeout = time.Second

// view runs fn in a read-only transaction, once the file's layout is
// checked, and the whole file walked.
func (s *Store) view(ctx context.Context, fn func(*bolt.Tx) error) error {
	return s.viewIn(ctx, wholeFile, fn)
}

// viewIn is view for an operation that reads only what sc says.
func (s *Store) viewIn(ctx context.Context, sc scope, fn func(*bolt.Tx) error) error {
	return s.withFile(ctx, false, sc, func(db *bolt.DB) error { return db.View(s.laidOut(fn)) })
}

// laidOut is fn, run only if the transaction's file has retrace's layout
// (see checkLayout).
func (s *Store) laidOut(fn func(*bolt.Tx) error) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		if err := s.checkLayout(tx); err != nil {
			return err
		}
		return fn(tx)
	}
}

// viewSession is view for operations on one session, and its versions
// when they read them: with no database file, the session does not exist.
func (s *Store) viewSession(ctx context.Context, id string, versions bool, fn func(*bolt.Tx) error) error {
	err := s.viewIn(ctx, sessionScope(id, versions), fn)
	if errors.Is(err, errNoFile) {
		return &storage.NotFoundError{ID: id, Where: s.path}
	}
	return err
}

// update runs fn in a read-write transaction, committed (and fsynced)
// before update returns, once the whole file is walked.
func (s *Store) update(ctx context.Context, fn func(*bolt.Tx) error) error {
	return s.updateIn(ctx, wholeFile, fn)
}

// updateIn is update for an operation that reads and writes only what sc
// says.
func (s *Store) updateIn(ctx context.Context, sc scope, fn func(*bolt.Tx) error) error {
	return s.withFile(ctx, true, sc, func(db *bolt.DB) error { return db.Update(s.laidOut(fn)) })
}

// withFile opens the database for one operation: lock, check, open, run,
// close. Writers create the file if it is missing.
func (s *Store) withFile(ctx context.Context, write bool, sc scope, fn func(*bolt.DB) error) error {
	s.fileMu.Lock()
	defer s.fileMu.Unlock()
	if s.closed {
		return errClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// A read of a file that does not exist finds nothing and leaves
	// nothing behind: no lock directory beside a mistyped --db path.
	if _, err := os.Stat(s.path); !write && isNotExist(err) {
		return errNoFile
	}
	// The first operation of a Store may have to migrate the file, so it
	// locks exclusively even to read.
	lock, err := s.lockDB(ctx, write || !s.schemaOK, write)
	if err != nil {
		return err
	}
	if lock != nil {
		defer lock.Close()
	}

	if _, err := os.Stat(s.path); isNotExist(err) {
		if !write {
			return errNoFile
		}
		if err := s.create(); err != nil {
			return err
		}
	}
	s.walked = false // the file may have changed since the last operation
	// bbolt reads no page before a walk of ours has checked it: the scope's
	// pages, which always include the root and the schema.
	err = s.walkScope(sc, write)
	defer func() {
		s.reach.close()
		s.reach = nil
	}()
	if err != nil {
		s.noteDamage(err)
		return err
	}
	if !s.schemaOK {
		if err := s.checkSchema(); err != nil {
			return err
		}
	}
	if write {
		if err := s.checkBeforeWrite(); err != nil {
			return err
		}
	}
	err = s.open(!write, fn)
	s.noteDamage(err)
	return err
}

// walkPages runs checkPages (which starts with checkFile) at most once per
// operation: the first operation of a Store, its migration and its full
// check before the first write all want the walk, and under one lock the
// file cannot change between them.
func (s *Store) walkPages() error {
	if s.walked {
		return nil
	}
	if err := checkPages(s.path); err != nil {
		return err
	}
	s.walked = true
	return nil
}

// lockDB takes the database lock, shared or exclusive. A reader that cannot
// create the lock (a database on a read-only disk) goes on without it
// (required false); bbolt's own shared lock still keeps writers out while it
// reads.
func (s *Store) lockDB(ctx context.Context, exclusive, required bool) (*os.File, error) {
	// The lock directory sits beside the database: a writer makes their
	// directory first, durably, or the lock directory would make it
	// without the sync its name needs.
	if required {
		if err := makeDir(filepath.Dir(s.path)); err != nil {
			return nil, fmt.Errorf("cannot create the directory of %s: %w", s.path, err)
		}
	}
	if err := os.MkdirAll(s.locks, 0o700); err != nil {
		if !required {
			return nil, nil
		}
		return nil, fmt.Errorf("cannot write beside the database %s: %w", s.path, err)
	}
	// One deadline for both locks: the wait a caller sees is LockTimeout.
	deadline := time.Now().Add(s.opts.LockTimeout)
	gate, err := lockFile(ctx, filepath.Join(s.locks, gateLockName), true, s.opts.LockTimeout)
	if err != nil {
		if !required && (errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EROFS)) {
			return nil, nil
		}
		return nil, err
	}
	defer gate.Close()
	return lockFile(ctx, filepath.Join(s.locks, dbLockName), exclusive, max(time.Until(deadline), time.Millisecond))
}

// open runs fn with the file opened by bbolt, turning bbolt's panics, and
// faults from reading a mapping past the end of a damaged file, into an
// error that names the file.
func (s *Store) open(readOnly bool, fn func(*bolt.DB) error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = &storage.CorruptError{Path: s.path, Reason: fmt.Sprintf("the database is damaged (bbolt: %v)", r)}
		}
	}()
	db, err := bolt.Open(s.path, 0o600, &bolt.Options{Timeout: boltTimeout, ReadOnly: readOnly})
	if err != nil {
		return s.boltError(err)
	}
	defer db.Close()
	return fn(db)
}

func (s *Store) boltError(err error) error {
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return fmt.Errorf("%w: %s is held open by another program", storage.ErrLocked, s.path)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrVersionMismatch):
		return fmt.Errorf("%s: %w", s.path, storage.ErrNotDatabase)
	case errors.Is(err, berrors.ErrChecksum):
		return &storage.CorruptError{Path: s.path, Reason: "both meta pages fail their checksum"}
	}
	return fmt.Errorf("open database %s: %w", s.path, err)
}

// checkSchema reads the file's schema once per Store and migrates an old
// one. The caller holds the exclusive lock when it can.
func (s *Store) checkSchema() error {
	var schema int
	err := s.open(true, func(db *bolt.DB) error {
		return db.View(func(tx *bolt.Tx) (err error) {
			schema, err = readSchema(tx, s.path)
			return err
		})
	})
	if err != nil {
		return err
	}
	switch {
	case schema > schemaVersion:
		return tooNew(s.path, schema)
	case schema < schemaVersion:
		// A migration writes: check the file first, as before any write.
		// An old file holds no records of ours to check, but bbolt's
		// structure must be sound (a damaged file can pass for an empty
		// one, schema 0, when its root points to an empty page).
		if err := s.open(true, func(db *bolt.DB) error { return db.View(s.checkStructure) }); err != nil {
			return err
		}
		if err := s.open(false, func(db *bolt.DB) error {
			return db.Update(func(tx *bolt.Tx) error { return migrate(tx, schema) })
		}); err != nil {
			return fmt.Errorf("upgrade %s to schema %d: %w", s.path, schemaVersion, err)
		}
		// The migration walked and checked the whole file first, and
		// wrote only pages of its own.
		s.walked, s.wholeWalked = false, true
		s.reach.close()
		s.reach = nil
	}
	s.schemaOK = true
	return nil
}

// create makes a new database file atomically: it is initialized under a
// temporary name, synced, and only then linked into place, so a crash
// never leaves a half-made file at the real path (bbolt's README warns a
// crash during first creation can corrupt a file). Link, unlike rename,
// fails if another process won the race; its file is then used.
func (s *Store) create() error {
	dir := filepath.Dir(s.path)
	if err := makeDir(dir); err != nil {
		return fmt.Errorf("cannot create database %s: %w", s.path, err)
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(s.path)+".new-*")
	if err != nil {
		return fmt.Errorf("cannot create database %s: %w", s.path, err)
	}
	tmpPath := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpPath)

	db, err := bolt.Open(tmpPath, 0o600, &bolt.Options{Timeout: boltTimeout})
	if err != nil {
		return fmt.Errorf("cannot create database %s: %w", s.path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if err := migrations[0](tx); err != nil {
			return err
		}
		return migrate(tx, 1)
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot create database %s: %w", s.path, err)
	}
	if err := os.Link(tmpPath, s.path); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("cannot create database %s: %w", s.path, err)
	}
	return syncDir(dir)
}

// makeDir makes dir and its missing parents, and syncs the directory
// holding each one it made: a new directory's name is on disk only once
// its parent is synced, and without it a power cut takes the database
// file away with the directory.
func makeDir(dir string) error {
	var made []string
	for d := dir; filepath.Dir(d) != d; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		made = append(made, d)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for i := len(made) - 1; i >= 0; i-- {
		if err := syncDir(filepath.Dir(made[i])); err != nil {
			return err
		}
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
