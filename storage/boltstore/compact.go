package boltstore

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"

	"retrace/storage"
)

// CompactReport is storage.CompactReport.
type CompactReport = storage.CompactReport

// compactStep, when set (by tests), runs before each step of Compact
// ("copy", "sync", "check", "rename") and stops it there when it returns
// an error, as a crash at that point would.
var compactStep func(step string) error

// compactTxSize bounds what one transaction of the copy holds in memory.
const compactTxSize = 64 << 20

// Compact rewrites the database into a new file holding exactly what the
// old one does, without its free pages, and puts it in the old one's
// place. The new file is written beside the old one, synced and checked
// whole (bbolt's check, every record, and the same keys and values as the
// old file) before a rename puts it in place, all under the file's
// exclusive lock: a crash at any point leaves the old file or the new one,
// whole. It refuses, naming the holder, while another process holds any
// session, and holds every session itself meanwhile so no one starts
// writing one.
func (s *Store) Compact(ctx context.Context) (CompactReport, error) {
	var rep CompactReport
	s.fileMu.Lock()
	defer s.fileMu.Unlock()
	if s.closed {
		return rep, errClosed
	}
	if _, err := os.Stat(s.path); err != nil {
		return rep, fmt.Errorf("compact %s: %w", s.path, err)
	}
	lock, err := s.lockDB(ctx, true, true)
	if err != nil {
		return rep, fmt.Errorf("compact %s: %w", s.path, err)
	}
	defer lock.Close()
	s.walked = false
	if err := s.walkPages(); err != nil {
		return rep, err
	}
	if !s.schemaOK {
		if err := s.checkSchema(); err != nil {
			return rep, err
		}
	}
	// Sessions are listed under the lock: none can be made meanwhile.
	var ids []string
	if err := s.open(true, func(db *bolt.DB) error {
		return db.View(s.laidOut(func(tx *bolt.Tx) error {
			list, err := s.allSessions(tx, nil)
			for _, info := range list {
				ids = append(ids, info.ID)
			}
			return err
		}))
	}); err != nil {
		return rep, err
	}
	claimed, _, err := s.claimEvery(ctx, ids, false)
	if err != nil {
		return rep, fmt.Errorf("compact refused: %w; compact when no other retrace has a session open", err)
	}
	defer s.releaseAll(claimed)

	fi, err := os.Stat(s.path)
	if err != nil {
		return rep, err
	}
	rep.Before = fi.Size()
	if rep.Copy, err = s.rewrite(ctx, rep.Before); err != nil {
		return rep, fmt.Errorf("compact %s (the file is as it was): %w", s.path, err)
	}
	if rep.Kept = rep.Copy >= rep.Before; rep.Kept {
		rep.After = rep.Before
		return rep, nil
	}
	if fi, err = os.Stat(s.path); err != nil {
		return rep, err
	}
	rep.After = fi.Size()
	return rep, nil
}

// claimEvery claims each session this store does not hold yet, and
// returns those it claimed, to give back. A session another process
// holds is its *storage.BusyError, and nothing stays claimed; with
// skipBusy it is in held, with the holder's pid, and the rest go on.
func (s *Store) claimEvery(ctx context.Context, ids []string, skipBusy bool) (claimed []string, held map[string]int, err error) {
	held = map[string]int{}
	for _, id := range ids {
		s.claimMu.Lock()
		_, ours := s.claims[id]
		s.claimMu.Unlock()
		if ours {
			continue
		}
		err := s.autoClaim(ctx, id)
		var be *storage.BusyError
		switch {
		case skipBusy && errors.As(err, &be):
			held[id] = be.PID
		case err != nil:
			s.releaseAll(claimed)
			return nil, nil, err
		default:
			claimed = append(claimed, id)
		}
	}
	return claimed, held, nil
}

