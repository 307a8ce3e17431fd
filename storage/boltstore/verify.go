package boltstore

import (
	"context"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"retrace/storage"
)

// Verify checks a whole database file: bbolt's own consistency check of its
// pages, then every record retrace stored (checksum, decoding, parent
// links, and each session's count and head). It reads only; the file is
// never changed. It returns nil for a missing file, and the first problem
// found otherwise.
func Verify(ctx context.Context, path string) error {
	s, err := Open(path, Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	err = s.view(ctx, func(tx *bolt.Tx) error { return s.checkAll(tx, true) })
	if errors.Is(err, errNoFile) {
		return nil
	}
	return err
}

// checkAll checks the file's structure (checkStructure), then every
// record's checksum, header and parent link, and each session's count.
// With events set it also decodes every event.
func (s *Store) checkAll(tx *bolt.Tx, events bool) error {
	if err := s.checkStructure(tx); err != nil {
		return err
	}
	sessions, err := s.sessionsOf(tx)
	if err != nil {
		return err
	}
	var problems []error
	c := sessions.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v != nil {
			problems = append(problems, &storage.CorruptError{Path: s.path, Reason: fmt.Sprintf("stray key %q among the sessions", k)})
			continue
		}
		if err := s.verifySession(tx, k, events); err != nil {
			problems = append(problems, err)
		}
	}
	if len(problems) > 0 {
		// The first problem, in one line; the rest are usually its echoes.
		return problems[0]
	}
	return nil
}

func (s *Store) verifySession(tx *bolt.Tx, k []byte, events bool) error {
	b, rec, err := s.listedSession(tx, k)
	if err != nil {
		return err
	}
	id := string(k)
	n := 0
	err = s.eachCheckpoint(b.Bucket(versionsBucket), id, func(v int, _ header, raw []byte) error {
		n++
		if v != n {
			return &storage.CorruptError{Path: s.path, Session: id, Version: n, Reason: "the version is missing"}
		}
		if !events {
			return nil
		}
		if _, _, err := decodeCheckpoint(raw); err != nil {
			return &storage.CorruptError{Path: s.path, Session: id, Version: v, Reason: err.Error()}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if n != rec.Versions {
		return &storage.CorruptError{Path: s.path, Session: id, Reason: fmt.Sprintf("it records %d versions but holds %d", rec.Versions, n)}
	}
	return nil
}

// checkStructure checks the file as bbolt sees it, before anything of
// retrace's: our walk of every page, then bbolt's own check. tx.Check
// follows every pointer in the file from a goroutine of its own, where a
// fault cannot be recovered, so the walk comes first and the check runs
// only if it passed. It returns the first problem, in one line; the rest
// are usually its echoes.
func (s *Store) checkStructure(tx *bolt.Tx) error {
	if err := s.walkPages(); err != nil {
		return err
	}
	var first error
	for err := range tx.Check() {
		if first == nil {
			first = &storage.CorruptError{Path: s.path, Reason: "bbolt check: " + err.Error()}
		}
	}
	return first
}
