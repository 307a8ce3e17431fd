package boltstore

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
)

// An operation's cost follows the session it works on, not the file.
//
// bbolt follows the pointers in its pages without bounds checks (see
// checkPages), so before it reads a page, a walk of ours must have checked
// it. Walking the whole file before a Store's first operation made every
// command as slow as the file was big: a second for `show` of one session
// in a 1.5 GB file, and its pages' worth of memory. So an operation names
// its scope, the part of the file it reads, and only that is walked:
//
//   - every operation: the meta page, the freelist, the root bucket's own
//     pages and the schema bucket;
//   - one session: the way down the sessions bucket to it, its bucket's own
//     pages and, when the operation reads or writes its versions, every
//     page under it; or, for a read of a few of its versions and
//     snapshots (Recent), the way down to each, walked before bbolt looks
//     it up (guardIn);
//   - a list of sessions: the sessions bucket's pages and each session's
//     own pages (not their versions);
//   - a file content: the way down the contents bucket to its key (guardBlob,
//     called before bbolt looks it up);
//   - the memory log: every page of it (it is read whole);
//   - anything else (gc, compact, import, recovery, a migration): the whole
//     file, as before.
//
// A Store walks a session's versions once, as it walked the whole file
// once before: after that it trusts what retrace writes there, its own
// appends and another process's (each commit is retrace's, and bbolt's
// writes are copy-on-write). A new file at the path (compact's, or a
// backup put back) is walked afresh.
type scope struct {
	whole    bool   // every page
	session  string // the session whose bucket the operation opens
	versions bool   // and its versions, every one
	guarded  bool   // or the ways to the versions and snapshots read, one by one
	siblings bool   // the sessions bucket's own pages (a delete may merge them)
	list     bool   // every session's own pages, for lists
	prefix   []byte // only the sessions whose ids start so
	memory   bool   // the memory log, every page, and no session
	// or the memory log's snapshot, and the ways to the log's entries
	// read, one by one (guardMemory)
	memoryNow bool
}

var (
	wholeFile = scope{whole: true}
	fileHead  = scope{} // the root and the schema: what every transaction reads
)

func sessionScope(id string, versions bool) scope {
	return scope{session: id, versions: versions}
}

func listScope(prefix []byte) scope { return scope{list: true, prefix: prefix} }

// reach is what the operation under way has walked, kept for the lookups
// whose keys it learns only inside its transaction (file contents).
type reach struct {
	f      *os.File
	w      *pageWalker
	blobs  *bucketRef // the contents bucket, when the file has one
	chunks *bucketRef // the chunked contents' bucket, likewise
	// inSession are the session's own buckets (versions, snapshots), in
	// a guarded operation: lookups in them walk their way first.
	inSession map[string]bucketRef
	memory    *bucketRef // the memory log, in a memoryNow operation
}

func (r *reach) close() {
	if r != nil {
		r.f.Close()
	}
}

// walkScope walks what sc reads, and keeps the walk for guardBlob. The
// caller holds the file lock. The file's meta pages are checked here
// (checkFile), for every operation; with write set the freelist is walked
// too, which bbolt reads only when it opens the file to write.
func (s *Store) walkScope(sc scope, write bool) error {
	f, err := os.Open(s.path)
	if err != nil {
		return err
	}
	keep := false
	defer func() {
		if !keep {
			f.Close()
		}
	}()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if s.walkedFile == nil || !os.SameFile(fi, s.walkedFile) {
		// Another file is at the path now: nothing of it is walked yet.
		s.walkedFile, s.wholeWalked = fi, false
		clear(s.walkedVersions)
		clear(s.checkedRecords)
		s.memoryChecked = false
	}
	m, err := checkOpenFile(f, fi, s.path)
	if err != nil || s.wholeWalked {
		return err
	}
	if sc.whole {
		if err := s.walkPages(); err != nil {
			return err
		}
		s.wholeWalked = true
		return nil
	}
	r := &reach{f: f, w: newPageWalker(f, s.path, m)}
	if write {
		if err := r.w.freelist(m.freelist); err != nil {
			return err
		}
	}
	if err := r.walk(s, sc, m); err != nil {
		return err
	}
	s.reach, keep = r, true
	return nil
}