// rewrite does Compact's work under its lock and claims: check the old
// file, copy, sync, check the copy, rename. Until the rename the old file
// is untouched; whatever stops it before, the copy is removed. A copy of
// before bytes or more is removed at once and the old file stays: a
// compaction that made the file larger would give back less than
// nothing. It returns the copy's size.
func (s *Store) rewrite(ctx context.Context, before int64) (size int64, err error) {
	// A copy is never rewritten from damage: what the check finds is
	// left for `retrace recover`.
	var want []byte
	if err := s.open(true, func(db *bolt.DB) error {
		return db.View(s.laidOut(func(tx *bolt.Tx) error {
			if err := s.checkAll(tx, true); err != nil {
				return err
			}
			want = contentSum(tx)
			return nil
		}))
	}); err != nil {
		return 0, err
	}
	dir := filepath.Dir(s.path)
	// Copies a killed compaction left behind: only Compact makes them,
	// and it holds the lock.
	stale, _ := filepath.Glob(filepath.Join(dir, filepath.Base(s.path)+".compact-*"))
	for _, p := range stale {
		os.Remove(p)
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(s.path)+".compact-*")
	if err != nil {
		return 0, err
	}
	tmpPath := tmp.Name()
	tmp.Close()
	renamed := false
	defer func() {
		if !renamed {
			os.Remove(tmpPath)
		}
	}()

	if err := compactStepAt(ctx, "copy"); err != nil {
		return 0, err
	}
	if size, err = s.copyInto(tmpPath); err != nil || size >= before {
		return size, err
	}
	if err := compactStepAt(ctx, "sync"); err != nil {
		return size, err
	}
	if err := syncFile(tmpPath); err != nil {
		return size, fmt.Errorf("sync %s: %w", tmpPath, err)
	}
	if err := compactStepAt(ctx, "check"); err != nil {
		return size, err
	}
	if err := checkCopy(tmpPath, s.opts, want); err != nil {
		return size, err
	}
	if err := compactStepAt(ctx, "rename"); err != nil {
		return size, err
	}
	if err := os.Rename(tmpPath, s.path); err != nil {
		return size, err
	}
	renamed = true
	return size, syncDir(dir)
}

// compactStepAt is where Compact may stop before a step: when ctx is
// done, or where a test stops it (compactStep).
func compactStepAt(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if compactStep != nil {
		return compactStep(name)
	}
	return nil
}

// copyInto copies the file into the empty database file at path, without
// its free pages, and returns the copy's size.
func (s *Store) copyInto(path string) (int64, error) {
	err := s.open(true, func(src *bolt.DB) error {
		dst, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: boltTimeout})
		if err != nil {
			return fmt.Errorf("open the new file: %w", err)
		}
		// bbolt grows a file past the page it needs, by 16 MiB (or to
		// its mapping's power of two while that is smaller), so that
		// later writes need not grow it each time. A copy is written
		// once, and that room made it larger than a file with fewer free
		// pages than the room. Grown a page at a time, it ends at its
		// last page.
		dst.AllocSize = 0
		err = bolt.Compact(dst, src, compactTxSize)
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("copy into %s: %w", path, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// checkCopy checks the new file as Verify does, and that it holds the
// same keys and values as the old one (want, from contentSum).
func checkCopy(path string, opts Options, want []byte) error {
	c := &Store{path: path, opts: opts}
	if err := c.walkPages(); err != nil {
		return fmt.Errorf("the new file %s fails its check: %w", path, err)
	}
	return c.open(true, func(db *bolt.DB) error {
		return db.View(c.laidOut(func(tx *bolt.Tx) error {
			if err := c.checkAll(tx, true); err != nil {
				return fmt.Errorf("the new file fails its check: %w", err)
			}
			if got := contentSum(tx); string(got) != string(want) {
				return &storage.CorruptError{Path: path, Reason: "the new file does not hold what the old one does"}
			}
			return nil
		}))
	})
}

// contentSum hashes every bucket, key and value in the file, in order,
// with their lengths, so two files with the same sum hold the same data.
func contentSum(tx *bolt.Tx) []byte {
	h := sha256.New()
	_ = tx.ForEach(func(name []byte, b *bolt.Bucket) error {
		sumBucket(h, name, b)
		return nil
	})
	return h.Sum(nil)
}

func sumBucket(h hash.Hash, name []byte, b *bolt.Bucket) {
	put := func(tag byte, p []byte) {
		h.Write([]byte{tag})
		h.Write(binary.AppendUvarint(nil, uint64(len(p))))
		h.Write(p)
	}
	put('b', name)
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v == nil {
			if nb := b.Bucket(k); nb != nil {
				sumBucket(h, k, nb)
				continue
			}
		}
		put('k', k)
		put('v', v)
	}
	put('e', nil)
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
