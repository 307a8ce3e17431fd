package boltstore

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The page walk, on pages made by hand from bbolt's layout (see
// pagecheck.go): a 16-byte header (id 8, flags 2, count 2, overflow 4),
// then count 16-byte elements. A branch element is pos, ksize (4 bytes
// each) and the child's page id (8); a leaf element is flags, pos, ksize,
// vsize (4 bytes each); pos counts from the element itself.

const testPage = 512

// image is a file of n pages of size bytes, pages 0 and 1 left zero (the
// walk never reads the meta pages).
type image struct {
	b    []byte
	size int
}

func newImage(n, size int) *image { return &image{b: make([]byte, n*size), size: size} }

func (im *image) pages() int { return len(im.b) / im.size }

// page writes page id's header and returns the page's bytes.
func (im *image) page(id int, flags uint16, count int, overflow uint32) []byte {
	p := im.b[id*im.size : (id+1)*im.size]
	binary.LittleEndian.PutUint64(p, uint64(id))
	binary.LittleEndian.PutUint16(p[8:], flags)
	binary.LittleEndian.PutUint16(p[10:], uint16(count))
	binary.LittleEndian.PutUint32(p[12:], overflow)
	return p
}

func branchElem(p []byte, i int, pos, ksize uint32, child uint64) {
	e := p[16+16*i:]
	binary.LittleEndian.PutUint32(e, pos)
	binary.LittleEndian.PutUint32(e[4:], ksize)
	binary.LittleEndian.PutUint64(e[8:], child)
}

func leafElem(p []byte, i int, flags, pos, ksize, vsize uint32) {
	e := p[16+16*i:]
	binary.LittleEndian.PutUint32(e, flags)
	binary.LittleEndian.PutUint32(e[4:], pos)
	binary.LittleEndian.PutUint32(e[8:], ksize)
	binary.LittleEndian.PutUint32(e[12:], vsize)
}

// walker walks the image as checkPages walks a database: from a file.
func (im *image) walker(t *testing.T) *pageWalker {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pages")
	if err := os.WriteFile(path, im.b, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	n := im.pages()
	return newPageWalker(f, "/the/file", meta{pageSize: uint32(im.size), pgid: uint64(n)})
}

// wantWalk checks err: nil when says is empty, else an error naming the
// file and saying says.
func wantWalk(t *testing.T, err error, says string) {
	t.Helper()
	if says == "" {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), says) || !strings.Contains(err.Error(), "/the/file") {
		t.Fatalf("got %v; want an error naming /the/file saying %q", err, says)
	}
}

func TestPageWalkReadsOnlyPagesInTheFile(t *testing.T) {
	im := newImage(6, testPage)
	for id := 2; id < 6; id++ {
		im.page(id, 0x02, 0, 0)
	}
	for _, c := range []struct {
		id   uint64
		says string
	}{
		{1, "points to page 1, outside pages 2 to 5"},
		{2, ""},
		{5, ""},
		{6, "points to page 6, outside pages 2 to 5"},
	} {
		_, err := im.walker(t).read(c.id, "x")
		wantWalk(t, err, c.says)
	}
	im.page(3, 0x02, 0, 0)
	binary.LittleEndian.PutUint64(im.b[3*testPage:], 4)
	_, err := im.walker(t).read(3, "x")
	wantWalk(t, err, "page 3 calls itself page 4")
}

func TestPageWalkOverflow(t *testing.T) {
	im := newImage(6, testPage)
	im.page(4, 0x02, 0, 1) // pages 4 and 5, the last
	copy(im.b[5*testPage:], "the second page")
	w := im.walker(t)
	p, err := w.read(4, "x")
	if err != nil || len(p) != 2*testPage || !bytes.HasPrefix(p[testPage:], []byte("the second page")) {
		t.Fatalf("read a page and its overflow: %d bytes, %v", len(p), err)
	}
	if !w.seen.has(4) || !w.seen.has(5) || w.seen.has(3) {
		t.Fatalf("seen %v; want pages 4 and 5", w.seen)
	}
	wantWalk(t, func() error { _, err := w.read(5, "x"); return err }(), "points to page 5, which is already in use elsewhere")

	im.page(4, 0x02, 0, 2)
	_, err = im.walker(t).read(4, "x")
	wantWalk(t, err, "page 4 runs 3 pages past the end of the data")

	// A page whose overflow covers one already read.
	im.page(4, 0x02, 0, 1)
	im.page(5, 0x02, 0, 0)
	w = im.walker(t)
	if _, err := w.read(5, "x"); err != nil {
		t.Fatal(err)
	}
	_, err = w.read(4, "x")
	wantWalk(t, err, "page 4 overlaps page 5, which is already in use elsewhere")
}

