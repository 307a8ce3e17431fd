package boltstore

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"

	"retrace/storage"
)

// checkPages walks every page bbolt can reach from the file's meta page,
// reading the file itself, and checks that every page, element, key and
// value lies inside the file, and that no page is reached twice.
//
// bbolt follows the pointers inside its pages through its memory map with
// no bounds checks. Damage that points past the end of the file is a fault:
// debug.SetPanicOnFault turns it into a panic in our goroutine, but not in
// the goroutine tx.Check starts, where it kills the process. Damage that
// points a page back at itself sends a cursor down forever, until the
// goroutine's stack overflows, which kills the process too. Once this walk
// has passed, everything bbolt reads lies inside the file, and damage can
// only make it read wrong bytes: our checksums and tx.Check report those.
//
// It is one read of every reachable page: a Store runs it before its first
// operation and before every full check (Verify, and the first write).
func checkPages(path string) error {
	m, err := checkFile(path)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := &pageWalker{r: f, path: path, pageSize: uint64(m.pageSize), pages: m.pgid, seen: make([]bool, m.pgid)}
	if m.freelist != noFreelist {
		if err := w.freelist(m.freelist); err != nil {
			return err
		}
	}
	return w.tree(m.root, 0)
}

// bbolt's page layout (internal/common/page.go): a 16-byte header (id,
// flags, count, overflow), then count 16-byte elements. A branch element is
// pos, ksize (4 bytes each) and the child's page id (8); a leaf element is
// flags, pos, ksize, vsize (4 bytes each). pos counts from the element
// itself. A leaf element flagged as a bucket holds the bucket's root page
// id and sequence (8 bytes each) and, when the root is 0, the bucket's
// whole (inline) leaf page after them. A freelist page holds count page
// ids, or when count is 0xFFFF, the real count first.
const (
	branchPageFlag   = 0x01
	leafPageFlag     = 0x02
	freelistPageFlag = 0x10
	bucketLeafFlag   = 0x01
	elementSize      = 16
	bucketHeaderSize = 16
	// maxTreeDepth bounds nesting: buckets in buckets, and the levels of
	// each bucket's tree. retrace nests four buckets deep, and a tree of
	// 4 KiB pages is a handful of levels even at gigabytes.
	maxTreeDepth = 128
)

type pageWalker struct {
	r        io.ReaderAt
	path     string
	pageSize uint64
	pages    uint64 // the high-water mark: pages 0 to pages-1 exist
	seen     []bool
}

func (w *pageWalker) damaged(format string, args ...any) error {
	return &storage.CorruptError{Path: w.path, Reason: fmt.Sprintf(format, args...)}
}

// read reads page id with its overflow pages, marking them seen.
func (w *pageWalker) read(id uint64, from string) ([]byte, error) {
	if id < 2 || id >= w.pages {
		return nil, w.damaged("%s points to page %d, outside pages 2 to %d", from, id, w.pages-1)
	}
	if w.seen[id] {
		return nil, w.damaged("%s points to page %d, which is already in use elsewhere", from, id)
	}
	p := make([]byte, w.pageSize)
	if _, err := w.r.ReadAt(p, int64(id*w.pageSize)); err != nil {
		return nil, fmt.Errorf("read %s page %d: %w", w.path, id, err)
	}
	if got := binary.LittleEndian.Uint64(p); got != id {
		return nil, w.damaged("page %d calls itself page %d", id, got)
	}
	overflow := uint64(binary.LittleEndian.Uint32(p[12:]))
	if overflow >= w.pages-id {
		return nil, w.damaged("page %d runs %d pages past the end of the data", id, overflow+1)
	}
	for i := id; i <= id+overflow; i++ {
		if w.seen[i] {
			return nil, w.damaged("page %d overlaps page %d, which is already in use elsewhere", id, i)
		}
		w.seen[i] = true
	}
	if overflow > 0 {
		p = append(p, make([]byte, overflow*w.pageSize)...)
		if _, err := w.r.ReadAt(p[w.pageSize:], int64((id+1)*w.pageSize)); err != nil {
			return nil, fmt.Errorf("read %s page %d: %w", w.path, id, err)
		}
	}
	return p, nil
}

