package storetest

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"retrace/state"
	"retrace/storage"
)

// largeContents are contents at the edges of where a backend may cut a
// content into pieces (1 MiB, a bbolt store's chunk) and past them: one
// byte short, exactly, one byte over, two pieces and a few bytes, text
// that compresses and bytes that do not.
func largeContents() []state.Blob {
	const mib = 1 << 20
	rng := rand.New(rand.NewPCG(41, 41))
	noise := make([]byte, 2*mib+7)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	text := func(n int) []byte {
		line := "a line of a large generated file, kept in pieces where a store cuts it\n"
		return []byte(strings.Repeat(line, n/len(line)+1)[:n])
	}
	var out []state.Blob
	for _, data := range [][]byte{text(mib - 1), text(mib), text(mib + 1), noise, text(3*mib + 5)} {
		out = append(out, state.Blob{Digest: storage.Digest(data), Data: data})
	}
	return out
}

// testLargeContents commits contents past 1 MiB, reads them back one by
// one and in a batch, exports them, imports the export read back as a
// file (through the spool, as `retrace import` does) into another store,
// and reads them there; gc of the deleted session takes them all.
func testLargeContents(t *testing.T, b Backend) {
	from := open(t, b)
	info := create(t, from, "large files")
	contents := largeContents()
	var files []state.FileChange
	for i, c := range contents {
		files = append(files, change("data/"+string(rune('a'+i)), absent, kept(c)))
	}
	commitFiles(t, from, state.New(info.ID), files, contents...)
	for _, c := range contents {
		readBlob(t, from, c)
	}
	readBlobs(t, from, contents)
	ex := exportOf(t, from, info.ID)
	for _, c := range contents {
		if !bytes.Equal(ex.Blobs[c.Digest], c.Data) {
			t.Fatalf("the export carries %d bytes for %s, not its %d", len(ex.Blobs[c.Digest]), c.Digest, len(c.Data))
		}
	}

	js, err := json.Marshal(storage.Exported{Format: storage.ExportFormat, Export: ex})
	if err != nil {
		t.Fatal(err)
	}
	read, err := storage.ReadExport(bytes.NewReader(js), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = read.Spool.Close() })
	to := open(t, b)
	if _, err := to.Import(ctx, read); err != nil {
		t.Fatalf("import: %v", err)
	}
	for _, c := range contents {
		readBlob(t, to, c)
	}
	readBlobs(t, to, contents)

	gc, ok := to.(collector)
	if !ok {
		t.Fatalf("%T has no GC", to)
	}
	if err := to.Delete(ctx, info.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := gc.GC(ctx, storage.GCOptions{Branches: true}); err != nil {
		t.Fatal(err)
	}
	for _, c := range contents {
		noBlob(t, to, c.Digest, "after gc of the only session that referred to it")
	}
}
