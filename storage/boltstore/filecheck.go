package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"

	"retrace/storage"
)

// checkFile looks at a database file before bbolt does. bbolt trusts its
// file: on a truncated one it can panic, or die of SIGBUS reading past the
// end of its mapping, and it silently turns a zero-length file into a new
// empty database. So we read the two meta pages ourselves (their layout is
// bbolt's public on-disk format) and refuse what bbolt could not safely open.
func checkFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	size := fi.Size()
	damaged := func(format string, args ...any) error {
		return &storage.CorruptError{Path: path, Reason: fmt.Sprintf(format, args...)}
	}
	if size == 0 {
		return damaged("the file is empty (0 bytes); a crash or a full disk may have emptied it")
	}

	m0, err0 := readMeta(f, 0)
	pageSize := int64(m0.pageSize)
	if err0 != nil {
		pageSize = int64(os.Getpagesize())
	}
	m1, err1 := readMeta(f, pageSize)
	switch {
	case err0 != nil && err1 != nil:
		if errors.Is(err0, errNoMagic) && errors.Is(err1, errNoMagic) {
			return fmt.Errorf("%s: %w (no bbolt header)", path, storage.ErrNotDatabase)
		}
		return damaged("both meta pages are unreadable (%v; %v)", err0, err1)
	case err0 != nil:
		m0 = m1
	case err1 == nil && m1.txid > m0.txid:
		m0 = m1
	}
	m := m0
	if m.pageSize < 512 || m.pageSize > 1<<20 || m.pageSize&(m.pageSize-1) != 0 {
		return damaged("meta page gives an impossible page size %d", m.pageSize)
	}
	ps := int64(m.pageSize)
	if size%ps != 0 {
		return damaged("its size (%d bytes) is not a whole number of %d-byte pages; it was probably truncated", size, ps)
	}
	if need := int64(m.pgid) * ps; m.pgid < 2 || need > size || need < 0 {
		return damaged("it is %d bytes but its pages reach byte %d; it was truncated", size, need)
	}
	if m.root >= m.pgid || (m.freelist >= m.pgid && m.freelist != noFreelist) {
		return damaged("meta page points past the end of the data (root %d, freelist %d, pages %d)", m.root, m.freelist, m.pgid)
	}
	return nil
}

// meta holds the fields of a bbolt meta page that checkFile uses.
type meta struct {
	pageSize uint32
	root     uint64
	freelist uint64
	pgid     uint64
	txid     uint64
}

const (
	boltMagic   = 0xED0CDAED
	boltVersion = 2
	// A page starts with a 16-byte header (id, flags, count, overflow); the
	// meta struct follows: magic, version, pageSize, flags (4 bytes each),
	// root bucket (root page, sequence), freelist, pgid, txid, checksum
	// (8 bytes each). The checksum is FNV-64a over the bytes before it.
	pageHeaderSize = 16
	metaSize       = 64
	metaSumOffset  = 56
	noFreelist     = ^uint64(0)
)

var errNoMagic = errors.New("no bbolt magic number")

// readMeta reads and validates the meta page at offset off. bbolt writes
// its fields in native byte order; retrace runs on little-endian machines.
func readMeta(r io.ReaderAt, off int64) (meta, error) {
	buf := make([]byte, pageHeaderSize+metaSize)
	if _, err := r.ReadAt(buf, off); err != nil {
		if errors.Is(err, io.EOF) {
			return meta{}, fmt.Errorf("meta page at byte %d: %w", off, errNoMagic)
		}
		return meta{}, err
	}
	b := buf[pageHeaderSize:]
	le := binary.LittleEndian
	if le.Uint32(b[0:]) != boltMagic {
		return meta{}, fmt.Errorf("meta page at byte %d: %w", off, errNoMagic)
	}
	if v := le.Uint32(b[4:]); v != boltVersion {
		return meta{}, fmt.Errorf("meta page at byte %d: bbolt format version %d, want %d", off, v, boltVersion)
	}
	h := fnv.New64a()
	h.Write(b[:metaSumOffset])
	if h.Sum64() != le.Uint64(b[metaSumOffset:]) {
		return meta{}, fmt.Errorf("meta page at byte %d: checksum mismatch", off)
	}
	return meta{
		pageSize: le.Uint32(b[8:]),
		root:     le.Uint64(b[16:]),
		freelist: le.Uint64(b[32:]),
		pgid:     le.Uint64(b[40:]),
		txid:     le.Uint64(b[48:]),
	}, nil
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