// branchChain is n branch pages, each the only child of the one before,
// over a leaf: the leaf lies n levels down.
func branchChain(n int) *image {
	im := newImage(n+3, testPage)
	for i := range n {
		branchElem(im.page(2+i, 0x01, 1, 0), 0, 0, 0, uint64(3+i))
	}
	im.page(2+n, 0x02, 0, 0)
	return im
}

func TestPageWalkDepth(t *testing.T) {
	wantWalk(t, branchChain(128).walker(t).tree(2, 0), "")
	wantWalk(t, branchChain(129).walker(t).tree(2, 0), "the pages nest more than 128 deep under page 131")
}

func TestPageWalkPageTypes(t *testing.T) {
	im := newImage(4, testPage)
	im.page(2, 0x10, 0, 0)
	wantWalk(t, im.walker(t).tree(2, 0), "page 2 has type 0x10 where a branch or leaf page belongs")
	im.page(2, 0x01, 1, 0)
	branchElem(im.b[2*testPage:], 0, 0, 0, 2)
	wantWalk(t, im.walker(t).tree(2, 0), "a bucket points to page 2, which is already in use elsewhere")
}

// A page of 512 bytes holds 31 elements after its header; their keys and
// values may reach its last byte, not past it.
func TestPageWalkElementsStayInTheirPage(t *testing.T) {
	for _, flags := range []uint16{0x01, 0x02} {
		kind := map[uint16]string{0x01: "branch", 0x02: "leaf"}[flags]
		t.Run(kind, func(t *testing.T) {
			page := func(count int, lastSize uint32) error {
				im := newImage(4, testPage)
				p := im.page(2, flags, count, 0)
				im.page(3, 0x02, 0, 0)
				// Element 0's data starts right after the elements; the
				// others (zero) are empty and not buckets.
				if flags == 0x01 {
					branchElem(p, 0, 16*uint32(count), lastSize, 3)
				} else {
					leafElem(p, 0, 0, 16*uint32(count), lastSize/2, lastSize-lastSize/2)
				}
				return im.walker(t).tree(2, 0)
			}
			if flags == 0x02 {
				wantWalk(t, page(31, 0), "")
				wantWalk(t, page(32, 0), "page 2 claims 32 elements, more than its 512 bytes hold")
			}
			wantWalk(t, page(1, testPage-32), "")
			wantWalk(t, page(1, testPage-31), "page 2 element 0 points past the end of its page")
		})
	}
}

// pos counts from the element itself: the second element's data starts
// 16 bytes later than the first's for the same pos.
func TestPageWalkSecondElement(t *testing.T) {
	page := func(vsize uint32) error {
		im := newImage(3, testPage)
		p := im.page(2, 0x02, 2, 0)
		leafElem(p, 0, 0, 32, 0, 0)
		leafElem(p, 1, 0, 16, 4, vsize) // data from byte 48
		return im.walker(t).tree(2, 0)
	}
	wantWalk(t, page(testPage-48-4), "")
	wantWalk(t, page(testPage-48-3), "page 2 element 1 points past the end of its page")
}

func TestPageWalkBranchElementCount(t *testing.T) {
	build := func(count int) error {
		im := newImage(2+count+1, testPage)
		p := im.page(2, 0x01, count, 0)
		for i := range count {
			if 16+16*i+16 <= testPage {
				branchElem(p, i, 0, 0, uint64(3+i))
			}
			im.page(3+i, 0x02, 0, 0)
		}
		return im.walker(t).tree(2, 0)
	}
	wantWalk(t, build(31), "")
	wantWalk(t, build(32), "page 2 claims 32 elements, more than its 512 bytes hold")
}

// bucketValue is a bucket's value in a leaf: its root page and sequence
// (8 bytes each), then, for an inline bucket (root 0), its leaf page.
func bucketValue(root uint64, inline []byte) []byte {
	v := binary.LittleEndian.AppendUint64(nil, root)
	v = binary.LittleEndian.AppendUint64(v, 0)
	return append(v, inline...)
}