// tree checks the page id and, through branch pages, every page under it.
func (w *pageWalker) tree(id uint64, depth int) error {
	if depth > maxTreeDepth {
		return w.damaged("the pages nest more than %d deep under page %d", maxTreeDepth, id)
	}
	p, err := w.read(id, "a bucket")
	if err != nil {
		return err
	}
	flags, count := binary.LittleEndian.Uint16(p[8:]), int(binary.LittleEndian.Uint16(p[10:]))
	where := fmt.Sprintf("page %d", id)
	switch flags {
	case leafPageFlag:
		return w.leaf(p, count, where, depth)
	case branchPageFlag:
	default:
		return w.damaged("page %d has type %#x where a branch or leaf page belongs", id, flags)
	}
	if err := w.elements(p, count, where); err != nil {
		return err
	}
	for i := range count {
		e := p[pageHeaderSize+i*elementSize:]
		pos, ksize := uint64(binary.LittleEndian.Uint32(e)), uint64(binary.LittleEndian.Uint32(e[4:]))
		if err := w.within(p, i, pos, ksize, where); err != nil {
			return err
		}
		if err := w.tree(binary.LittleEndian.Uint64(e[8:]), depth+1); err != nil {
			return err
		}
	}
	return nil
}

// leaf checks a leaf page (or an inline bucket's page, inside a value) and
// the buckets its elements hold.
func (w *pageWalker) leaf(p []byte, count int, where string, depth int) error {
	if err := w.elements(p, count, where); err != nil {
		return err
	}
	for i := range count {
		e := p[pageHeaderSize+i*elementSize:]
		flags := binary.LittleEndian.Uint32(e)
		pos, ksize, vsize := uint64(binary.LittleEndian.Uint32(e[4:])), uint64(binary.LittleEndian.Uint32(e[8:])), uint64(binary.LittleEndian.Uint32(e[12:]))
		if err := w.within(p, i, pos, ksize+vsize, where); err != nil {
			return err
		}
		if flags&bucketLeafFlag == 0 {
			continue
		}
		start := uint64(pageHeaderSize+i*elementSize) + pos + ksize
		value := p[start : start+vsize]
		if len(value) < bucketHeaderSize {
			return w.damaged("%s element %d is a bucket of %d bytes, too short for its header", where, i, len(value))
		}
		if depth+1 > maxTreeDepth {
			return w.damaged("the buckets nest more than %d deep at %s", maxTreeDepth, where)
		}
		if root := binary.LittleEndian.Uint64(value); root != 0 {
			if err := w.tree(root, depth+1); err != nil {
				return err
			}
			continue
		}
		inline := value[bucketHeaderSize:]
		in := fmt.Sprintf("%s element %d's inline bucket", where, i)
		if len(inline) < pageHeaderSize {
			return w.damaged("%s is too short for a page", in)
		}
		if flags := binary.LittleEndian.Uint16(inline[8:]); flags != leafPageFlag {
			return w.damaged("%s has type %#x, not a leaf", in, flags)
		}
		if err := w.leaf(inline, int(binary.LittleEndian.Uint16(inline[10:])), in, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// elements checks that count elements fit in p after its header.
func (w *pageWalker) elements(p []byte, count int, where string) error {
	if uint64(pageHeaderSize+count*elementSize) > uint64(len(p)) {
		return w.damaged("%s claims %d elements, more than its %d bytes hold", where, count, len(p))
	}
	return nil
}

// within checks that element i's data (n bytes at pos from the element)
// lies inside p.
func (w *pageWalker) within(p []byte, i int, pos, n uint64, where string) error {
	if start := uint64(pageHeaderSize + i*elementSize); start+pos+n > uint64(len(p)) {
		return w.damaged("%s element %d points past the end of its page", where, i)
	}
	return nil
}

// freelist checks the freelist page and the page ids it lists.
func (w *pageWalker) freelist(id uint64) error {
	p, err := w.read(id, "the meta page's freelist")
	if err != nil {
		return err
	}
	if flags := binary.LittleEndian.Uint16(p[8:]); flags != freelistPageFlag {
		return w.damaged("the freelist, page %d, has type %#x", id, flags)
	}
	start, count := uint64(pageHeaderSize), uint64(binary.LittleEndian.Uint16(p[10:]))
	if count == 0xFFFF {
		if len(p) < pageHeaderSize+8 {
			return w.damaged("the freelist, page %d, is too short", id)
		}
		start, count = pageHeaderSize+8, binary.LittleEndian.Uint64(p[pageHeaderSize:])
	}
	if count > (uint64(len(p))-start)/8 {
		return w.damaged("the freelist, page %d, claims %d pages, more than it holds", id, count)
	}
	for i := range count {
		if free := binary.LittleEndian.Uint64(p[start+8*i:]); free < 2 || free >= w.pages {
			return w.damaged("the freelist lists page %d, outside pages 2 to %d", free, w.pages-1)
		}
	}
	return nil
}
