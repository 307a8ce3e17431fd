package boltstore_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// variant is one damaged file and what must be true of it beyond the rules
// every variant follows (see checkProbe).
type variant struct {
	name string
	data []byte
	// errorSays lists what some error must say; set, the variant must be
	// refused.
	errorSays []string
	// intact: the damage hits nothing the store uses, so everything must
	// read back as before, with no error.
	intact bool
	// derived: the damage hits only data made from the rest (the memory
	// log's snapshot), so everything must read back as before, verify
	// must report it, and writes go on.
	derived bool
}

// damageVariants breaks the good file every way the reliability
// requirements list: zero length, garbage, each 4 KiB truncation point,
// either meta page flipped or zeroed, each page zeroed, pages overwritten,
// pointers inside pages bent, and single bytes flipped (one of them inside
// the record of version 18 of the chat, chatID).
func damageVariants(t *testing.T, good []byte, chatID string) []variant {
	t.Helper()
	d := &damager{good: good, rng: rand.New(rand.NewPCG(0xda, 0x3a)), types: pageTypes(t, good), derived: derivedPages(t, good)}
	d.newest, d.older = newestMeta(good)
	vs := []variant{
		{name: "zero length", data: []byte{}, errorSays: []string{"empty"}},
		{name: "64 KiB of random bytes", data: d.garbage(64 << 10), errorSays: []string{"not a retrace database"}},
		{name: "100 random bytes", data: d.garbage(100)},
		{name: "64 KiB of zeros", data: make([]byte, 64<<10)},
		{name: "a text file", data: []byte("# notes\nnot a database\n")},
		{name: "both meta pages zeroed", data: d.edit(func(b []byte) { clear(b[:2*page]) })},
		{name: "truncated mid-page", data: good[:len(good)/2+100], errorSays: []string{"truncated"}},
		{name: "a value byte flipped", data: d.edit(func(b []byte) { b[bytes.Index(b, []byte(marker))+5] ^= 0x20 }),
			errorSays: []string{"session " + chatID, "version 18", "checksum"}},
		// "memory 10" is the text the memory log's eleventh entry adds (memoryEvents).
		{name: "a memory's byte flipped", data: d.edit(func(b []byte) { b[bytes.Index(b, []byte("memory 10: "))+3] ^= 0x20 }),
			errorSays: []string{"memory log v11", "checksum"}},
	}
	vs = append(vs, d.truncations()...)
	vs = append(vs, d.metaPages()...)
	vs = append(vs, d.wholePages()...)
	vs = append(vs, d.pointers()...)
	vs = append(vs, d.flippedBytes(24)...)
	return vs
}

const page = 4096

// damager makes damaged copies of the good file.
type damager struct {
	good          []byte
	rng           *rand.Rand
	types         []string     // see pageTypes
	derived       map[int]bool // see derivedPages
	newest, older int          // the meta pages
}

func (d *damager) edit(fn func(b []byte)) []byte {
	c := bytes.Clone(d.good)
	fn(c)
	return c
}

func (d *damager) garbage(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(d.rng.UintN(256))
	}
	return b
}

func (d *damager) inUse(n int) bool { return d.types[n] != "free" && d.types[n] != "beyond the data" }

// truncations cuts the file at every page boundary.
func (d *damager) truncations() []variant {
	var vs []variant
	for size := page; size < len(d.good); size += page {
		v := variant{name: fmt.Sprintf("truncated to %d KiB", size>>10), data: d.good[:size], intact: true}
		if d.types[size/page] != "beyond the data" {
			// Even a free page cut off is refused: bbolt maps the whole
			// high-water mark and would fault on it.
			v.intact, v.errorSays = false, []string{"truncated"}
		}
		vs = append(vs, v)
	}
	return vs
}