// leafPage is a leaf page of one element, key k and value v, flagged as a
// bucket when bucket is set; id 0 for an inline page.
func leafPage(id uint64, bucket bool, k string, v []byte) []byte {
	p := make([]byte, 32, 32+len(k)+len(v))
	binary.LittleEndian.PutUint64(p, id)
	binary.LittleEndian.PutUint16(p[8:], 0x02)
	binary.LittleEndian.PutUint16(p[10:], 1)
	var flags uint32
	if bucket {
		flags = 0x01
	}
	leafElem(p, 0, flags, 16, uint32(len(k)), uint32(len(v)))
	return append(append(p, k...), v...)
}

func TestPageWalkBuckets(t *testing.T) {
	emptyLeaf := func(id uint64) []byte {
		p := make([]byte, 16)
		binary.LittleEndian.PutUint64(p, id)
		binary.LittleEndian.PutUint16(p[8:], 0x02)
		return p
	}
	withRoot := func(v []byte) *image {
		im := newImage(4, testPage)
		copy(im.b[2*testPage:], leafPage(2, true, "b", v))
		copy(im.b[3*testPage:], emptyLeaf(3))
		return im
	}
	for _, c := range []struct {
		name string
		v    []byte
		says string
	}{
		{"a bucket on page 3", bucketValue(3, nil), ""},
		{"a bucket value of 15 bytes", bucketValue(3, nil)[:15], "page 2 element 0 is a bucket of 15 bytes, too short for its header"},
		{"an inline bucket, empty", bucketValue(0, emptyLeaf(0)), ""},
		{"an inline bucket cut short", bucketValue(0, emptyLeaf(0)[:15]), "page 2 element 0's inline bucket is too short for a page"},
		{"an inline bucket that is a branch", bucketValue(0, func() []byte { p := emptyLeaf(0); p[8] = 0x01; return p }()), "page 2 element 0's inline bucket has type 0x1, not a leaf"},
		{"a bucket on a free page", bucketValue(3, nil), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			im := withRoot(c.v)
			w := im.walker(t)
			err := w.tree(2, 0)
			wantWalk(t, err, c.says)
			if err == nil && binary.LittleEndian.Uint64(c.v) == 3 && !w.seen.has(3) {
				t.Fatal("the bucket's root page was not walked")
			}
		})
	}
	// A bucket in the second element: its value lies 16 bytes further on.
	im := newImage(4, testPage)
	p := im.page(2, 0x02, 2, 0)
	leafElem(p, 0, 0, 32, 1, 0)
	copy(p[48:], "a")
	leafElem(p, 1, 0x01, 17, 1, 16) // key at 49, value at 50
	copy(p[49:], "b")
	copy(p[50:], bucketValue(3, nil))
	copy(im.b[3*testPage:], emptyLeaf(3))
	w := im.walker(t)
	if err := w.tree(2, 0); err != nil || !w.seen.has(3) {
		t.Fatalf("a bucket in the second element: %v; its root walked: %v", err, w.seen.has(3))
	}
	// An inline bucket's own elements are checked too.
	in := leafPage(0, false, "k", []byte("v"))
	binary.LittleEndian.PutUint32(in[16+12:], 100) // vsize past its end
	wantWalk(t, withRoot(bucketValue(0, in)).walker(t).tree(2, 0), "page 2 element 0's inline bucket element 0 points past the end of its page")
	// A bucket whose root is the page holding it is a loop.
	wantWalk(t, withRoot(bucketValue(2, nil)).walker(t).tree(2, 0), "points to page 2, which is already in use elsewhere")
}

// Buckets nest at most 128 deep, inline or on pages of their own.
func TestPageWalkBucketDepth(t *testing.T) {
	inline := func(levels int) error {
		p := leafPage(0, false, "k", nil)
		for range levels {
			p = leafPage(0, true, "b", bucketValue(0, p))
		}
		binary.LittleEndian.PutUint64(p, 2)
		im := newImage(3, 1<<14)
		copy(im.b[2<<14:], p)
		return im.walker(t).tree(2, 0)
	}
	wantWalk(t, inline(128), "")
	wantWalk(t, inline(129), "the buckets nest more than 128 deep at page 2")

	paged := func(levels int) error {
		im := newImage(levels+3, testPage)
		for i := range levels {
			copy(im.b[(2+i)*testPage:], leafPage(uint64(2+i), true, "b", bucketValue(uint64(3+i), nil)))
		}
		copy(im.b[(2+levels)*testPage:], leafPage(uint64(2+levels), false, "k", nil))
		return im.walker(t).tree(2, 0)
	}
	wantWalk(t, paged(128), "")
	wantWalk(t, paged(129), "the buckets nest more than 128 deep at page 130")
}

