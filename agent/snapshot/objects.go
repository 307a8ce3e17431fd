package snapshot

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/klauspost/compress/zstd"
)

// codec is the one zstd encoder and decoder every Watcher shares: they are
// costly to build and safe for concurrent EncodeAll and DecodeAll.
var codec = sync.OnceValues(func() (*zstd.Encoder, *zstd.Decoder) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		panic(fmt.Sprintf("zstd encoder with fixed options: %v", err))
	}
	// The cap limit makes DecodeAll stop at the size the caller expects,
	// so a damaged object cannot make us allocate what its header claims.
	dec, err := zstd.NewReader(nil, zstd.WithDecodeAllCapLimit(true))
	if err != nil {
		panic(fmt.Sprintf("zstd decoder with fixed options: %v", err))
	}
	return enc, dec
})

// objects is the content cache: contents by digest, zstd-compressed, in
// packs under dir/packs (see pack.go). It is a cache, not a store: packs
// are written without fsync, and a damaged or missing object reads as "not
// kept", never as wrong bytes, since every read is hashed again. Objects
// of the older layout, one file per digest under dir, are still read.
type objects struct {
	dir, packs string

	mu    sync.Mutex // a scan's goroutines put and get side by side
	where map[[sha256.Size]byte]loc
	names []string         // the packs loc.pack counts, by name
	known map[string]bool  // packs whose index is in where
	open  map[int]*os.File // packs open for reading, by loc.pack
	w     *packWriter      // the pack this process appends to, if any
}

// loc is where an object lies: its pack, and the offset and length of
// its compressed bytes there. Small, since a process may hold one for
// every object of the cache.
type loc struct {
	pack int32
	len  uint32
	off  int64
}

// packLocked numbers the pack named name for loc.
func (o *objects) packLocked(name string) int32 {
	o.names = append(o.names, name)
	return int32(len(o.names) - 1)
}

// packWriter is a pack being written: its file, where the next record
// goes, and its index so far.
type packWriter struct {
	name    string
	pack    int32
	f       *os.File
	off     int64
	entries []idxEntry
}

func newObjects(dir string) *objects {
	return &objects{dir: dir, packs: filepath.Join(dir, packsDir),
		where: map[[sha256.Size]byte]loc{}, known: map[string]bool{}, open: map[int]*os.File{}}
}

// legacyPath is where the older layout kept an object: one file per
// digest, named by its hex split after two digits.
func (o *objects) legacyPath(sum [sha256.Size]byte) string {
	h := hex.EncodeToString(sum[:])
	return filepath.Join(o.dir, h[:2], h[2:]+".zst")
}

// put keeps data under its digest sum, unless an object is already there.
// Another process may keep the same content in a pack of its own; the
// copy costs space until eviction, never a wrong read.
func (o *objects) put(sum [sha256.Size]byte, data []byte) error {
	o.mu.Lock()
	o.refreshLocked(false)
	_, have := o.where[sum]
	o.mu.Unlock()
	if have {
		return nil
	}
	rec, at := packRecord(sum, data)
	o.mu.Lock()
	defer o.mu.Unlock()
	// A scan's pack is sealed when the scan ends, never midway: until
	// the scan writes the workspace's index, nothing else protects its
	// objects from eviction but being in a pack without an index.
	return o.appendLocked(sum, int64(len(data)), rec, at, false)
}

// packRecord compresses data into its pack record, in one buffer: a
// content just under the size cap is held twice while it is kept (as read,
// and compressed), not four times.
func packRecord(sum [sha256.Size]byte, data []byte) (rec []byte, at int) {
	const room = sha256.Size + 2*binary.MaxVarintLen64
	// Room for incompressible data too, so the buffer never grows.
	buf := make([]byte, room, room+len(data)+len(data)>>7+64)
	enc, _ := codec()
	buf = enc.EncodeAll(data, buf)
	head, _ := appendRecord(make([]byte, 0, room), sum, int64(len(data)), nil)
	start := room - len(head)
	copy(buf[start:], head)
	return buf[start:], len(head)
}

// putPacked keeps an object whose compressed bytes are at hand, as
// eviction copies them from one pack to another.
func (o *objects) putPacked(sum [sha256.Size]byte, size int64, packed []byte) error {
	rec, at := appendRecord(make([]byte, 0, len(packed)+48), sum, size, packed)
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.appendLocked(sum, size, rec, at, true)
}

// appendLocked writes one record to the pack this process is writing,
// starting one when there is none, or, with roll, when it is full.
func (o *objects) appendLocked(sum [sha256.Size]byte, size int64, rec []byte, at int, roll bool) error {
	if _, have := o.where[sum]; have {
		return nil // another goroutine of the scan kept it meanwhile
	}
	if roll && o.w != nil && o.w.off >= packLimit {
		if err := o.sealLocked(); err != nil {
			return err
		}
	}
	if o.w == nil {
		if err := o.startLocked(); err != nil {
			return err
		}
	}
	w := o.w
	if _, err := w.f.WriteAt(rec, w.off); err != nil {
		return fmt.Errorf("write %s: %w", w.f.Name(), err)
	}
	l := loc{pack: w.pack, off: w.off + int64(at), len: uint32(len(rec) - at)}
	w.entries = append(w.entries, idxEntry{sum: sum, off: l.off, len: int64(l.len), size: size})
	w.off += int64(len(rec))
	o.where[sum] = l
	return nil
}

