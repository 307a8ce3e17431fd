package boltstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"retrace/storage"
)

// Space comes back only through GC and Compact, and only when a person
// runs them: nothing else in retrace removes a version or a file content.
// GC removes records inside the file, whose pages bbolt then reuses;
// Compact rewrites the file to give the free pages back to the disk.

// GC's options and report are storage's, shared with every backend.
type (
	GCOptions   = storage.GCOptions
	GCReport    = storage.GCReport
	GoneSession = storage.GoneSession
	GoneBranch  = storage.GoneBranch
	Skipped     = storage.Skipped
)

// gcPlan is what one pass over the file decided, by key.
type gcPlan struct {
	sessions []string         // removed whole
	prune    map[string][]int // session -> versions removed
	blobs    [][]byte         // keys of contents nothing refers to
}

func (p gcPlan) touched() []string {
	out := slices.Clone(p.sessions)
	for id := range p.prune {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// GC removes what opts names and the file contents nothing refers to any
// more, in one transaction, and reports it. A session another process
// holds is skipped and named. With DryRun nothing is written.
func (s *Store) GC(ctx context.Context, opts GCOptions) (GCReport, error) {
	if opts.OlderThan < 0 || (opts.OlderThan == 0 && !opts.Branches) {
		return GCReport{}, errors.New("gc: say what to remove: sessions older than an age, abandoned branches, or both")
	}
	now := s.opts.Now()
	var firstRep GCReport
	var first gcPlan
	err := s.view(ctx, func(tx *bolt.Tx) (err error) {
		firstRep, first, err = s.planGC(tx, opts, now, nil)
		return err
	})
	if errors.Is(err, errNoFile) {
		return GCReport{DryRun: opts.DryRun}, nil
	}
	if err != nil {
		return GCReport{}, fmt.Errorf("gc %s: %w", s.path, err)
	}
	if opts.DryRun {
		held := map[string]int{}
		for _, id := range first.touched() {
			if pid, busy := s.Holder(id); busy {
				held[id] = pid
			}
		}
		rep := firstRep
		if len(held) > 0 { // what is held stays: plan again without it
			err = s.view(ctx, func(tx *bolt.Tx) (err error) {
				rep, _, err = s.planGC(tx, opts, now, held)
				return err
			})
		}
		rep.DryRun = true
		return rep, err
	}
	claimed, held, err := s.claimEvery(ctx, first.touched(), true)
	if err != nil {
		return GCReport{}, err
	}
	rep, done, err := s.applyGC(ctx, opts, now, held)
	for _, id := range claimed {
		if slices.Contains(done.sessions, id) {
			s.dropClaim(id)
		} else {
			_ = s.Release(id)
		}
	}
	return rep, err
}

func (s *Store) releaseAll(ids []string) {
	for _, id := range ids {
		_ = s.Release(id)
	}
}

// applyGC plans again under the write lock (the file may have changed
// since the first look) and removes what the plan says, in one
// transaction.
func (s *Store) applyGC(ctx context.Context, opts GCOptions, now time.Time, held map[string]int) (GCReport, gcPlan, error) {
	var rep GCReport
	var p gcPlan
	err := s.withFile(ctx, true, wholeFile, func(db *bolt.DB) error {
		err := db.Update(s.laidOut(func(tx *bolt.Tx) (err error) {
			if rep, p, err = s.planGC(tx, opts, now, held); err != nil {
				return err
			}
			return s.removePlan(tx, p)
		}))
		if err != nil {
			return err
		}
		st := db.Stats()
		rep.FreeBytes = int64(st.FreePageN+st.PendingPageN) * int64(db.Info().PageSize)
		return nil
	})
	if err != nil {
		return GCReport{}, gcPlan{}, fmt.Errorf("gc %s: %w", s.path, err)
	}
	return rep, p, nil
}

// removePlan deletes what p names.
func (s *Store) removePlan(tx *bolt.Tx, p gcPlan) error {
	sessions, err := s.sessionsOf(tx)
	if err != nil {
		return err
	}
	for _, id := range p.sessions {
		if err := sessions.DeleteBucket([]byte(id)); err != nil {
			return fmt.Errorf("remove session %s: %w", id, err)
		}
	}
	for id, vs := range p.prune {
		b, rec, err := s.session(tx, id)
		if err != nil {
			return err
		}
		vb, sb := b.Bucket(versionsBucket), b.Bucket(snapshotsBucket)
		for _, v := range vs {
			if err := vb.Delete(versionKey(v)); err != nil {
				return fmt.Errorf("remove session %s version %d: %w", id, v, err)
			}
			if sb == nil {
				continue
			}
			if err := sb.Delete(versionKey(v)); err != nil {
				return fmt.Errorf("remove session %s version %d's snapshot: %w", id, v, err)
			}
		}
		// The head, its time and its phase stay: the session's
		// conversation did not move on.
		rec.Removed = storage.WithRemoved(rec.Removed, vs)
		if err := putInfo(b, rec); err != nil {
			return err
		}
	}
	blobs, err := s.blobsOf(tx)
	if err != nil {
		return err
	}
	chunks, err := s.chunksOf(tx)
	if err != nil {
		return err
	}
	for _, k := range p.blobs {
		if err := blobs.Delete(k); err != nil {
			return fmt.Errorf("remove file content %s: %w", keyDigest(k), err)
		}
		if err := dropChunks(chunks, k); err != nil {
			return fmt.Errorf("remove file content %s's chunks: %w", keyDigest(k), err)
		}
	}
	return nil
}

// planGC decides, reading tx only, what GC removes: sessions by age,
// abandoned versions, and the contents only those referred to. Sessions
// in held are left whole and reported as skipped.
func (s *Store) planGC(tx *bolt.Tx, opts GCOptions, now time.Time, held map[string]int) (GCReport, gcPlan, error) {
	rep := GCReport{DryRun: opts.DryRun}
	p := gcPlan{prune: map[string][]int{}}
	sessions, err := s.sessionsOf(tx)
	if err != nil {
		return rep, p, err
	}
	refs := map[string]bool{} // digests kept versions refer to
	for id := range opts.Keep {
		if sessions.Bucket([]byte(id)) == nil {
			return rep, p, &storage.NotFoundError{ID: id, Where: s.path}
		}
	}
	c := sessions.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v != nil {
			return rep, p, &storage.CorruptError{Path: s.path, Reason: fmt.Sprintf("stray key %q among the sessions", k)}
		}
		b, rec, err := s.listedSession(tx, k)
		if err != nil {
			return rep, p, err
		}
		id := string(k)
		info := rec.info(id)
		old := opts.OlderThan > 0 && now.Sub(rec.UpdatedAt) >= opts.OlderThan
		pid, isHeld := held[id]
		var gone map[int]bool
		switch {
		case old && !isHeld:
			p.sessions = append(p.sessions, id)
			n := bucketBytes(b)
			rep.Sessions = append(rep.Sessions, GoneSession{SessionInfo: info, Bytes: n})
			rep.Bytes += n
			continue
		case opts.Branches && !isHeld:
			branches, versions, err := s.abandoned(b, rec, id, opts.Keep[id])
			if err != nil {
				return rep, p, err
			}
			if len(versions) > 0 {
				p.prune[id] = versions
				gone = make(map[int]bool, len(versions))
				for _, v := range versions {
					gone[v] = true
				}
			}
			for _, gb := range branches {
				rep.Branches = append(rep.Branches, gb)
				rep.Bytes += gb.Bytes
			}
		case isHeld && (old || opts.Branches):
			rep.Skipped = append(rep.Skipped, Skipped{SessionInfo: info, PID: pid})
		}
		if err := s.collectRefs(b.Bucket(versionsBucket), id, gone, refs); err != nil {
			return rep, p, err
		}
	}
	// An import writes its batches' contents before its versions are
	// published: what a staged import refers to is in use too.
	if staged := tx.Bucket(importingBucket); staged != nil {
		err := staged.ForEachBucket(func(k []byte) error {
			if vb := staged.Bucket(k).Bucket(versionsBucket); vb != nil {
				return s.collectRefs(vb, string(k), nil, refs)
			}
			return nil
		})
		if err != nil {
			return rep, p, err
		}
	}
	blobs, err := s.blobsOf(tx)
	if err != nil {
		return rep, p, err
	}
	chunks, err := s.chunksOf(tx)
	if err != nil {
		return rep, p, err
	}
	bc := blobs.Cursor()
	for k, v := bc.First(); k != nil; k, v = bc.Next() {
		if !refs[keyDigest(k)] {
			p.blobs = append(p.blobs, bytes.Clone(k))
			rep.Blobs++
			rep.BlobBytes += int64(len(k) + len(v))
			if cb := chunks.Bucket(k); cb != nil {
				rep.BlobBytes += bucketBytes(cb)
			}
		}
	}
	rep.Bytes += rep.BlobBytes
	return rep, p, nil
}

// abandoned finds a session's versions on no path from the root to its
// head or to a kept version, grouped by the branch they were on.
func (s *Store) abandoned(b *bolt.Bucket, rec infoRecord, id string, keep []int) ([]GoneBranch, []int, error) {
	for _, v := range keep {
		if err := rec.missing(id, v); err != nil {
			return nil, nil, err
		}
	}
	var cps []storage.Checkpoint
	size := map[int]int64{}
	err := s.eachCheckpoint(b.Bucket(versionsBucket), id, func(v int, h header, raw []byte) error {
		cps = append(cps, storage.Checkpoint{Version: v, Parent: h.parent, Event: h.kind, Phase: h.phase, At: h.at})
		size[v] = int64(8 + len(raw))
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if sb := b.Bucket(snapshotsBucket); sb != nil {
		err := sb.ForEach(func(k, raw []byte) error {
			if v, ok := keyVersion(k); ok {
				size[v] += int64(len(k) + len(raw))
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	tree := storage.BuildTree(id, rec.Head, cps)
	branches, versions := storage.Abandoned(rec.info(id), tree, keep, func(v int) int64 { return size[v] })
	return branches, versions, nil
}

// collectRefs adds to refs the digests of the contents the session's
// versions refer to, but for those in gone. Only events that name a
// digest are decoded: most events refer to no file.
func (s *Store) collectRefs(vb *bolt.Bucket, id string, gone map[int]bool, refs map[string]bool) error {
	return s.eachCheckpoint(vb, id, func(v int, _ header, raw []byte) error {
		if gone[v] || !bytes.Contains(raw, []byte("sha256:")) {
			return nil
		}
		_, ev, err := decodeCheckpoint(raw)
		if err != nil {
			return &storage.CorruptError{Path: s.path, Session: id, Version: v, Reason: err.Error()}
		}
		for _, d := range ev.BlobDigests() {
			refs[d] = true
		}
		return nil
	})
}

// bucketBytes is what a bucket's keys and values take, nested buckets
// included.
func bucketBytes(b *bolt.Bucket) int64 {
	var n int64
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		n += int64(len(k) + len(v))
		if v == nil {
			if nb := b.Bucket(k); nb != nil {
				n += bucketBytes(nb)
			}
		}
	}
	return n
}
