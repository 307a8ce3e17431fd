package snapshot

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"path"
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

	mu   sync.Mutex // guards the fields below
	err  error
	seen map[string]entry
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
	s := &scan{
		w:      w,
		ctx:    ctx,
		start:  w.now().UnixNano(),
		keep:   keep,
		strict: strict,
		spare:  make(chan struct{}, scanWorkers-1),
		seen:   make(map[string]entry, len(w.last)),
		kept:   map[[sha256.Size]byte][]byte{},
	}
	for range scanWorkers - 1 {
		s.spare <- struct{}{}
	}
	return s
}

// run walks the whole workspace, then makes what it saw the stat cache,
// writing the index when the cache learned or lost something it holds.
func (s *scan) run() error {
	s.walk(dirJob{dir: ".", rules: ignoreRules{exclude: s.w.exclude}})
	s.wg.Wait()
	if s.err != nil {
		return s.err
	}
	w := s.w
	w.last = s.seen
	if s.fresh == 0 && s.carried == w.saved {
		return nil
	}
	// The index is a cache: failing to write it costs the next process
	// a full read of the workspace, not this scan its result.
	if err := saveIndex(w.index, w.dir, s.seen); err == nil {
		w.saved = s.carried + s.fresh
	}
	return nil
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

// batch is what one directory's listing found, merged into the scan in
// one go so the goroutines rarely meet on the lock.
type batch struct {
	paths          []string
	entries        []entry
	kept           [][]byte // content read, for the entries that were hashed
	fresh, carried int
}

func (b *batch) add(rel string, e entry) {
	b.paths = append(b.paths, rel)
	b.entries = append(b.entries, e)
}

func (s *scan) merge(b *batch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, p := range b.paths {
		s.seen[p] = b.entries[i]
	}
	for _, data := range b.kept {
		s.kept[sha256.Sum256(data)] = data
	}
	s.fresh += b.fresh
	s.carried += b.carried
}

// walk lists a directory, records its entries and goes down every
// subdirectory that is not ignored. It is its own walk rather than
// fs.WalkDir so that each directory's .gitignore, found in the listing it
// already has, is read before the entries it rules on, and so that
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
	rules := j.rules
	for _, d := range list {
		if d.Name() == ".gitignore" && d.Type().IsRegular() {
			// Unreadable: passed over, as readGitignore explains.
			if data, err := s.w.root.ReadFile(path.Join(j.dir, ".gitignore")); err == nil {
				rules = rules.with(parsePatterns(data, j.comps))
			}
		}
	}
	var b batch
	var subdirs []dirJob
	// One slice for every entry's components: the patterns only read it.
	comps := append(slices.Clip(j.comps), "")
	for _, d := range list {
		rel := path.Join(j.dir, d.Name())
		info, err := d.Info()
		if isMissing(err) {
			continue
		} else if err != nil {
			s.fail(fmt.Errorf("stat %s: %w", rel, err))
			return
		}
		st := stampOf(info)
		comps[len(comps)-1] = d.Name()
		reason := rules.reason(comps, st.isDir())
		if d.Name() == gitDirName {
			reason = reasonGitDir
		}
		switch {
		case reason != "" && st.isDir():
			b.add(rel, entry{stamp: st, untracked: notCompared(reason), ignored: true})
		case reason != "":
			b.add(rel, entry{stamp: st, untracked: reason, ignored: true})
		case st.isDir():
			subdirs = append(subdirs, dirJob{dir: rel, comps: slices.Clone(comps), rules: rules})
		case st.isSymlink():
			b.add(rel, entry{stamp: st, untracked: reasonSymlink})
		case !st.isRegular():
			b.add(rel, entry{stamp: st, untracked: reasonNotRegular})
		default:
			if err := s.file(rel, st, &b); err != nil {
				s.fail(err)
				return
			}
		}
	}
	s.merge(&b)
	for _, sub := range subdirs {
		s.descend(sub)
	}
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
	var b batch
	b.add(dir, entry{stamp: stampOf(info), untracked: notCompared(unreadable(err)), ignored: true})
	s.merge(&b)
}

// file records the regular file at rel, which the listing found with stamp
// st: from the stat cache when st vouches for a digest there, else by
// reading and hashing it, and keeping its content in the content cache.
func (s *scan) file(rel string, st stamp, b *batch) error {
	w := s.w
	if st.size > w.opts.MaxFileSize {
		b.add(rel, entry{stamp: st, untracked: capReason(w.opts.MaxFileSize)})
		return nil
	}
	if old, ok := w.last[rel]; ok && old.vouched() && old.stamp == st {
		b.add(rel, old)
		b.carried++
		return nil
	}
	data, got, reason, err := w.readFile(rel, st)
	switch {
	case isMissing(err):
		return nil // deleted since the listing: not there
	case err != nil:
		b.add(rel, entry{stamp: st, untracked: unreadable(err)})
		return nil
	case reason != "":
		b.add(rel, entry{stamp: got, untracked: reason})
		return nil
	}
	e := entry{stamp: got, sum: sha256.Sum256(data), hashed: true, recheck: got.recent(s.start)}
	if err := w.objects.put(e.sum, data); err != nil {
		if s.strict {
			return fmt.Errorf("keep %s: %w", rel, err)
		}
		e.recheck = true // so that the next scan tries to keep it again
	}
	if s.keep {
		b.kept = append(b.kept, data)
	}
	if e.vouched() {
		b.fresh++
	}
	b.add(rel, e)
	return nil
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
