package snapshot

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Eviction brings the content cache back under its budget. What it keeps
// is what a workspace's files hold now, as the stat indexes of the
// workspaces name them: that is the content a command may overwrite, and
// the only place its before image can then come from, since a file the
// session never touched has no copy in the store. Everything else was the
// content of a file that has changed since; if a session recorded that
// change, the store holds the content as a blob, and the cache's copy
// serves nobody.
//
// Eviction leaves alone every pack younger than evictGrace: a Changes
// reads from the cache the before contents of what a command overwrote
// after its scan has sealed its own pack, and before it writes the index
// that names what it read. A pack without an index is a scan under way,
// which may last long on a large workspace; it goes only once it is older
// than orphanAge, left by a process that stopped. A stat index whose
// workspace is gone, or that no scan has rewritten for staleIndex, names
// nothing: the workspace's next scan reads its files again.
var (
	evictGrace = 5 * time.Minute
	orphanAge  = 24 * time.Hour
	staleIndex = 30 * 24 * time.Hour
)

// maxPacks is how many packs the cache holds before eviction merges the
// small ones: a lookup's first load reads every pack's index.
const maxPacks = 64

// DefaultCacheBytes is the content cache's budget when Options.CacheBytes
// is zero.
const DefaultCacheBytes = 1 << 30

// EvictReport says what an eviction did to the content cache.
type EvictReport struct {
	// Before and After are the cache's size in bytes.
	Before, After int64
	// Objects counts the contents removed; Packs the pack files removed
	// or rewritten; Indexes the stale workspace indexes removed.
	Objects, Packs, Indexes int
	// Busy is set when another process was evicting: this one did
	// nothing.
	Busy bool
}

// Evict brings the content cache in cacheDir under budget bytes, as far as
// it can without dropping what a workspace holds now (see above). A cache
// under budget, with few packs, is left as it is. It is safe beside
// retrace processes using the cache: one evicts at a time, and the others'
// reads of what it removed find the object missing, never wrong.
func Evict(cacheDir string, budget int64) (EvictReport, error) {
	return evict(cacheDir, budget, time.Now())
}

func evict(cacheDir string, budget int64, now time.Time) (EvictReport, error) {
	var rep EvictReport
	unlock, err := lockEvict(cacheDir)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		rep.Busy = true
		return rep, nil
	} else if err != nil {
		return rep, err
	}
	defer unlock()
	c, err := surveyCache(cacheDir)
	if err != nil {
		return rep, err
	}
	rep.Before, rep.After = c.total, c.total
	if c.total <= budget && len(c.packs) <= maxPacks {
		return rep, nil
	}
	refs, stale := referenced(cacheDir, now)
	rep.Indexes = stale
	if err := c.repack(refs, budget, now, &rep); err != nil {
		return rep, err
	}
	c.dropLegacy(refs, &rep)
	packs, _ := cacheSize(cacheDir)
	_, rep.After = legacyObjects(cacheDir, packs)
	saveEvicted(cacheDir, rep.After)
	return rep, nil
}

