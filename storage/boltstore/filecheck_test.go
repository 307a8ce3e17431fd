package boltstore

import (
	"encoding/binary"
	"errors"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"retrace/storage"
)

// checkFile, on files made by hand from bbolt's on-disk format: a page
// header of 16 bytes (id, flags, count, overflow), then the meta: magic
// 0xED0CDAED, version 2, page size, flags (4 bytes each), root page,
// sequence, freelist page, page count (pgid), txid, and the FNV-64a of the
// 56 bytes before it (8 bytes each).

// fileMeta is a meta page's fields as a test writes them.
type fileMeta struct {
	magic, version, pageSize uint32
	root, freelist, pgid     uint64
	txid                     uint64
	badSum                   bool // store a checksum one off
}

func goodMeta(pageSize uint32, pgid, txid uint64) fileMeta {
	return fileMeta{magic: 0xED0CDAED, version: 2, pageSize: pageSize, root: pgid - 1, freelist: pgid - 2, pgid: pgid, txid: txid}
}

// metaBytes is meta page id of pageSize bytes.
func metaBytes(id uint64, pageSize int, m fileMeta) []byte {
	p := make([]byte, pageSize)
	binary.LittleEndian.PutUint64(p, id)
	binary.LittleEndian.PutUint16(p[8:], 0x04) // a meta page
	b := p[16:]
	binary.LittleEndian.PutUint32(b[0:], m.magic)
	binary.LittleEndian.PutUint32(b[4:], m.version)
	binary.LittleEndian.PutUint32(b[8:], m.pageSize)
	binary.LittleEndian.PutUint64(b[16:], m.root)
	binary.LittleEndian.PutUint64(b[32:], m.freelist)
	binary.LittleEndian.PutUint64(b[40:], m.pgid)
	binary.LittleEndian.PutUint64(b[48:], m.txid)
	h := fnv.New64a()
	h.Write(b[:56])
	sum := h.Sum64()
	if m.badSum {
		sum++
	}
	binary.LittleEndian.PutUint64(b[56:], sum)
	return p
}

// metaFile is two meta pages of pageSize bytes followed by zeroed pages up
// to pages in all.
func metaFile(pageSize, pages int, m0, m1 fileMeta) []byte {
	b := append(metaBytes(0, pageSize, m0), metaBytes(1, pageSize, m1)...)
	return append(b, make([]byte, (pages-2)*pageSize)...)
}

func writeTemp(t *testing.T, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCheckFileChoosesTheMetaPageBboltUses(t *testing.T) {
	m0, m1 := goodMeta(512, 4, 4), goodMeta(512, 4, 5)
	m0.root, m0.freelist = 2, 3 // to tell the two apart
	for _, c := range []struct {
		name     string
		m0, m1   fileMeta
		wantTxid uint64
		wantRoot uint64
	}{
		{"page 1 newer", m0, m1, 5, 3},
		{"page 0 newer", func() fileMeta { m := m0; m.txid = 6; return m }(), m1, 6, 2},
		// bbolt takes page 0 unless page 1's txid is higher.
		{"the same txid", func() fileMeta { m := m0; m.txid = 5; return m }(), m1, 5, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := checkFile(writeTemp(t, metaFile(512, 4, c.m0, c.m1)))
			if err != nil {
				t.Fatal(err)
			}
			if m.txid != c.wantTxid || m.root != c.wantRoot || m.pageSize != 512 || m.pgid != 4 {
				t.Fatalf("got %+v; want txid %d, root %d", m, c.wantTxid, c.wantRoot)
			}
		})
	}
}

