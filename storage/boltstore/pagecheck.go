package boltstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"

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
// It is one read of every reachable page: the full checks (Verify, gc,
// compact, a migration, and the first write after a crash) run it, and so
// does any operation that has no narrower scope (see reach.go).
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
	w := newPageWalker(f, path, m)
	if err := w.freelist(m.freelist); err != nil {
		return err
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
	pages    uint64  // the high-water mark: pages 0 to pages-1 exist
	seen     pageSet // pages of the buckets walked
	onPath   pageSet // pages find read on its way to a key
	free     pageSet // pages the freelist lists
	// found keeps the pages find checked, so that finds of many keys in
	// one bucket read and check each page on their ways once.
	found map[uint64]foundPage
	// bufs holds a page buffer for each depth of a bucket's tree, used
	// again for every page read at that depth: a walk allocates a few
	// pages, not a copy of everything it reads.
	bufs [][]byte
}

func newPageWalker(r io.ReaderAt, path string, m meta) *pageWalker {
	n := m.pgid
	return &pageWalker{r: r, path: path, pageSize: uint64(m.pageSize), pages: n,
		seen: newPageSet(n), onPath: newPageSet(n), free: newPageSet(n), found: map[uint64]foundPage{}}
}

// pageSet is a set of page ids below a bound: one bit each, so that even
// a walk of a gigabyte file keeps its sets in 32 KiB apiece.
type pageSet []uint64

func newPageSet(n uint64) pageSet    { return make(pageSet, (n+63)/64) }
func (s pageSet) has(id uint64) bool { return s[id/64]&(1<<(id%64)) != 0 }
func (s pageSet) add(id uint64)      { s[id/64] |= 1 << (id % 64) }

func (w *pageWalker) damaged(format string, args ...any) error {
	return &storage.CorruptError{Path: w.path, Reason: fmt.Sprintf(format, args...)}
}

// read reads page id with its overflow pages, marking them seen.
func (w *pageWalker) read(id uint64, from string) ([]byte, error) {
	return w.readInto(nil, id, from)
}

// readInto is read into buf, when it has room, instead of a new buffer.
func (w *pageWalker) readInto(buf []byte, id uint64, from string) ([]byte, error) {
	if id < 2 || id >= w.pages {
		return nil, w.damaged("%s points to page %d, outside pages 2 to %d", from, id, w.pages-1)
	}
	if w.seen.has(id) || w.onPath.has(id) {
		return nil, w.damaged("%s points to page %d, which is already in use elsewhere", from, id)
	}
	p, err := w.readAt(buf, id)
	if err != nil {
		return nil, err
	}
	overflow := uint64(binary.LittleEndian.Uint32(p[12:]))
	for i := id; i <= id+overflow; i++ {
		if w.seen.has(i) || w.onPath.has(i) {
			return nil, w.damaged("page %d overlaps page %d, which is already in use elsewhere", id, i)
		}
		w.seen.add(i)
	}
	return w.rest(p)
}

// readAt reads page id's first page and checks its header: that it is
// the page it should be, and its overflow stays inside the data, and that
// the freelist does not list it or its overflow.
func (w *pageWalker) readAt(buf []byte, id uint64) ([]byte, error) {
	p := slices.Grow(buf[:0], int(w.pageSize))[:w.pageSize]
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
		if w.free.has(i) {
			return nil, w.damaged("page %d is in use, but the freelist lists it as free", i)
		}
	}
	return p, nil
}

// rest reads the overflow pages of the page p starts.
func (w *pageWalker) rest(p []byte) ([]byte, error) {
	id, overflow := binary.LittleEndian.Uint64(p), uint64(binary.LittleEndian.Uint32(p[12:]))
	if overflow > 0 {
		p = slices.Grow(p, int(overflow*w.pageSize))[:(overflow+1)*w.pageSize]
		if _, err := w.r.ReadAt(p[w.pageSize:], int64((id+1)*w.pageSize)); err != nil {
			return nil, fmt.Errorf("read %s page %d: %w", w.path, id, err)
		}
	}
	return p, nil
}

// bucketRef is where a bucket's pages are: its root page or, when the
// root is 0, its inline page, inside its parent's value.
type bucketRef struct {
	root   uint64
	inline []byte
	where  string // the inline page, for messages
}

// childFunc is told of each bucket a walked page holds: its key, where its
// pages are, and how deep it nests.
type childFunc func(key []byte, ref bucketRef, depth int) error

// tree checks the page id and every page under it, through branch pages
// and into every bucket.
func (w *pageWalker) tree(id uint64, depth int) error {
	return w.bucket(bucketRef{root: id}, depth, w.deep)
}

// deep is the childFunc of a whole walk: every bucket is walked too.
func (w *pageWalker) deep(_ []byte, ref bucketRef, depth int) error {
	return w.bucket(ref, depth, w.deep)
}

// bucket checks a bucket's own pages, and tells child of the buckets they
// hold.
func (w *pageWalker) bucket(ref bucketRef, depth int, child childFunc) error {
	if ref.root == 0 {
		return w.leaf(ref.inline, int(binary.LittleEndian.Uint16(ref.inline[10:])), ref.where, depth, child)
	}
	return w.subtree(ref.root, depth, child)
}