// metaPages damages either meta page. bbolt uses the valid one with the
// higher txid and silently falls back to the other; retrace refuses a file
// with either page damaged (see TestDamagedMetaPage and
// TestMetaPageBitFlips). Offsets are into the page: a 16-byte
// page header, then magic, version, page size, flags, root, sequence,
// freelist, pgid, txid, checksum.
func (d *damager) metaPages() []variant {
	fields := []struct {
		name string
		off  int
	}{{"magic", 16}, {"root page", 32}, {"freelist page", 48}, {"page count", 56}, {"txid", 64}, {"checksum", 72}}
	var vs []variant
	for _, f := range fields {
		vs = append(vs, variant{name: "newest meta page: " + f.name + " flipped",
			data:      d.edit(func(b []byte) { b[d.newest*page+f.off] ^= 0x01 }),
			errorSays: []string{"meta page"}})
	}
	// bbolt would read the newest and lose nothing, but a damaged page
	// cannot say it is the older one: its txid is as damaged as the rest.
	for _, f := range fields {
		vs = append(vs, variant{name: "older meta page: " + f.name + " flipped",
			data:      d.edit(func(b []byte) { b[d.older*page+f.off] ^= 0x01 }),
			errorSays: []string{"meta page"}})
	}
	// The newest meta page, checksum and all, pointing its root at an empty
	// page: the file passes for a bbolt file with no buckets (schema 0),
	// which a careless upgrade would write to.
	for n := 2; n < len(d.good)/page; n++ {
		if d.types[n] != "free" {
			continue
		}
		// The walk finds it before bbolt's own check does: the new root
		// is a page the freelist lists.
		vs = append(vs, variant{name: "newest meta page: a valid checksum, the root moved to an empty page",
			data: d.edit(func(b []byte) {
				p := b[n*page : (n+1)*page]
				clear(p)
				binary.LittleEndian.PutUint64(p, uint64(n))
				binary.LittleEndian.PutUint16(p[8:], 0x02) // an empty leaf
				m := b[d.newest*page+16:]
				binary.LittleEndian.PutUint64(m[16:], uint64(n))
				h := fnv.New64a()
				h.Write(m[:56])
				binary.LittleEndian.PutUint64(m[56:], h.Sum64())
			}), errorSays: []string{fmt.Sprintf("page %d is in use, but the freelist lists it as free", n)}})
		break
	}
	return append(vs,
		variant{name: "newest meta page zeroed", data: d.edit(func(b []byte) { clear(b[d.newest*page : (d.newest+1)*page]) }), errorSays: []string{"meta page"}},
		variant{name: "older meta page zeroed", data: d.edit(func(b []byte) { clear(b[d.older*page : (d.older+1)*page]) }), errorSays: []string{"meta page"}},
		variant{name: "newest meta page: an unused byte flipped", data: d.edit(func(b []byte) { b[d.newest*page+2000] ^= 0xff }), intact: true},
	)
}

// wholePages zeroes every page but the meta pages, and overwrites a few
// with random bytes. A page in use is refused: bbolt's own pages by the
// page check, the rest of a long value by its record's checksum. A free
// page is never read, so everything reads back as before.
func (d *damager) wholePages() []variant {
	byUse := func(v variant, n int) variant {
		v.name = fmt.Sprintf("%s page %d %s", d.types[n], n, v.name)
		switch {
		case !d.inUse(n):
			v.intact = true
		case d.types[n] == "overflow" && d.derived[n]:
			v.derived = true
		case d.types[n] == "overflow":
			v.errorSays = []string{"session ", "version ", "checksum"}
		case d.types[n] == "chunk overflow":
			v.errorSays = []string{"file content sha256:", "chunk ", "checksum"}
		default:
			v.errorSays = []string{"page"}
		}
		return v
	}
	var vs []variant
	for n := 2; n < len(d.good)/page; n++ {
		if !bytes.Equal(d.good[n*page:(n+1)*page], make([]byte, page)) {
			vs = append(vs, byUse(variant{name: "zeroed", data: d.edit(func(b []byte) { clear(b[n*page : (n+1)*page]) })}, n))
		}
	}
	for range 8 {
		n := 2 + d.rng.IntN(len(d.good)/page-2)
		junk := d.garbage(page)
		vs = append(vs, byUse(variant{name: "overwritten with random bytes", data: d.edit(func(b []byte) { copy(b[n*page:], junk) })}, n))
	}
	return vs
}

// pointers damages the pointers inside the pages in use, which bbolt
// follows without bounds checks: past the end of the file (and of bbolt's
// mapping), or in a loop.
func (d *damager) pointers() []variant {
	put64 := func(at int, v uint64) []byte {
		return d.edit(func(b []byte) { binary.LittleEndian.PutUint64(b[at:], v) })
	}
	put32 := func(at int, v uint32) []byte {
		return d.edit(func(b []byte) { binary.LittleEndian.PutUint32(b[at:], v) })
	}
	refused := []string{"page"}
	root := binary.LittleEndian.Uint64(d.good[d.newest*page+32:])
	var vs []variant
	bucketDone := false
	for n := 2; n < len(d.good)/page; n++ {
		flags := binary.LittleEndian.Uint16(d.good[n*page+8:])
		count := int(binary.LittleEndian.Uint16(d.good[n*page+10:]))
		e := n*page + 16 // the first element
		if !d.inUse(n) || count == 0 {
			continue
		}
		switch flags {
		case 0x01: // branch elements: pos, ksize (4 bytes each), child page (8)
			vs = append(vs,
				variant{name: fmt.Sprintf("branch page %d: a child past the end", n), data: put64(e+8, 1<<36), errorSays: refused},
				variant{name: fmt.Sprintf("branch page %d: a child is the page itself", n), data: put64(e+8, uint64(n)), errorSays: refused},
				variant{name: fmt.Sprintf("branch page %d: a key past the end", n), data: put32(e, 1<<30), errorSays: refused})
		case 0x02: // leaf elements: flags, pos, ksize, vsize (4 bytes each)
			vs = append(vs,
				variant{name: fmt.Sprintf("leaf page %d: a key past the end", n), data: put32(e+4, 1<<30), errorSays: refused},
				variant{name: fmt.Sprintf("leaf page %d: a value past the end", n), data: put32(e+12, 1<<30), errorSays: refused})
			for i := range count {
				el := e + i*16
				pos, ksize := int(binary.LittleEndian.Uint32(d.good[el+4:])), int(binary.LittleEndian.Uint32(d.good[el+8:]))
				if bucketDone || d.good[el]&0x01 == 0 || binary.LittleEndian.Uint64(d.good[el+pos+ksize:]) == 0 {
					continue // not a bucket with pages of its own
				}
				bucketDone = true
				vs = append(vs, variant{name: fmt.Sprintf("leaf page %d: a bucket whose root is the root bucket's page", n),
					data: put64(el+pos+ksize, root), errorSays: refused})
			}
		case 0x10: // freelist: count, or 0xFFFF and the count first; page ids
			vs = append(vs,
				variant{name: fmt.Sprintf("freelist page %d: counts 2^40 pages", n),
					data: d.edit(func(b []byte) {
						binary.LittleEndian.PutUint16(b[n*page+10:], 0xFFFF)
						binary.LittleEndian.PutUint64(b[e:], 1<<40)
					}), errorSays: []string{"freelist"}},
				variant{name: fmt.Sprintf("freelist page %d: lists a page past the end", n),
					data: d.edit(func(b []byte) {
						binary.LittleEndian.PutUint16(b[n*page+10:], 1)
						binary.LittleEndian.PutUint64(b[e:], 1<<36)
					}), errorSays: []string{"freelist"}})
		}
	}
	return vs
}