func TestPageWalkFreelist(t *testing.T) {
	const pages = 8
	list := func(ids ...uint64) *image {
		im := newImage(pages, testPage)
		p := im.page(2, 0x10, len(ids), 0)
		for i, id := range ids {
			if 16+8*i+8 <= testPage {
				binary.LittleEndian.PutUint64(p[16+8*i:], id)
			}
		}
		return im
	}
	many := func(n int) []uint64 {
		ids := make([]uint64, n)
		for i := range ids {
			ids[i] = 3
		}
		return ids
	}
	// With 0xFFFF in the count, the real count is the first 8 bytes.
	long := func(n int) *image {
		im := newImage(pages, testPage)
		p := im.page(2, 0x10, 0xFFFF, 0)
		binary.LittleEndian.PutUint64(p[16:], uint64(n))
		for i := range n {
			if 24+8*i+8 <= testPage {
				binary.LittleEndian.PutUint64(p[24+8*i:], 7)
			}
		}
		return im
	}
	for _, c := range []struct {
		name string
		im   *image
		says string
	}{
		{"pages 2 to 7... of 8", list(3, 7), ""},
		{"page 1", list(3, 1), "the freelist lists page 1, outside pages 2 to 7"},
		{"page 8", list(8), "the freelist lists page 8, outside pages 2 to 7"},
		{"62 ids fill the page", list(many(62)...), ""},
		{"63 ids", list(many(63)...), "the freelist, page 2, claims 63 pages, more than it holds"},
		{"a long list of 61 ids", long(61), ""},
		{"a long list of 62 ids", long(62), "the freelist, page 2, claims 62 pages, more than it holds"},
		{"not a freelist", func() *image { im := list(3); im.page(2, 0x02, 0, 0); return im }(), "the freelist, page 2, has type 0x2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantWalk(t, c.im.walker(t).freelist(2), c.says)
		})
	}
	// The freelist's page is in use: nothing else may point to it.
	im := list(3)
	w := im.walker(t)
	if err := w.freelist(2); err != nil {
		t.Fatal(err)
	}
	wantWalk(t, w.tree(2, 0), "points to page 2, which is already in use elsewhere")
}

// checkPages walks from the meta page bbolt uses: its freelist (unless it
// has none) and its root.
func TestCheckPagesFollowsTheMetaPage(t *testing.T) {
	ps := os.Getpagesize()
	build := func(freelist uint64, edit func(b []byte)) string {
		m0, m1 := goodMeta(uint32(ps), 4, 4), goodMeta(uint32(ps), 4, 5)
		m0.root, m0.freelist = 3, freelist
		m1.root, m1.freelist = 3, freelist
		b := metaFile(ps, 4, m0, m1)
		im := &image{b: b, size: ps}
		im.page(2, 0x10, 0, 0)
		im.page(3, 0x02, 0, 0)
		edit(b)
		path := filepath.Join(t.TempDir(), "f.db")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	nothing := func([]byte) {}
	if err := checkPages(build(2, nothing)); err != nil {
		t.Fatal(err)
	}
	badFreelist := func(b []byte) { b[2*ps+8] = 0x02 }
	if err := checkPages(build(2, badFreelist)); err == nil || !strings.Contains(err.Error(), "the freelist, page 2") {
		t.Fatalf("a damaged freelist: %v", err)
	}
	// With no freelist, page 2 is not read.
	if err := checkPages(build(noFreelist, badFreelist)); err != nil {
		t.Fatalf("no freelist: %v", err)
	}
	badRoot := func(b []byte) { b[3*ps+8] = 0x10 }
	if err := checkPages(build(2, badRoot)); err == nil || !strings.Contains(err.Error(), "page 3 has type 0x10") {
		t.Fatalf("a damaged root: %v", err)
	}
}