// subtree checks the page id and, through branch pages, every page under
// it.
func (w *pageWalker) subtree(id uint64, depth int, child childFunc) error {
	if depth > maxTreeDepth {
		return w.damaged("the pages nest more than %d deep under page %d", maxTreeDepth, id)
	}
	for len(w.bufs) <= depth {
		w.bufs = append(w.bufs, nil)
	}
	p, err := w.readInto(w.bufs[depth], id, "a bucket")
	if err != nil {
		return err
	}
	w.bufs[depth] = p // and its room, if an overflow made more
	flags, count := binary.LittleEndian.Uint16(p[8:]), int(binary.LittleEndian.Uint16(p[10:]))
	where := fmt.Sprintf("page %d", id)
	switch flags {
	case leafPageFlag:
		return w.leaf(p, count, where, depth, child)
	case branchPageFlag:
	default:
		return w.damaged("page %d has type %#x where a branch or leaf page belongs", id, flags)
	}
	if err := w.branch(p, count, where); err != nil {
		return err
	}
	for i := range count {
		if err := w.subtree(binary.LittleEndian.Uint64(p[pageHeaderSize+i*elementSize+8:]), depth+1, child); err != nil {
			return err
		}
	}
	return nil
}

// branch checks a branch page's elements: each key lies inside the page.
func (w *pageWalker) branch(p []byte, count int, where string) error {
	if err := w.elements(p, count, where); err != nil {
		return err
	}
	for i := range count {
		e := p[pageHeaderSize+i*elementSize:]
		pos, ksize := uint64(binary.LittleEndian.Uint32(e)), uint64(binary.LittleEndian.Uint32(e[4:]))
		if err := w.within(p, i, pos, ksize, where); err != nil {
			return err
		}
	}
	return nil
}