func TestCheckFileRefuses(t *testing.T) {
	// The system's page size, as bbolt makes files: with page 0 damaged,
	// page 1 is looked for there.
	ps := os.Getpagesize()
	good := func(pgid uint64) (fileMeta, fileMeta) {
		return goodMeta(uint32(ps), pgid, 4), goodMeta(uint32(ps), pgid, 5)
	}
	both := func(edit func(m *fileMeta)) (fileMeta, fileMeta) {
		m0, m1 := good(4)
		edit(&m0)
		edit(&m1)
		return m0, m1
	}
	type file struct {
		name string
		b    []byte
		// says is what the error must say; empty, the file is accepted.
		says string
		typ  error
	}
	m0, m1 := good(4)
	cases := []file{
		{"a good file", metaFile(ps, 4, m0, m1), "", nil},
		{"an empty file", nil, "empty", storage.ErrCorrupt},
		{"50 bytes", make([]byte, 50), "no bbolt header", storage.ErrNotDatabase},
		{"no magic in either page", metaFile(ps, 4, fileMeta{}, fileMeta{}), "no bbolt header", storage.ErrNotDatabase},
		{"one page without magic, one with a bad checksum", func() []byte {
			m0, m1 := good(4)
			m0.magic, m1.badSum = 1, true
			return metaFile(ps, 4, m0, m1)
		}(), "both meta pages are unreadable", storage.ErrCorrupt},
		{"format version 3", func() []byte {
			m0, m1 := both(func(m *fileMeta) { m.version = 3 })
			return metaFile(ps, 4, m0, m1)
		}(), "bbolt format version 3, want 2", storage.ErrCorrupt},
		{"a size past the last whole page", append(metaFile(ps, 4, m0, m1), 0), "not a whole number of " + itoa(ps) + "-byte pages", storage.ErrCorrupt},
	}
	for _, size := range []struct {
		ps uint32
		ok bool
	}{{256, false}, {512, true}, {768, false}, {1 << 20, true}, {1 << 21, false}} {
		m0, m1 := goodMeta(size.ps, 2, 4), goodMeta(size.ps, 2, 5)
		m0.root, m1.root, m0.freelist, m1.freelist = 1, 1, noFreelist, noFreelist
		f := file{name: "page size " + itoa(int(size.ps)), b: metaFile(int(size.ps), 2, m0, m1)}
		if !size.ok {
			f.says, f.typ = "impossible page size "+itoa(int(size.ps)), storage.ErrCorrupt
		}
		cases = append(cases, f)
	}
	for _, pg := range []struct {
		pgid uint64
		ok   bool
	}{{1, false}, {2, true}, {4, true}, {5, false}} {
		m0, m1 := good(pg.pgid)
		m0.root, m1.root, m0.freelist, m1.freelist = 1, 1, 0, 0
		f := file{name: "a page count of " + itoa(int(pg.pgid)) + " in 4 pages", b: metaFile(ps, 4, m0, m1)}
		if !pg.ok {
			f.says, f.typ = "meta page counts "+itoa(int(pg.pgid)), storage.ErrCorrupt
		}
		cases = append(cases, f)
	}
	for _, p := range []struct {
		name           string
		root, freelist uint64
		ok             bool
	}{
		{"root on the last page", 3, 2, true},
		{"root past the last page", 4, 2, false},
		{"freelist on the last page", 2, 3, true},
		{"freelist past the last page", 2, 4, false},
		{"no freelist", 2, noFreelist, true},
	} {
		m0, m1 := both(func(m *fileMeta) { m.root, m.freelist = p.root, p.freelist })
		f := file{name: p.name, b: metaFile(ps, 4, m0, m1)}
		if !p.ok {
			f.says, f.typ = "points past the end of the data", storage.ErrCorrupt
		}
		cases = append(cases, f)
	}
	// One damaged meta page: refused whatever its txid says, since that txid
	// is damaged too (a newest page can read as one commit older than the
	// valid one, as the older page's txid would).
	for _, d := range []struct {
		name             string
		bad              int // the damaged page
		badTxid, goodTxi uint64
	}{
		{"page 0 damaged, one commit older", 0, 4, 5},
		{"page 1 damaged, one commit older", 1, 4, 5},
		{"page 0 damaged, two commits older", 0, 3, 5},
		{"page 1 damaged, newer", 1, 6, 5},
		{"page 0 damaged, the same txid", 0, 5, 5},
		{"page 1 damaged, the good page at txid 0", 1, ^uint64(0), 0},
	} {
		m := [2]fileMeta{goodMeta(uint32(ps), 4, d.goodTxi), goodMeta(uint32(ps), 4, d.goodTxi)}
		m[d.bad].txid, m[d.bad].badSum = d.badTxid, true
		good := itoa(1 - d.bad)
		cases = append(cases, file{name: d.name, b: metaFile(ps, 4, m[0], m[1]),
			says: "meta page " + itoa(d.bad) + " is damaged (checksum mismatch), so whether it held the latest commit cannot be told; " +
				"bbolt would silently fall back to meta page " + good + " (txid " + strconv.FormatUint(d.goodTxi, 10) + ")",
			typ: storage.ErrCorrupt})
	}
	// The way out is named, with the pages the right way round.
	m0, m1 = good(4)
	m1.badSum = true
	cases = append(cases, file{name: "the way out", b: metaFile(ps, 4, m0, m1),
		says: "restore a backup, or if the last write was cut short by a crash accept the commit of meta page 0 with `bbolt surgery copy-page ",
		typ:  storage.ErrCorrupt})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeTemp(t, c.b)
			_, err := checkFile(path)
			if c.says == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), path) || !errors.Is(err, c.typ) {
				t.Fatalf("got %v; want an error naming %s, wrapping %v, saying %q", err, path, c.typ, c.says)
			}
		})
	}
}

// A damaged page 0 leaves no page size to go by: page 1 is looked for one
// memory page in, where bbolt writes it. The file is refused (one page is
// damaged), with page 1 found and named.
func TestCheckFileFindsPageOneWithoutPageZero(t *testing.T) {
	ps := os.Getpagesize()
	m0, m1 := goodMeta(uint32(ps), 4, 4), goodMeta(uint32(ps), 4, 5)
	m0.magic = 0
	_, err := checkFile(writeTemp(t, metaFile(ps, 4, m0, m1)))
	if err == nil || !strings.Contains(err.Error(), "meta page 0 is damaged (no bbolt magic number)") || !strings.Contains(err.Error(), "meta page 1 (txid 5)") {
		t.Fatalf("got %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
