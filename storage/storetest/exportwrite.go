package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"

	"retrace/state"
	"retrace/storage"
)

// exporterOnly is a store that can do nothing but what an export reads
// (storage.Exporter): no Blob, no Blobs, no Export. WriteExport given one
// cannot read a content whole by any way round.
type exporterOnly struct{ st storage.Exporter }

func (e exporterOnly) ExportRecords(ctx context.Context, id string) (storage.Export, error) {
	return e.st.ExportRecords(ctx, id)
}

func (e exporterOnly) CopyBlob(ctx context.Context, digest string, w io.Writer) error {
	return e.st.CopyBlob(ctx, digest, w)
}

// encoded is an export as `retrace export` wrote it whole: encoding/json's
// Encoder, indenting by two spaces, over what Export returns.
func encoded(t *testing.T, st storage.Store, id string) []byte {
	t.Helper()
	ex := exportOf(t, st, id)
	if ex.Checkpoints == nil {
		ex.Checkpoints = []storage.Record{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(storage.Exported{Format: storage.ExportFormat, Export: ex}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func written(t *testing.T, st storage.Store, id string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := storage.WriteExport(ctx, &b, exporterOnly{st}, id); err != nil {
		t.Fatalf("write the export of %s: %v", id, err)
	}
	return b.Bytes()
}

// testWriteExportIsTheEncodersBytes: WriteExport writes, a content at a
// time, exactly the bytes the whole export encoded at once makes, for a
// session with branches, contents at and past the edges of a piece, an
// empty content and text JSON escapes; one with no files; one with no
// checkpoint at all. What it writes reads back and imports.
func testWriteExportIsTheEncodersBytes(t *testing.T, b Backend) {
	st := open(t, b)
	info := create(t, st, "<export> & \"quotes\" \x7f \u202e")
	s, _ := commitScript(t, st, state.New(info.ID), 21, 30)
	contents := append(largeContents(), blob(""), blob("<html> & \u2028 \x7f \u202e text\n"))
	var files []state.FileChange
	for i, c := range contents {
		files = append(files, change("data/"+string(rune('a'+i)), absent, kept(c)))
	}
	commitFiles(t, st, s, files, contents...)
	if err := st.SetHead(ctx, info.ID, 12); err != nil {
		t.Fatal(err)
	}
	commitScript(t, st, head(t, st, info.ID), 22, 8)
	plain := create(t, st, "no files")
	commitScript(t, st, state.New(plain.ID), 33, 3)
	empty := create(t, st, "nothing yet")

	for _, id := range []string{info.ID, plain.ID, empty.ID} {
		got, want := written(t, st, id), encoded(t, st, id)
		if !bytes.Equal(got, want) {
			at := 0
			for at < min(len(got), len(want)) && got[at] == want[at] {
				at++
			}
			t.Fatalf("session %s: WriteExport wrote %d bytes, the encoder %d; they part at byte %d:\n%q\nwant\n%q",
				id, len(got), len(want), at, got[max(0, at-80):min(len(got), at+80)], want[max(0, at-80):min(len(want), at+80)])
		}
	}
	read, err := storage.ReadExport(bytes.NewReader(written(t, st, info.ID)), t.TempDir())
	if err != nil {
		t.Fatalf("read the export back: %v", err)
	}
	t.Cleanup(func() { _ = read.Spool.Close() })
	to := open(t, b)
	if _, err := to.Import(ctx, read); err != nil {
		t.Fatalf("import: %v", err)
	}
	if !bytes.Equal(written(t, to, info.ID), written(t, st, info.ID)) {
		t.Fatal("the imported session exports differently")
	}
}

// heapWatch is a writer that notes the live heap, once every MiB written:
// a collection first, so what it sees is what is held, not garbage.
type heapWatch struct {
	base, most uint64
	since      int
}

func (h *heapWatch) Write(p []byte) (int, error) {
	if h.since += len(p); h.since >= 1<<20 {
		h.since = 0
		if live := liveHeap(); live > h.base {
			h.most = max(h.most, live-h.base)
		}
	}
	return len(p), nil
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// commitLarge commits one content of size random bytes, made here and
// let go of, and returns its digest.
func commitLarge(t *testing.T, st storage.Store, id string, size int) string {
	t.Helper()
	data := make([]byte, size)
	_, _ = rand.NewChaCha8([32]byte{7}).Read(data)
	c := state.Blob{Digest: storage.Digest(data), Data: data}
	commitFiles(t, st, state.New(id), []state.FileChange{change("large.bin", absent, kept(c))}, c)
	return c.Digest
}

// testWriteExportHoldsAPieceOfAContent: an export of a 16 MiB content,
// and a copy of it alone, never hold it whole: the live heap at every
// MiB they write stays under half of it. A store that read the
// content whole to write it (Blob, or a backend's whole read behind
// CopyBlob) would hold all of it while writing.
func testWriteExportHoldsAPieceOfAContent(t *testing.T, b Backend) {
	const size = 16 << 20
	st := open(t, b)
	info := create(t, st, "one large content")
	digest := commitLarge(t, st, info.ID, size)

	copied := &heapWatch{base: liveHeap()}
	if err := st.CopyBlob(ctx, digest, copied); err != nil {
		t.Fatal(err)
	}
	exported := &heapWatch{base: liveHeap()}
	if err := storage.WriteExport(ctx, exported, exporterOnly{st}, info.ID); err != nil {
		t.Fatal(err)
	}
	t.Logf("the live heap grew by at most %d KiB copying a content of %d KiB, %d KiB exporting it", copied.most>>10, size>>10, exported.most>>10)
	if copied.most > size/2 || exported.most > size/2 {
		t.Fatalf("a content of %d KiB: the live heap grew by %d KiB as it was copied, %d KiB as it was exported", size>>10, copied.most>>10, exported.most>>10)
	}
}

// testCopyBlobRefuses: CopyBlob of a content the store lacks, or of
// something that is no digest, says so and writes nothing.
func testCopyBlobRefuses(t *testing.T, b Backend) {
	st := open(t, b)
	for digest, want := range map[string]error{
		storage.Digest([]byte("nobody kept this")): storage.ErrBlobNotFound,
		"sha256:ABC":       storage.ErrInvalid,
		"../../etc/passwd": storage.ErrInvalid,
		"":                 storage.ErrInvalid,
	} {
		var w bytes.Buffer
		if err := st.CopyBlob(ctx, digest, &w); !errors.Is(err, want) || w.Len() > 0 {
			t.Errorf("CopyBlob(%q) = %v, wrote %d bytes; want %v and nothing", digest, err, w.Len(), want)
		}
	}
}