// leaf checks a leaf page (or an inline bucket's page, inside a value) and
// tells child of the buckets its elements hold.
func (w *pageWalker) leaf(p []byte, count int, where string, depth int, child childFunc) error {
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
		start := uint64(pageHeaderSize+i*elementSize) + pos
		ref, err := w.bucketAt(p[start+ksize:start+ksize+vsize], fmt.Sprintf("%s element %d", where, i))
		if err != nil {
			return err
		}
		if depth+1 > maxTreeDepth {
			return w.damaged("the buckets nest more than %d deep at %s", maxTreeDepth, where)
		}
		if err := child(p[start:start+ksize], ref, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// bucketAt reads the bucket a leaf element's value (at where) holds: the
// header's root page, inside the file, or the inline page after it.
func (w *pageWalker) bucketAt(value []byte, where string) (bucketRef, error) {
	if len(value) < bucketHeaderSize {
		return bucketRef{}, w.damaged("%s is a bucket of %d bytes, too short for its header", where, len(value))
	}
	if root := binary.LittleEndian.Uint64(value); root != 0 {
		if root < 2 || root >= w.pages {
			return bucketRef{}, w.damaged("a bucket points to page %d, outside pages 2 to %d", root, w.pages-1)
		}
		return bucketRef{root: root}, nil
	}
	// A copy: the page it lies in is read over by the next page at its
	// depth, and a walk keeps some refs (see collect) past that.
	inline := bytes.Clone(value[bucketHeaderSize:])
	in := where + "'s inline bucket"
	if len(inline) < pageHeaderSize {
		return bucketRef{}, w.damaged("%s is too short for a page", in)
	}
	if flags := binary.LittleEndian.Uint16(inline[8:]); flags != leafPageFlag {
		return bucketRef{}, w.damaged("%s has type %#x, not a leaf", in, flags)
	}
	return bucketRef{inline: inline, where: in}, nil
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

// freelist checks the freelist page and the page ids it lists, which
// no page in use may be.
func (w *pageWalker) freelist(id uint64) error {
	if id == noFreelist {
		return nil // bbolt's NoFreelistSync: the freelist is not kept
	}
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
		free := binary.LittleEndian.Uint64(p[start+8*i:])
		if free < 2 || free >= w.pages {
			return w.damaged("the freelist lists page %d, outside pages 2 to %d", free, w.pages-1)
		}
		if w.seen.has(free) {
			return w.damaged("the freelist lists page %d, which is in use", free)
		}
		w.free.add(free)
	}
	return nil
}

// find checks the pages bbolt reads to reach key in a bucket, and no
// others: from the bucket's root, through branch pages, to the leaf that
// holds key or would hold it (where a put would go). Each page is checked
// whole, its keys in order, so that bbolt's binary search takes the same
// branch this one does. It returns key's value and whether it is a
// bucket; nil when key is not there.
//
// Several finds cross the same branch pages, so a page find reads may be
// read again by another find, but not by a bucket's walk, nor twice on one
// way down (a loop).
func (w *pageWalker) find(ref bucketRef, key []byte, depth int) (value []byte, bucket bool, err error) {
	var page foundPage
	if ref.root == 0 {
		if page, err = w.checkFound(ref.inline, ref.where, depth); err != nil {
			return nil, false, err
		}
	}
	var way []uint64
	for id := ref.root; id != 0; {
		if depth > maxTreeDepth {
			return nil, false, w.damaged("the pages nest more than %d deep under page %d", maxTreeDepth, id)
		}
		if slices.Contains(way, id) {
			return nil, false, w.damaged("page %d points back to itself through its children", id)
		}
		var ok bool
		if page, ok = w.found[id]; !ok {
			p, err := w.readOnPath(id, way)
			if err != nil {
				return nil, false, err
			}
			if page, err = w.checkFound(p, fmt.Sprintf("page %d", id), depth); err != nil {
				return nil, false, err
			}
			w.found[id] = page
		}
		way = append(way, id)
		if page.leaf {
			break
		}
		// bbolt's rule: the last element whose key is at most key, or the
		// first when every key is greater.
		keys := page.keys
		i := sort.Search(len(keys), func(i int) bool { return bytes.Compare(keys[i], key) >= 0 })
		if (i == len(keys) || !bytes.Equal(keys[i], key)) && i > 0 {
			i--
		}
		id = binary.LittleEndian.Uint64(page.p[pageHeaderSize+i*elementSize+8:])
		depth++
	}
	p, keys, count := page.p, page.keys, len(page.keys)
	i := sort.Search(count, func(i int) bool { return bytes.Compare(keys[i], key) >= 0 })
	if i == count || !bytes.Equal(keys[i], key) {
		return nil, false, nil
	}
	e := p[pageHeaderSize+i*elementSize:]
	pos, ksize, vsize := uint64(binary.LittleEndian.Uint32(e[4:])), uint64(binary.LittleEndian.Uint32(e[8:])), uint64(binary.LittleEndian.Uint32(e[12:]))
	start := uint64(pageHeaderSize+i*elementSize) + pos + ksize
	return p[start : start+vsize], binary.LittleEndian.Uint32(e)&bucketLeafFlag != 0, nil
}

// foundPage is a page find checked: a leaf or a branch, and its keys.
type foundPage struct {
	p    []byte
	leaf bool
	keys [][]byte
}

// checkFound checks a page find reads on its way down, as a walk would
// check it: a branch page's elements and keys, or a leaf's, with the
// headers of the buckets it holds as far as bbolt reads them when it
// opens one (inline pages whole).
func (w *pageWalker) checkFound(p []byte, where string, depth int) (foundPage, error) {
	flags, count := binary.LittleEndian.Uint16(p[8:]), int(binary.LittleEndian.Uint16(p[10:]))
	switch flags {
	case leafPageFlag:
		if err := w.leaf(p, count, where, depth, func([]byte, bucketRef, int) error { return nil }); err != nil {
			return foundPage{}, err
		}
	case branchPageFlag:
		if err := w.branch(p, count, where); err != nil {
			return foundPage{}, err
		}
		if count == 0 {
			return foundPage{}, w.damaged("%s is a branch page with no elements", where)
		}
	default:
		return foundPage{}, w.damaged("%s has type %#x where a branch or leaf page belongs", where, flags)
	}
	keys, err := w.keys(p, count, where)
	if err != nil {
		return foundPage{}, err
	}
	return foundPage{p: p, leaf: flags == leafPageFlag, keys: keys}, nil
}

// readOnPath reads page id for find: checked as read checks it, except
// that other finds may have read it; way is the pages above it on this
// find's way down.
func (w *pageWalker) readOnPath(id uint64, way []uint64) ([]byte, error) {
	if id < 2 || id >= w.pages {
		return nil, w.damaged("a bucket points to page %d, outside pages 2 to %d", id, w.pages-1)
	}
	if w.seen.has(id) {
		return nil, w.damaged("a bucket points to page %d, which is already in use elsewhere", id)
	}
	p, err := w.readAt(nil, id)
	if err != nil {
		return nil, err
	}
	overflow := uint64(binary.LittleEndian.Uint32(p[12:]))
	for i := id; i <= id+overflow; i++ {
		if w.seen.has(i) {
			return nil, w.damaged("page %d overlaps page %d, which is already in use elsewhere", id, i)
		}
		w.onPath.add(i)
	}
	return w.rest(p)
}

// keys returns the keys of a checked page's elements, which must rise.
func (w *pageWalker) keys(p []byte, count int, where string) ([][]byte, error) {
	leaf := binary.LittleEndian.Uint16(p[8:]) == leafPageFlag
	keys := make([][]byte, count)
	for i := range count {
		e := p[pageHeaderSize+i*elementSize:]
		pos, ksize := uint64(binary.LittleEndian.Uint32(e)), uint64(binary.LittleEndian.Uint32(e[4:]))
		if leaf {
			pos, ksize = uint64(binary.LittleEndian.Uint32(e[4:])), uint64(binary.LittleEndian.Uint32(e[8:]))
		}
		start := uint64(pageHeaderSize+i*elementSize) + pos
		keys[i] = p[start : start+ksize]
		if i > 0 && bytes.Compare(keys[i-1], keys[i]) >= 0 {
			return nil, w.damaged("%s's keys are out of order at element %d", where, i)
		}
	}
	return keys, nil
}
