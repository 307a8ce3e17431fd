package snapshot

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"

	"retrace/state"
)

// The index is the stat cache of one workspace, kept between processes so
// that a new one does not read every file again: for each file, the stamp
// it had when it was hashed and its digest. It is a cache: written without
// fsync, and a damaged, foreign or unreadable one is ignored and rebuilt.
//
// Layout, all integers varints:
//
//	magic "retrace-snapshot-index\x00" and version byte 1
//	len(root) root                     the workspace it describes
//	count
//	count times: len(path) path size mtime ctime ino mode sha256(32 bytes)
//	sha256 of everything before it     so damage is caught, not trusted
const (
	indexMagic   = "retrace-snapshot-index\x00"
	indexVersion = 1
)

var errBadIndex = errors.New("not a valid index")

// indexFile names the index of the workspace at root: a hash of the path,
// so any root maps to one short, safe file name.
func indexFile(cacheDir, root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(cacheDir, "index", hex.EncodeToString(sum[:16]))
}

// encodeIndex writes the entries worth keeping: files whose content was
// hashed and whose stamp can vouch for it on a later scan.
func encodeIndex(root string, dirs map[string]*listing) []byte {
	n := 0
	for _, l := range dirs {
		for _, e := range l.entries {
			if e.vouched() {
				n++
			}
		}
	}
	b := make([]byte, 0, 64+len(root)+n*100)
	b = append(b, indexMagic...)
	b = append(b, indexVersion)
	b = binary.AppendUvarint(b, uint64(len(root)))
	b = append(b, root...)
	b = binary.AppendUvarint(b, uint64(n))
	for dir, l := range dirs {
		for i, e := range l.entries {
			if !e.vouched() {
				continue
			}
			p := join(dir, l.names[i])
			b = binary.AppendUvarint(b, uint64(len(p)))
			b = append(b, p...)
			b = binary.AppendVarint(b, e.size)
			b = binary.AppendVarint(b, e.mtime)
			b = binary.AppendVarint(b, e.ctime)
			b = binary.AppendUvarint(b, e.ino)
			b = binary.AppendUvarint(b, uint64(e.mode))
			b = append(b, e.sum[:]...)
		}
	}
	sum := sha256.Sum256(b)
	return append(b, sum[:]...)
}

// decodeIndex reads what encodeIndex wrote for root, as listings by
// directory, and how many entries they hold. Anything else, from a
// truncated write to another workspace's index, is errBadIndex.
func decodeIndex(root string, data []byte) (map[string]*listing, int, error) {
	if len(data) < sha256.Size {
		return nil, 0, fmt.Errorf("%w: %d bytes", errBadIndex, len(data))
	}
	body, tail := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], tail) {
		return nil, 0, fmt.Errorf("%w: checksum does not match", errBadIndex)
	}
	r := indexReader{b: body}
	if magic := r.bytes(len(indexMagic)); string(magic) != indexMagic || r.byte() != indexVersion {
		return nil, 0, fmt.Errorf("%w: unknown header", errBadIndex)
	}
	if got := r.str(); r.err == nil && got != root {
		return nil, 0, fmt.Errorf("%w: describes %q", errBadIndex, got)
	}
	n := r.uvarint()
	// Each entry takes at least 38 bytes; a count beyond what is left is
	// damage, and must not size an allocation.
	if r.err == nil && n > uint64(len(r.b))/38 {
		return nil, 0, fmt.Errorf("%w: %d entries in %d bytes", errBadIndex, n, len(r.b))
	}
	files := make(map[string]entry, n)
	for range n {
		p := r.str()
		var e entry
		e.size, e.mtime, e.ctime = r.varint(), r.varint(), r.varint()
		e.ino, e.mode = r.uvarint(), fs.FileMode(r.uvarint())
		copy(e.sum[:], r.bytes(sha256.Size))
		e.hashed = true
		if r.err != nil {
			break
		}
		if _, dup := files[p]; dup || !state.ValidPath(p) || !e.isRegular() || e.size < 0 {
			return nil, 0, fmt.Errorf("%w: entry %q", errBadIndex, p)
		}
		files[p] = e
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d bytes after the last entry", len(r.b))
	}
	if r.err != nil {
		return nil, 0, fmt.Errorf("%w: %v", errBadIndex, r.err)
	}
	return listingsOf(files), len(files), nil
}

// listingsOf groups files by directory into sorted listings.
func listingsOf(files map[string]entry) map[string]*listing {
	dirs := map[string]*listing{}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		dir := path.Dir(p)
		l := dirs[dir]
		if l == nil {
			l = &listing{}
			dirs[dir] = l
		}
		l.add(path.Base(p), files[p])
	}
	return dirs
}

// indexReader reads the index's fields in turn; the first shortfall sticks
// in err and every later read returns zero.
type indexReader struct {
	b   []byte
	err error
}

func (r *indexReader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.err = errors.New("truncated")
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *indexReader) byte() byte {
	if b := r.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *indexReader) str() string {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail("a length past the end")
		return ""
	}
	return string(r.bytes(int(n)))
}

func (r *indexReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("a bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *indexReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("a bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *indexReader) fail(msg string) {
	if r.err == nil {
		r.err = errors.New(msg)
	}
}

// loadIndex reads the workspace's index, and how many entries it holds;
// any failure means starting from nothing, which costs one full read of
// the workspace and nothing else.
func loadIndex(file, root string) (map[string]*listing, int) {
	data, err := os.ReadFile(file)
	if err != nil {
		return map[string]*listing{}, 0
	}
	dirs, n, err := decodeIndex(root, data)
	if err != nil {
		return map[string]*listing{}, 0
	}
	return dirs, n
}

// saveIndex writes the workspace's index in place of the old one.
func saveIndex(file, root string, dirs map[string]*listing) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return fmt.Errorf("make index directory: %w", err)
	}
	return writeAtomic(file, encodeIndex(root, dirs))
}
