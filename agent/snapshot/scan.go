package snapshot

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// scan is one walk of the workspace: Mark's or Changes'. Directories are
// listed by up to scanWorkers goroutines at once: a stat walk spends its
// time in system calls, which several CPUs (or one waiting disk) serve
// side by side, and a first scan also hashes and compresses every file.
type scan struct {
	w     *Watcher
	ctx   context.Context
	start int64 // ns, for stamp.recent
	// keep asks for the content this scan reads (Changes returns it as
	// blobs). strict makes a content-cache failure an error: Mark
	// promises that the content it saw can be had back; Changes already
	// has it in hand.
	keep, strict bool

	spare  chan struct{} // one token for each goroutine that may start
	wg     sync.WaitGroup
	failed atomic.Bool
	// held counts the bytes of content kept in memory, which stops at
	// the per-call cap: past it, Changes keeps no content anyway.
	held atomic.Int64
	// reading bounds the contents read at once (see readBudget).
	reading *budget

	mu   sync.Mutex // guards the fields below
	err  error
	seen map[string]*listing // by directory
	kept map[[sha256.Size]byte][]byte
	// fresh counts the vouched entries the index does not hold yet;
	// carried, those it does hold that came through unchanged.
	fresh, carried int
}

// scanWorkers bounds the goroutines of one scan: twice the CPUs, since a
// goroutine waiting on the disk (a cold cache; a first scan writing the
// content cache) leaves its CPU to another.
var scanWorkers = min(max(2*runtime.GOMAXPROCS(0), 4), 16)

func (w *Watcher) newScan(ctx context.Context, keep, strict bool) *scan {
	if !w.loaded {
		w.last, w.saved = loadIndex(w.index, w.dir)
		w.loaded = true
	}
	s := &scan{
		w:       w,
		ctx:     ctx,
		start:   w.now().UnixNano(),
		keep:    keep,
		strict:  strict,
		spare:   make(chan struct{}, scanWorkers-1),
		seen:    make(map[string]*listing, len(w.last)),
		reading: newBudget(max(readBudget, w.opts.MaxFileSize)),
		kept:    map[[sha256.Size]byte][]byte{},
	}
	for range scanWorkers - 1 {
		s.spare <- struct{}{}
	}
	return s
}

// run walks the whole workspace, then makes what it saw the stat cache
// (see keepIndex).
func (s *scan) run() error {
	if err := s.walkAll(); err != nil {
		return err
	}
	s.keepIndex()
	return nil
}

// walkAll walks the whole workspace.
func (s *scan) walkAll() error {
	s.walk(dirJob{dir: ".", rules: s.w.rules})
	s.wg.Wait()
	// The contents this scan kept become visible to other processes. A
	// pack left without its index costs them a read of the file, and this
	// process still finds its objects.
	_ = s.w.objects.seal()
	return s.err
}

// keepIndex makes what the scan saw the stat cache, writing the index
// when the cache learned or lost something it holds. The index names the
// contents eviction keeps: a scan writes it once it has read from the
// content cache what it needs of the contents it no longer names.
func (s *scan) keepIndex() {
	w := s.w
	w.last = s.seen
	if s.fresh == 0 && s.carried == w.saved {
		return
	}
	// The index is a cache: failing to write it costs the next process
	// a full read of the workspace, not this scan its result.
	if err := saveIndex(w.index, w.dir, s.seen); err == nil {
		w.saved = s.carried + s.fresh
	}
}

func (s *scan) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
	s.failed.Store(true)
}

// dirJob is a directory to walk: its path, as components too (what the
// ignore patterns match), and the rules in force there.
type dirJob struct {
	dir   string
	comps []string
	rules ignoreRules
}

// descend walks a directory on a goroutine of its own when one is spare,
// else on this one.
func (s *scan) descend(j dirJob) {
	select {
	case <-s.spare:
		s.wg.Go(func() {
			defer func() { s.spare <- struct{}{} }()
			s.walk(j)
		})
	default:
		s.walk(j)
	}
}

// tally is what a directory's walk adds to the scan besides its listing.
type tally struct {
	kept           [][]byte // content read, when the scan keeps it
	fresh, carried int
}

// merge adds one directory's listing to the scan, in one go so that the
// goroutines rarely meet on the lock.
func (s *scan) merge(dir string, l *listing, t *tally) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen[dir] = l
	for _, data := range t.kept {
		s.kept[sha256.Sum256(data)] = data
	}
	s.fresh += t.fresh
	s.carried += t.carried
}

// walk lists a directory, records its entries and goes down every
// subdirectory that is not ignored. It is its own walk rather than
// fs.WalkDir so that each directory's .gitignore, found in the listing it
// already has, is read before the entries it rules on; so that the stat
// cache is met directory by directory, in the same order; and so that
// directories can be walked side by side.
func (s *scan) walk(j dirJob) {
	if err := s.ctx.Err(); err != nil {
		s.fail(err)
	}
	if s.failed.Load() {
		return
	}
	list, err := fs.ReadDir(s.w.fsys, j.dir)
	if err != nil {
		s.unlisted(j.dir, err)
		return
	}
	for _, d := range list {
		if d.Name() == ".gitignore" && d.Type().IsRegular() {
			// Unreadable: passed over, as readGitignore explains.
			if data := s.w.readIgnoreFile(join(j.dir, ".gitignore")); data != nil {
				j.rules = j.rules.with(j.dir, j.comps, data)
			}
		}
	}
	old := s.w.last[j.dir]
	ds := dirScan{
		s:     s,
		job:   j,
		prev:  cursor{l: old},
		l:     &listing{names: make([]string, 0, len(list)), entries: make([]entry, 0, len(list)), rules: j.rules.key},
		comps: append(slices.Clip(j.comps), ""),
		// The last listing's ignore decisions stand while the rules do.
		sameRules: old != nil && old.rules == j.rules.key,
	}
	for _, d := range list {
		if err := ds.visit(d); err != nil {
			s.fail(err)
			return
		}
	}
	if old != nil && ds.l.same(old) {
		ds.l = old
	}
	s.merge(j.dir, ds.l, &ds.t)
	for _, sub := range ds.subdirs {
		s.descend(sub)
	}
}