// flippedBytes changes n random bytes past the meta pages, one per
// variant. Where one lands decides what happens, so only the rules every
// variant follows apply.
func (d *damager) flippedBytes(n int) []variant {
	var vs []variant
	for range n {
		at := 2*page + d.rng.IntN(len(d.good)-2*page)
		x := byte(1 + d.rng.IntN(255))
		vs = append(vs, variant{name: fmt.Sprintf("byte %d (page %d) xor %#x", at, at/page, x), data: d.edit(func(b []byte) { b[at] ^= x })})
	}
	return vs
}

// pageTypes says what bbolt makes of each page of a healthy file: "meta",
// "freelist", "branch", "leaf", "overflow" and "chunk overflow" (the rest
// of a chunk's value) pages are in use; "free" ones are not.
// It opens a copy, so the file itself is never touched.
func pageTypes(t *testing.T, b []byte) []string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	types := make([]string, len(b)/4096)
	err = db.View(func(tx *bolt.Tx) error {
		for n := range types {
			info, err := tx.Page(n)
			if err != nil {
				return err
			}
			switch {
			case info == nil:
				types[n] = "beyond the data"
			case strings.HasPrefix(info.Type, "unknown"):
				types[n] = "overflow" // the rest of a value longer than a page
			default:
				types[n] = info.Type
			}
		}
		// The rest of a chunk (chunk.go), which is alone on its bucket's
		// leaf: its pages follow that leaf.
		return tx.Bucket([]byte("chunks")).ForEachBucket(func(k []byte) error {
			content := tx.Bucket([]byte("chunks")).Bucket(k)
			return content.ForEachBucket(func(k []byte) error {
				root := int(content.Bucket(k).RootPage())
				info, err := tx.Page(root)
				if err != nil || info == nil {
					return fmt.Errorf("chunk %x: page %d: %v", k, root, err)
				}
				for n := root + 1; n <= root+info.OverflowCount; n++ {
					types[n] = "chunk overflow"
				}
				return nil
			})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return types
}

// derivedPages are the overflow pages that hold nothing but the memory
// log's snapshot: the rest of its value, past the leaf page it starts in
// (the bucket's one key), up to the end of the last page it reaches.
func derivedPages(t *testing.T, b []byte) map[int]bool {
	t.Helper()
	path := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var value []byte
	err = db.View(func(tx *bolt.Tx) error {
		if nb := tx.Bucket([]byte("memory-now")); nb != nil {
			value = bytes.Clone(nb.Get([]byte("now")))
		}
		return nil
	})
	if err != nil || len(value) == 0 {
		t.Fatalf("the good file has no memory snapshot (%v)", err)
	}
	at := bytes.Index(b, value)
	if at < 0 || bytes.Contains(b[at+1:], value) {
		t.Fatal("the memory snapshot's value is not found once in the good file")
	}
	pages := map[int]bool{}
	for n := at/page + 1; n*page < at+len(value); n++ {
		pages[n] = true
	}
	return pages
}

// newestMeta returns the page numbers of the newest and the older meta
// page of a healthy bbolt file.
func newestMeta(b []byte) (int, int) {
	txid := func(p int) uint64 { return binary.LittleEndian.Uint64(b[p*4096+64:]) }
	if txid(0) > txid(1) {
		return 0, 1
	}
	return 1, 0
}