func (r *reach) walk(s *Store, sc scope, m meta) error {
	w := r.w
	top := map[string]bucketRef{}
	if err := w.bucket(bucketRef{root: m.root}, 0, collect(top)); err != nil {
		return err
	}
	if b, ok := top[string(metaBucket)]; ok {
		if err := w.bucket(b, 1, w.deep); err != nil {
			return err
		}
	}
	if b, ok := top[string(blobsBucket)]; ok {
		r.blobs = &b
	}
	if b, ok := top[string(chunksBucket)]; ok {
		r.chunks = &b
	}
	if sc.memory {
		if b, ok := top[string(memoryBucket)]; ok {
			return w.bucket(b, 1, w.deep)
		}
		return nil // checkLayout says it is missing
	}
	if sc.memoryNow {
		if b, ok := top[string(memoryBucket)]; ok {
			r.memory = &b
		}
		if b, ok := top[string(memoryNowBucket)]; ok {
			return w.bucket(b, 1, w.deep)
		}
		return nil // no snapshot: the whole log is read
	}
	sessions, ok := top[string(sessionsBucket)]
	if !ok {
		return nil // checkLayout says what is missing
	}
	var one *bucketRef
	switch {
	case sc.list || sc.siblings:
		ids := map[string]bucketRef{}
		if err := w.bucket(sessions, 1, collect(ids)); err != nil {
			return err
		}
		if sc.list {
			// In the order of the file, so that damage in two sessions
			// is told the same way every time.
			for _, id := range slices.Sorted(maps.Keys(ids)) {
				if strings.HasPrefix(id, string(sc.prefix)) {
					if err := w.bucket(ids[id], 2, ignore); err != nil {
						return err
					}
				}
			}
			return nil
		}
		if b, ok := ids[sc.session]; ok && sc.session != "" {
			one = &b
		}
	case sc.session != "":
		v, isBucket, err := w.find(sessions, []byte(sc.session), 1)
		if err != nil {
			return err
		}
		if isBucket {
			b, err := w.bucketAt(v, "session "+sc.session)
			if err != nil {
				return err
			}
			one = &b
		}
	}
	if one == nil {
		return nil // no such session: bbolt finds none either
	}
	if sc.versions && (!s.walkedVersions[sc.session] || sc.siblings) {
		// Everything the session holds: its versions, and whatever else
		// it keeps beside them.
		if err := w.bucket(*one, 2, w.deep); err != nil {
			return err
		}
		s.walkedVersions[sc.session] = true
		return nil
	}
	if sc.guarded && !s.walkedVersions[sc.session] {
		r.inSession = map[string]bucketRef{}
		return w.bucket(*one, 2, collect(r.inSession))
	}
	return w.bucket(*one, 2, ignore)
}

// collect is a childFunc that keeps each bucket's place by its key, and
// walks none of them.
func collect(into map[string]bucketRef) childFunc {
	return func(key []byte, ref bucketRef, _ int) error {
		into[string(key)] = ref
		return nil
	}
}

func ignore([]byte, bucketRef, int) error { return nil }

// guardIn walks the way to key in the open session's bucket named
// bucket before bbolt looks it up, in a guarded operation (see scope).
func (s *Store) guardIn(bucket, key []byte) error {
	if s.reach == nil || s.reach.inSession == nil {
		return nil
	}
	ref, ok := s.reach.inSession[string(bucket)]
	if !ok {
		return nil // no such bucket: bbolt finds none either
	}
	_, _, err := s.reach.w.find(ref, key, 3)
	return err
}

// guardMemory walks the way to key in the memory log before bbolt looks
// it up, in an operation that did not walk the whole log.
func (s *Store) guardMemory(key []byte) error {
	if s.reach == nil || s.reach.memory == nil {
		return nil
	}
	_, _, err := s.reach.w.find(*s.reach.memory, key, 1)
	return err
}

// guardBlob walks the way to a file content's key before bbolt looks it
// up, in an operation that did not walk the whole file.
func (s *Store) guardBlob(key []byte) error {
	if s.reach == nil || s.reach.blobs == nil {
		return nil
	}
	_, _, err := s.reach.w.find(*s.reach.blobs, key, 1)
	return err
}

// guardChunks walks every page of a chunked content's chunks before bbolt
// reads them, in an operation that did not walk the whole file.
func (s *Store) guardChunks(key []byte) error {
	if s.reach == nil || s.reach.chunks == nil {
		return nil
	}
	w := s.reach.w
	v, isBucket, err := w.find(*s.reach.chunks, key, 1)
	if err != nil || v == nil || !isBucket {
		return err // no bucket: bbolt finds none either
	}
	ref, err := w.bucketAt(v, fmt.Sprintf("the chunks of %s", keyDigest(key)))
	if err != nil {
		return err
	}
	return w.bucket(ref, 2, w.deep)
}

// guardChunk walks the way to one chunk of a chunked content, and every
// page of that chunk, before bbolt reads it, in an operation that did
// not walk the whole file: a copy reads a chunk an operation, and walking
// every chunk each time would read the content once for each of them.
func (s *Store) guardChunk(key []byte, i int) error {
	if s.reach == nil || s.reach.chunks == nil {
		return nil
	}
	w := s.reach.w
	v, isBucket, err := w.find(*s.reach.chunks, key, 1)
	if err != nil || v == nil || !isBucket {
		return err // no bucket: bbolt finds none either
	}
	ref, err := w.bucketAt(v, fmt.Sprintf("the chunks of %s", keyDigest(key)))
	if err != nil {
		return err
	}
	if v, isBucket, err = w.find(ref, chunkKey(i), 2); err != nil || v == nil || !isBucket {
		return err
	}
	if ref, err = w.bucketAt(v, fmt.Sprintf("chunk %d of %s", i, keyDigest(key))); err != nil {
		return err
	}
	return w.bucket(ref, 3, w.deep)
}
