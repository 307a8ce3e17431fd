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
// It returns the meta page bbolt will use.
func checkFile(path string) (meta, error) {
	f, err := os.Open(path)
	if err != nil {
		return meta{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return meta{}, err
	}
	return checkOpenFile(f, fi, path)
}

// checkOpenFile is checkFile on a file opened already, fi its Stat.
func checkOpenFile(f *os.File, fi os.FileInfo, path string) (meta, error) {
	if !fi.Mode().IsRegular() {
		return meta{}, fmt.Errorf("%s is not a regular file", path)
	}
	size := fi.Size()
	damaged := func(format string, args ...any) error {
		return &storage.CorruptError{Path: path, Reason: fmt.Sprintf(format, args...)}
	}
	if size == 0 {
		return meta{}, damaged("the file is empty (0 bytes); a crash or a full disk may have emptied it")
	}

	m0, err0 := readMeta(f, 0)
	pageSize := int64(os.Getpagesize())
	if err0 == nil {
		pageSize = int64(m0.pageSize)
	}
	m1, err1 := readMeta(f, pageSize)
	if err0 != nil && err1 != nil {
		if errors.Is(err0, errNoMagic) && errors.Is(err1, errNoMagic) {
			return meta{}, fmt.Errorf("%s: %w (no bbolt header)", path, storage.ErrNotDatabase)
		}
		return meta{}, damaged("both meta pages are unreadable (page 0: %v; page 1: %v)", err0, err1)
	}
	// bbolt uses the valid page with the higher txid, page 0 on a tie. With
	// one page damaged the file is refused (below), but a truncation, told
	// by the valid page, is the better explanation of the two.
	m := m0
	if err0 != nil || (err1 == nil && m1.txid > m0.txid) {
		m = m1
	}
	if m.pageSize < 512 || m.pageSize > 1<<20 || m.pageSize&(m.pageSize-1) != 0 {
		return meta{}, damaged("meta page gives an impossible page size %d", m.pageSize)
	}
	ps := int64(m.pageSize)
	if size%ps != 0 {
		return meta{}, damaged("its size (%d bytes) is not a whole number of %d-byte pages; it was probably truncated", size, ps)
	}
	if have := uint64(size / ps); m.pgid < 2 || m.pgid > have {
		return meta{}, damaged("it holds %d pages of %d bytes but its meta page counts %d; it was truncated", have, ps, m.pgid)
	}
	switch {
	case err0 != nil:
		return meta{}, oneMetaDamaged(path, 0, err0, m1)
	case err1 != nil:
		return meta{}, oneMetaDamaged(path, 1, err1, m0)
	}
	if m.root >= m.pgid || (m.freelist >= m.pgid && m.freelist != noFreelist) {
		return meta{}, damaged("meta page points past the end of the data (root %d, freelist %d, pages %d)", m.root, m.freelist, m.pgid)
	}
	return m, nil
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

// oneMetaDamaged refuses a file one of whose meta pages (page badPage,
// failing with err) is damaged while the other (good) is valid.
//
// bbolt would silently read the file as of the valid page's commit. That
// loses nothing when the damaged page was the older of the two, but when
// it was the newest, the latest commit (an acknowledged checkpoint, or a
// whole session) vanishes without a word, and the next write reuses its
// pages, making the loss permanent.
//
// Which of the two the damaged page was cannot be told. bbolt alternates
// the pages, so its txid would say, but the txid is part of what is
// damaged: bit 1 of the newest txid T flipped reads T-2, which is what the
// older page would hold had its last rewrite been lost. The slot says
// nothing either: both neighbours of the valid page's txid land in the
// other slot. Nor do the other fields, which are as damaged as the txid. So
// the file is refused whatever the damaged page says, for reading and
// writing, and left untouched for a person to decide. That refuses some
// files bbolt alone reads without loss (a damaged older page); the price is
// one command, against a checkpoint lost without a word.
//
// The way out the error names works in every case where accepting the
// valid page is right: copying the valid meta page over the damaged one,
// into a new file, is bbolt's own fallback made on purpose. It loses
// nothing when the damaged page was the older one or the last write was
// cut short, and the latest commit otherwise, which is why a backup comes
// first. bbolt surgery revert-meta-page is not named: it chooses the page
// to keep by the raw txids, the damaged one's included, and copies the
// damaged page over the valid one when the damaged txid is the lower.
func oneMetaDamaged(path string, badPage int, err error, good meta) error {
	goodPage := 1 - badPage
	return &storage.CorruptError{Path: path, Reason: fmt.Sprintf(
		"meta page %d is damaged (%v), so whether it held the latest commit cannot be told; bbolt would silently fall back to meta page %d (txid %d) and lose that commit if it did, so the file was left as it is: restore a backup, or if the last write was cut short by a crash accept the commit of meta page %d with `bbolt surgery copy-page %s --from-page %d --to-page %d --output NEW.db` and use NEW.db",
		badPage, err, goodPage, good.txid, goodPage, path, goodPage, badPage)}
}

// readMeta reads and validates the meta page at offset off. bbolt writes
// its fields in native byte order; retrace runs on little-endian machines.
// A page that fails validation is still returned as read.
func readMeta(r io.ReaderAt, off int64) (meta, error) {
	buf := make([]byte, pageHeaderSize+metaSize)
	if _, err := r.ReadAt(buf, off); err != nil {
		if errors.Is(err, io.EOF) {
			return meta{}, errNoMagic
		}
		return meta{}, err
	}
	b := buf[pageHeaderSize:]
	le := binary.LittleEndian
	m := meta{
		pageSize: le.Uint32(b[8:]),
		root:     le.Uint64(b[16:]),
		freelist: le.Uint64(b[32:]),
		pgid:     le.Uint64(b[40:]),
		txid:     le.Uint64(b[48:]),
	}
	if le.Uint32(b[0:]) != boltMagic {
		return m, errNoMagic
	}
	if v := le.Uint32(b[4:]); v != boltVersion {
		return m, fmt.Errorf("bbolt format version %d, want %d", v, boltVersion)
	}
	h := fnv.New64a()
	h.Write(b[:metaSumOffset])
	if h.Sum64() != le.Uint64(b[metaSumOffset:]) {
		return m, errors.New("checksum mismatch")
	}
	return m, nil
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