// dirScan is the walk of one directory under way.
type dirScan struct {
	s         *scan
	job       dirJob
	prev      cursor // in the last scan's listing of the directory
	sameRules bool   // the rules are those of the last listing
	l         *listing
	t         tally
	comps     []string // an entry's path components; the patterns only read it
	subdirs   []dirJob
}

// visit records one entry of the directory, or queues it to be walked.
func (ds *dirScan) visit(d fs.DirEntry) error {
	name := d.Name()
	rel := join(ds.job.dir, name)
	info, err := d.Info()
	if isMissing(err) {
		return nil
	} else if err != nil {
		return fmt.Errorf("stat %s: %w", rel, err)
	}
	st := stampOf(info)
	before, seen := ds.prev.find(name)
	ds.comps[len(ds.comps)-1] = name
	var reason string
	switch {
	case ds.sameRules && seen && before.isDir() == st.isDir():
		reason = before.ignored
	case name == gitDirName:
		reason = reasonGitDir
	default:
		reason = ds.job.rules.reason(ds.comps, st.isDir())
	}
	switch {
	case reason != "":
		ds.l.add(name, entry{stamp: st, ignored: reason})
	case st.isDir():
		ds.subdirs = append(ds.subdirs, dirJob{dir: rel, comps: slices.Clone(ds.comps), rules: ds.job.rules})
	case st.isSymlink():
		ds.l.add(name, entry{stamp: st, untracked: reasonSymlink})
	case !st.isRegular():
		ds.l.add(name, entry{stamp: st, untracked: reasonNotRegular})
	default:
		e, ok, err := ds.s.file(rel, st, before, &ds.t)
		if err != nil {
			return err
		}
		if ok {
			ds.l.add(name, e)
		}
	}
	return nil
}

// unlisted records a directory the walk could not list: the root is an
// error; another is noted by its own stamp, so that a change to it is seen
// if not its files'.
func (s *scan) unlisted(dir string, err error) {
	if dir == "." {
		s.fail(fmt.Errorf("list %s: %w", s.w.dir, err))
		return
	}
	info, serr := s.w.root.Lstat(dir)
	if isMissing(serr) {
		return // gone since its parent was listed
	} else if serr != nil {
		s.fail(fmt.Errorf("stat %s: %w", dir, serr))
		return
	}
	l := &listing{}
	l.add(selfName, entry{stamp: stampOf(info), ignored: unreadable(err)})
	s.merge(dir, l, &tally{})
}

// file makes the entry of the regular file at rel, which the listing found
// with stamp st and the last scan with entry before: that one again when
// st vouches for its digest, else by reading and hashing the file and
// keeping its content in the content cache. ok is false when the file
// went away meanwhile.
func (s *scan) file(rel string, st stamp, before entry, t *tally) (e entry, ok bool, err error) {
	w := s.w
	if st.size > w.opts.MaxFileSize {
		return entry{stamp: st, untracked: capReason(w.opts.MaxFileSize)}, true, nil
	}
	if before.vouched() && before.stamp == st {
		t.carried++
		return before, true, nil
	}
	// The bytes in hand while a file is read and kept: its content, and
	// about as much again compressed.
	need := 2 * min(st.size, w.opts.MaxFileSize)
	s.reading.take(need)
	defer s.reading.give(need)
	data, got, reason, err := w.readFile(rel, st)
	switch {
	case isMissing(err):
		return entry{}, false, nil
	case err != nil:
		return entry{stamp: st, untracked: unreadable(err)}, true, nil
	case reason != "":
		return entry{stamp: got, untracked: reason}, true, nil
	}
	e = entry{stamp: got, sum: sha256.Sum256(data), hashed: true, recheck: got.recent(s.start)}
	if err := w.objects.put(e.sum, data); err != nil {
		if s.strict {
			return entry{}, false, fmt.Errorf("keep %s: %w", rel, err)
		}
		e.recheck = true // so that the next scan tries to keep it again
	}
	if s.keep && s.held.Add(int64(len(data))) <= w.opts.MaxCallBytes {
		// What Changes will hand to the checkpoint, in hand already, so it
		// is not read back from the cache; a command that wrote thousands
		// of files holds no more than the per-call cap.
		t.kept = append(t.kept, data)
	}
	if e.vouched() {
		t.fresh++
	}
	return e, true, nil
}

// unreadable is the reason for a path that could not be read, with the
// system's word for why ("permission denied") rather than the whole path
// error, since the change already names the path.
func unreadable(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return reasonUnreadable + err.Error()
}