// lockEvict takes the cache's eviction lock without waiting.
func lockEvict(cacheDir string) (func(), error) {
	if err := os.MkdirAll(cacheDir, 0o700); err != nil {
		return nil, fmt.Errorf("evict %s: %w", cacheDir, err)
	}
	f, err := os.OpenFile(filepath.Join(cacheDir, "evict.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("evict %s: %w", cacheDir, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() { _ = f.Close() }, nil
}

// cachePack is one pack as eviction sees it.
type cachePack struct {
	name    string
	size    int64
	mtime   time.Time
	entries []idxEntry // nil for a pack without an index
}

// cacheSurvey is the cache's packs, oldest first, and legacy objects.
type cacheSurvey struct {
	dir, packs string
	list       []cachePack
	legacy     []string // files of the older layout
	total      int64
}

// surveyCache lists what the cache holds and how much.
func surveyCache(cacheDir string) (*cacheSurvey, error) {
	c := &cacheSurvey{dir: cacheDir, packs: filepath.Join(cacheDir, packsDir)}
	indexed, bare, err := packNames(c.packs)
	if err != nil {
		return nil, fmt.Errorf("evict %s: %w", cacheDir, err)
	}
	for _, name := range append(indexed, bare...) {
		p := cachePack{name: name}
		info, err := os.Stat(filepath.Join(c.packs, name+packExt))
		if err != nil {
			continue
		}
		p.size, p.mtime = info.Size(), info.ModTime()
		if slices.Contains(indexed, name) {
			if p.entries, err = readIdx(c.packs, name); err != nil {
				p.entries = nil // unreadable: as good as no index
			}
		}
		c.list = append(c.list, p)
		c.total += p.size
	}
	slices.SortFunc(c.list, func(a, b cachePack) int { return a.mtime.Compare(b.mtime) })
	c.legacy, c.total = legacyObjects(cacheDir, c.total)
	return c, nil
}

// legacyObjects lists the files of the older layout (two hex digits, then
// the rest of the digest) and adds their size to total.
func legacyObjects(cacheDir string, total int64) ([]string, int64) {
	var out []string
	ents, _ := os.ReadDir(cacheDir)
	for _, d := range ents {
		if !d.IsDir() || len(d.Name()) != 2 || !isHex(d.Name()) {
			continue
		}
		sub := filepath.Join(cacheDir, d.Name())
		files, _ := os.ReadDir(sub)
		for _, f := range files {
			if info, err := f.Info(); err == nil && info.Mode().IsRegular() {
				out = append(out, filepath.Join(sub, f.Name()))
				total += info.Size()
			}
		}
	}
	return out, total
}

func isHex(s string) bool {
	return strings.Trim(s, "0123456789abcdef") == ""
}

// referenced reads every workspace's stat index and returns the digests
// they name, removing the stale ones (and saying how many).
func referenced(cacheDir string, now time.Time) (map[[sha256.Size]byte]bool, int) {
	refs := map[[sha256.Size]byte]bool{}
	stale := 0
	dir := filepath.Join(cacheDir, "index")
	ents, _ := os.ReadDir(dir)
	for _, d := range ents {
		file := filepath.Join(dir, d.Name())
		info, err := d.Info()
		if err != nil || !info.Mode().IsRegular() || strings.HasPrefix(d.Name(), ".tmp-") {
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		root, ok := indexRoot(data)
		if _, serr := os.Stat(root); !ok || isMissing(serr) || now.Sub(info.ModTime()) > staleIndex {
			if os.Remove(file) == nil {
				stale++
			}
			continue
		}
		dirs, _, err := decodeIndex(root, data)
		if err != nil {
			continue
		}
		for _, l := range dirs {
			for _, e := range l.entries {
				refs[e.sum] = true
			}
		}
	}
	return refs, stale
}

// indexRoot reads the workspace an index describes from its header.
func indexRoot(data []byte) (string, bool) {
	r := indexReader{b: data}
	if string(r.bytes(len(indexMagic))) != indexMagic || r.byte() != indexVersion {
		return "", false
	}
	root := r.str()
	return root, r.err == nil && filepath.IsAbs(root)
}

// saveEvicted notes the cache's size after an eviction, so that the next
// automatic one waits until the cache has grown past it (see tidy).
func saveEvicted(cacheDir string, size int64) {
	_ = writeAtomic(filepath.Join(cacheDir, "evicted"), strconv.AppendInt(nil, size, 10))
}

func loadEvicted(cacheDir string) int64 {
	data, err := os.ReadFile(filepath.Join(cacheDir, "evicted"))
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(string(data), 10, 64)
	return n
}

// cacheSize is the size of the cache's packs: what tidy looks at before
// deciding to evict, cheaply (legacy objects are left to Evict).
func cacheSize(cacheDir string) (total int64, packs int) {
	ents, _ := os.ReadDir(filepath.Join(cacheDir, packsDir))
	for _, d := range ents {
		if !strings.HasSuffix(d.Name(), packExt) {
			continue
		}
		if info, err := d.Info(); err == nil {
			total += info.Size()
			packs++
		}
	}
	return total, packs
}

// tidy evicts when the cache has grown past its budget, and past what the
// last eviction left by a quarter of the budget: when what the workspaces
// hold is itself over budget, eviction can do nothing about it, and is
// not tried again after every command.
func (w *Watcher) tidy() {
	total, packs := cacheSize(w.opts.CacheDir)
	if packs <= maxPacks && (total <= w.opts.CacheBytes || total <= loadEvicted(w.opts.CacheDir)+w.opts.CacheBytes/4) {
		return
	}
	// A cache is only a cache: failing to shrink it fails no command.
	_, _ = Evict(w.opts.CacheDir, w.opts.CacheBytes)
}
