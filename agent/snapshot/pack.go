package snapshot

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The content cache keeps its objects in packs: a scan appends the
// contents it reads, zstd-compressed, to one pack file, and when it ends
// writes the pack's index beside it. A hundred thousand small files are
// then two files on disk, not a hundred thousand, and a lookup is a map
// probe and one read.
//
// A pack, under packs/ in the cache directory:
//
//	magic "retrace-cache-pack\x00" and version byte 1
//	records: sha256(32 bytes) uvarint(size) uvarint(len) zstd(len bytes)
//
// Its index, the same name ending in .idx, written once the pack is whole:
//
//	magic "retrace-cache-idx\x00" and version byte 1
//	uvarint(count)
//	count times, by digest: sha256(32) uvarint(offset) uvarint(len) uvarint(size)
//	sha256 of everything before it
//
// A pack without an index is being written, or was left by a process that
// stopped; nobody reads it, and eviction removes it once it is old. Packs
// are never changed once indexed: eviction writes the objects it keeps to
// a new pack and removes the old one, so a reader that has a pack open
// still reads the bytes it expects.
const (
	packMagic  = "retrace-cache-pack\x00"
	idxMagic   = "retrace-cache-idx\x00"
	packFormat = 1
	packExt    = ".pack"
	idxExt     = ".idx"
	packsDir   = "packs"
)

// packLimit is the size past which a scan starts a new pack, so that
// eviction can drop or rewrite the cache a piece at a time.
var packLimit int64 = 64 << 20

var errBadPack = errors.New("not a valid pack index")

// idxEntry is one object of a pack's index.
type idxEntry struct {
	sum            [sha256.Size]byte
	off, len, size int64
}

// packHeader is what every pack starts with.
func packHeader() []byte { return append([]byte(packMagic), packFormat) }

// appendRecord adds one object's record to b and returns it with the
// offset of the compressed bytes within the record.
func appendRecord(b []byte, sum [sha256.Size]byte, size int64, packed []byte) ([]byte, int) {
	b = append(b, sum[:]...)
	b = binary.AppendUvarint(b, uint64(size))
	b = binary.AppendUvarint(b, uint64(len(packed)))
	at := len(b)
	return append(b, packed...), at
}

// encodeIdx writes a pack's index; it sorts entries in place.
func encodeIdx(entries []idxEntry) []byte {
	slices.SortFunc(entries, func(a, b idxEntry) int { return bytes.Compare(a.sum[:], b.sum[:]) })
	b := make([]byte, 0, len(idxMagic)+1+binary.MaxVarintLen64+len(entries)*48+sha256.Size)
	b = append(b, idxMagic...)
	b = append(b, packFormat)
	b = binary.AppendUvarint(b, uint64(len(entries)))
	for _, e := range entries {
		b = append(b, e.sum[:]...)
		b = binary.AppendUvarint(b, uint64(e.off))
		b = binary.AppendUvarint(b, uint64(e.len))
		b = binary.AppendUvarint(b, uint64(e.size))
	}
	sum := sha256.Sum256(b)
	return append(b, sum[:]...)
}

// decodeIdx reads what encodeIdx wrote. Damage of any kind, caught by the
// checksum or the layout, is errBadPack: the pack is then not read.
func decodeIdx(data []byte) ([]idxEntry, error) {
	if len(data) < sha256.Size {
		return nil, fmt.Errorf("%w: %d bytes", errBadPack, len(data))
	}
	body, tail := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], tail) {
		return nil, fmt.Errorf("%w: checksum does not match", errBadPack)
	}
	r := indexReader{b: body}
	if string(r.bytes(len(idxMagic))) != idxMagic || r.byte() != packFormat {
		return nil, fmt.Errorf("%w: unknown header", errBadPack)
	}
	n := r.uvarint()
	// Each entry takes at least 35 bytes: a count past that is damage
	// and must not size an allocation.
	if r.err == nil && n > uint64(len(r.b))/35 {
		return nil, fmt.Errorf("%w: %d entries in %d bytes", errBadPack, n, len(r.b))
	}
	out := make([]idxEntry, 0, n)
	for range n {
		var e idxEntry
		copy(e.sum[:], r.bytes(sha256.Size))
		e.off, e.len, e.size = int64(r.uvarint()), int64(r.uvarint()), int64(r.uvarint())
		if r.err != nil {
			break
		}
		if e.off < int64(len(packMagic)+1) || e.len < 0 || e.size < 0 {
			return nil, fmt.Errorf("%w: an entry out of range", errBadPack)
		}
		out = append(out, e)
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d bytes after the last entry", len(r.b))
	}
	if r.err != nil {
		return nil, fmt.Errorf("%w: %v", errBadPack, r.err)
	}
	return out, nil
}

// readIdx reads the index of the pack named name in dir.
func readIdx(dir, name string) ([]idxEntry, error) {
	data, err := os.ReadFile(filepath.Join(dir, name+idxExt))
	if err != nil {
		return nil, err
	}
	return decodeIdx(data)
}

// packNames lists the packs of dir that have an index, by name (without
// extension), and those that do not.
func packNames(dir string) (indexed, bare []string, err error) {
	ents, err := os.ReadDir(dir)
	if isMissing(err) {
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, err
	}
	has := map[string]bool{}
	for _, e := range ents {
		if name, ok := strings.CutSuffix(e.Name(), idxExt); ok {
			has[name] = true
		}
	}
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), packExt)
		switch {
		case !ok:
		case has[name]:
			indexed = append(indexed, name)
		default:
			bare = append(bare, name)
		}
	}
	return indexed, bare, nil
}