// startLocked begins a new pack, with a name no other process picks.
func (o *objects) startLocked() error {
	if err := os.MkdirAll(o.packs, 0o700); err != nil {
		return fmt.Errorf("make cache directory %s: %w", o.packs, err)
	}
	f, err := os.CreateTemp(o.packs, "pack-*"+packExt)
	if err != nil {
		return fmt.Errorf("start a pack in %s: %w", o.packs, err)
	}
	h := packHeader()
	if _, err := f.Write(h); err != nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", f.Name(), err)
	}
	name := strings.TrimSuffix(filepath.Base(f.Name()), packExt)
	o.w = &packWriter{name: name, pack: o.packLocked(name), f: f, off: int64(len(h))}
	o.open[int(o.w.pack)] = f
	o.known[name] = true
	return nil
}

// seal writes the index of the pack this process is writing, which makes
// its objects visible to other processes, and ends it: the next put
// starts another. A scan seals when it ends.
func (o *objects) seal() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.sealLocked()
}

func (o *objects) sealLocked() error {
	w := o.w
	if w == nil {
		return nil
	}
	o.w = nil
	if err := writeAtomic(filepath.Join(o.packs, w.name+idxExt), encodeIdx(w.entries)); err != nil {
		return fmt.Errorf("index the content cache's pack: %w", err)
	}
	return nil
}

// refreshLocked reads the index of every pack it does not know yet; once
// loaded, only when asked (a lookup missed: another process may have
// added the object since).
func (o *objects) refreshLocked(again bool) {
	if len(o.known) > 0 && !again {
		return
	}
	names, _, err := packNames(o.packs)
	if err != nil {
		return // an unreadable cache is an empty one
	}
	for _, name := range names {
		if o.known[name] {
			continue
		}
		o.known[name] = true
		entries, err := readIdx(o.packs, name)
		if err != nil {
			continue
		}
		pack := o.packLocked(name)
		for _, e := range entries {
			if e.len <= maxObject {
				o.where[e.sum] = loc{pack: pack, off: e.off, len: uint32(e.len)}
			}
		}
	}
	if len(o.known) == 0 {
		o.known[""] = true // looked, found none
	}
}

// get returns the content kept under sum, which must be size bytes long;
// ok is false when the object is missing, damaged, or holds anything else.
func (o *objects) get(sum [sha256.Size]byte, size int64) (data []byte, ok bool) {
	for again := range 2 {
		packed, found := o.read(sum, size, again == 1)
		if found {
			return decodeObject(packed, sum, size)
		}
	}
	packed, err := os.ReadFile(o.legacyPath(sum))
	if err != nil {
		return nil, false
	}
	return decodeObject(packed, sum, size)
}

// read finds the compressed bytes of sum, a content of size bytes, in a
// pack; again reads the packs other processes added since.
func (o *objects) read(sum [sha256.Size]byte, size int64, again bool) ([]byte, bool) {
	o.mu.Lock()
	o.refreshLocked(again)
	l, ok := o.where[sum]
	var f *os.File
	if ok {
		f = o.fileLocked(l.pack)
	}
	o.mu.Unlock()
	// zstd never makes a content much larger: a damaged index that says
	// otherwise must not size the read.
	if f == nil || int64(l.len) > size+size>>7+1<<10 {
		return nil, false
	}
	buf := make([]byte, l.len)
	if _, err := f.ReadAt(buf, l.off); err != nil {
		return nil, false
	}
	return buf, true
}

// maxObject bounds what a damaged index could make a read allocate: no
// kept content is larger than a file a scan reads whole.
const maxObject = 1 << 30

// fileLocked is pack number i, open for reading; nil when it is gone
// (evicted by another process) or cannot be opened.
func (o *objects) fileLocked(i int32) *os.File {
	if f := o.open[int(i)]; f != nil {
		return f
	}
	f, err := os.Open(filepath.Join(o.packs, o.names[i]+packExt))
	if err != nil {
		return nil
	}
	o.open[int(i)] = f
	return f
}

// close seals the pack being written and closes every pack open.
func (o *objects) close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	err := o.sealLocked()
	for i, f := range o.open {
		_ = f.Close()
		delete(o.open, i)
	}
	return err
}

// decodeObject decompresses an object and checks it is the content sum
// names, of the size expected.
func decodeObject(packed []byte, sum [sha256.Size]byte, size int64) ([]byte, bool) {
	_, dec := codec()
	// One byte of room past size lets a too-long object show itself.
	data, err := dec.DecodeAll(packed, make([]byte, 0, size+1))
	if err != nil || int64(len(data)) != size || sha256.Sum256(data) != sum {
		return nil, false
	}
	return data, true
}

// writeAtomic replaces file with data through a temporary file in the same
// directory, so a reader sees the old file or the new one, never a torn
// one. It does not fsync: it is for caches, which a crash may lose.
func writeAtomic(file string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), ".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", file, err)
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", file, err)
	}
	return nil
}

// isMissing reports whether err means the path is not there, including a
// parent that is a file rather than a directory.
func isMissing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDir)
}

var errNotDir error = syscall.ENOTDIR
