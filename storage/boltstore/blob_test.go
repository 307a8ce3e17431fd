package boltstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
	"retrace/storage"
)

// FileChangeEvents is the events of one tool call that changes files, from
// a session in phase: a user message and a plan first unless it is
// executing, then the call requested, started and finished, the last
// carrying files. Tests of this package and its external tests share it.
func FileChangeEvents(phase state.Phase, call string, files ...state.FileChange) []state.Event {
	var evs []state.Event
	switch phase {
	case state.Executing:
	case state.Planning:
		evs = append(evs, state.Event{Kind: state.PlanSet, Plan: []state.Step{{Text: "edit the files"}}})
	default:
		evs = append(evs,
			state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "edit the files"}}},
			state.Event{Kind: state.PlanSet, Plan: []state.Step{{Text: "edit the files"}}})
	}
	return append(evs,
		state.Event{Kind: state.AssistantMessage, Messages: []state.Message{{Role: state.RoleAssistant,
			ToolCalls: []state.ToolRequest{{ID: call, Name: "write_file", Arguments: `{"path":"` + files[0].Path + `"}`}}}}},
		state.Event{Kind: state.ToolStarted, Tool: &state.ToolCall{ID: call}},
		state.Event{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: call, Result: "written", DurationMS: 3}, Files: files})
}

// content is a blob of text and the image of a file holding it.
func content(text string) (state.Blob, state.FileImage) {
	b := state.Blob{Digest: storage.Digest([]byte(text)), Data: []byte(text)}
	return b, state.FileImage{Blob: b.Digest, Size: int64(len(text)), Mode: 0o644}
}

// changeFiles commits one tool call that changes path from before to
// after, carrying blobs, and returns the new state.
func changeFiles(t *testing.T, st storage.Store, s state.State, path string, before, after state.FileImage, blobs ...state.Blob) state.State {
	t.Helper()
	cur := storage.NewCursor(st, s)
	evs := FileChangeEvents(s.Phase, "call_"+path+"_"+time.Duration(s.Version).String(), state.FileChange{Path: path, Before: before, After: after})
	evs[len(evs)-1].Blobs = blobs
	for _, ev := range evs {
		ev.At = t0.Add(time.Duration(cur.State().Version) * time.Second)
		if _, err := cur.Commit(context.Background(), ev); err != nil {
			t.Fatalf("%s: %v", ev.Kind, err)
		}
	}
	return cur.State()
}

// blobCount is how many contents the file holds.
func blobCount(t *testing.T, path string) int {
	t.Helper()
	n := 0
	viewFile(t, path, func(tx *bolt.Tx) { n = tx.Bucket(blobsBucket).Stats().KeyN })
	return n
}

func viewFile(t *testing.T, path string, fn func(tx *bolt.Tx)) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.View(func(tx *bolt.Tx) error { fn(tx); return nil }); err != nil {
		t.Fatal(err)
	}
}

// A content many versions and sessions refer to is stored once, and never
// written again: a later Append that carries it leaves the record as it
// was. (The record is first swapped for an equally valid one kept as is,
// so a rewrite would show.)
func TestBlobsStoredOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "retrace.db")
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	shared, sharedImg := content(strings.Repeat("shared by everyone\n", 300))
	own, ownImg := content("only one\n")
	absent := state.FileImage{Absent: true}
	one, _ := st.Create(ctx, storage.NewSession{Title: "one"})
	two, _ := st.Create(ctx, storage.NewSession{Title: "two"})
	s1 := changeFiles(t, st, state.New(one.ID), "a.go", absent, sharedImg, shared)

	k, _ := blobKey(shared.Digest)
	raw := append(make([]byte, sealSize), codecRaw)
	raw = seal(append(binary.AppendUvarint(raw, uint64(len(shared.Data))), shared.Data...))
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error { return tx.Bucket(blobsBucket).Put(k, raw) })
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}

	changeFiles(t, st, s1, "b.go", ownImg, sharedImg, own, shared)
	changeFiles(t, st, state.New(two.ID), "a.go", absent, sharedImg, shared)
	if n := blobCount(t, path); n != 2 {
		t.Fatalf("the file holds %d contents; want 2 (one shared by three versions in two sessions)", n)
	}
	viewFile(t, path, func(tx *bolt.Tx) {
		if !bytes.Equal(tx.Bucket(blobsBucket).Get(k), raw) {
			t.Error("a later Append wrote the shared content again")
		}
	})
	if err := st.Delete(ctx, one.ID); err != nil {
		t.Fatal(err)
	}
	if n := blobCount(t, path); n != 2 {
		t.Fatalf("after deleting a session the file holds %d contents; want 2 until a gc", n)
	}
	if got, err := st.Blob(ctx, shared.Digest); err != nil || !bytes.Equal(got, shared.Data) {
		t.Fatalf("the shared content after a delete: %v", err)
	}
}

// The record layout: text is compressed, what does not compress is kept as
// is, and an empty file is content too.
func TestBlobRecordLayout(t *testing.T) {
	text := []byte(strings.Repeat("func main() { run() }\n", 200))
	noise := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(3, 3))
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	for _, c := range []struct {
		name  string
		data  []byte
		codec byte
	}{
		{"text", text, codecZstd},
		{"noise", noise, codecRaw},
		{"empty", []byte{}, codecRaw},
		// As compressible as content gets: still under the length bound
		// decodeBlob holds a record's declared length to.
		{"zeros", make([]byte, 8<<20), codecZstd},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := encodeBlob(c.data)
			p, err := unseal(rec)
			if err != nil {
				t.Fatal(err)
			}
			size, n := binary.Uvarint(p[1:])
			if p[0] != c.codec || size != uint64(len(c.data)) || n <= 0 {
				t.Fatalf("codec %d, length %d; want codec %d, length %d", p[0], size, c.codec, len(c.data))
			}
			if c.codec == codecZstd && len(rec) > len(c.data)/4 {
				t.Fatalf("%d bytes of repetitive text took %d", len(c.data), len(rec))
			}
			if c.codec == codecRaw && len(rec) > len(c.data)+sealSize+1+binary.MaxVarintLen64 {
				t.Fatalf("%d bytes kept as is took %d", len(c.data), len(rec))
			}
			got, err := decodeBlob(rec)
			if err != nil || !bytes.Equal(got, c.data) {
				t.Fatalf("round trip: %d bytes, %v", len(got), err)
			}
		})
	}
}

// Every flipped bit of a blob record is caught: the content is never
// returned wrong.
func TestEveryFlippedBlobBitIsDetected(t *testing.T) {
	s := &Store{path: "test.db"}
	for _, data := range [][]byte{[]byte(strings.Repeat("abc\n", 100)), []byte("tiny")} {
		d := storage.Digest(data)
		rec := encodeBlob(data)
		for bit := range len(rec) * 8 {
			bad := bytes.Clone(rec)
			bad[bit/8] ^= 1 << (bit % 8)
			if got, err := s.readBlob(contents{}, d, bad); err == nil || got != nil {
				t.Fatalf("flipping bit %d of a %d-byte record went unnoticed", bit, len(rec))
			}
		}
	}
}

// A damaged content is reported, naming its digest, by every read that
// comes across it (Blob, Export, Verify), and never returned as content.
// A flipped byte is caught by the record's checksum; a record sealed
// anew around other content (as a bug in a writer could) by the digest.
func TestDamagedBlob(t *testing.T) {
	good, goodImg := content(strings.Repeat("the content as it was kept\n", 50))
	for _, c := range []struct {
		name   string
		damage func(rec []byte) []byte
		says   string
	}{
		{"a flipped byte", func(rec []byte) []byte {
			rec = bytes.Clone(rec)
			rec[len(rec)/2] ^= 0x40
			return rec
		}, "checksum mismatch"},
		{"other content sealed anew", func([]byte) []byte {
			return encodeBlob([]byte(strings.Repeat("the content as it was NOT kept\n", 50)))
		}, "hash to sha256:"},
		{"compressed data that lies about its length", func(rec []byte) []byte {
			p, _ := unseal(rec)
			_, n := binary.Uvarint(p[1:])
			out := append(make([]byte, sealSize), codecZstd)
			out = binary.AppendUvarint(out, uint64(len(good.Data)-1))
			return seal(append(out, p[1+n:]...))
		}, "decompress"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "retrace.db")
			st, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			info, _ := st.Create(ctx, storage.NewSession{Title: "files"})
			s := changeFiles(t, st, state.New(info.ID), "a.go", state.FileImage{Absent: true}, goodImg, good)
			other, _ := st.Create(ctx, storage.NewSession{Title: "other"})
			db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			err = db.Update(func(tx *bolt.Tx) error {
				k, _ := blobKey(good.Digest)
				b := tx.Bucket(blobsBucket)
				return b.Put(k, c.damage(b.Get(k)))
			})
			if cerr := db.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
			before := fileSum(t, path)

			wantBlobCorrupt := func(what string, err error) {
				t.Helper()
				var ce *storage.CorruptError
				if !errors.As(err, &ce) || ce.Blob != good.Digest || !strings.Contains(err.Error(), good.Digest) ||
					!strings.Contains(ce.Reason, c.says) || ce.Path != st.path {
					t.Errorf("%s: %v; want a *storage.CorruptError naming %s and saying %q", what, err, good.Digest, c.says)
				}
			}
			data, err := st.Blob(ctx, good.Digest)
			wantBlobCorrupt("blob", err)
			if data != nil {
				t.Errorf("the damaged content was returned (%d bytes)", len(data))
			}
			ex, err := st.Export(ctx, info.ID)
			wantBlobCorrupt("export", err)
			if ex.Blobs != nil {
				t.Errorf("the damaged content was exported")
			}
			var copied bytes.Buffer
			wantBlobCorrupt("copy", st.CopyBlob(ctx, good.Digest, &copied))
			if copied.Len() > 0 {
				t.Errorf("the damaged content was copied (%d bytes)", copied.Len())
			}
			wantBlobCorrupt("written export", storage.WriteExport(ctx, io.Discard, st, info.ID))
			wantBlobCorrupt("verify", Verify(ctx, path))
			// As after any damage a read found, nothing more is written.
			_, err = st.Append(ctx, other.ID, 0, chat(0))
			wantBlobCorrupt("append after", err)
			// The states themselves still read: the manifest names the
			// content, and only restoring the file needs it.
			if got, err := st.Head(ctx, info.ID); err != nil || got.Files["a.go"].Now != goodImg || got.Version != s.Version {
				t.Errorf("head of the session: %v", err)
			}
			if fileSum(t, path) != before {
				t.Error("the damaged file was written to")
			}
		})
	}
}

// A checkpoint that refers to a content the file lost is damage: Verify
// and Export name the version and the digest.
func TestMissingBlobIsDamage(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "retrace.db")
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	blob, img := content("kept, then lost\n")
	info, _ := st.Create(ctx, storage.NewSession{Title: "files"})
	s := changeFiles(t, st, state.New(info.ID), "a.go", state.FileImage{Absent: true}, img, blob)
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		k, _ := blobKey(blob.Digest)
		return tx.Bucket(blobsBucket).Delete(k)
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{
		"verify":  Verify(ctx, path),
		"export":  func() error { _, err := st.Export(ctx, info.ID); return err }(),
		"records": func() error { _, err := st.ExportRecords(ctx, info.ID); return err }(),
		// Found before anything is written.
		"written export": storage.WriteExport(ctx, failOnWrite{t}, st, info.ID),
	} {
		var ce *storage.CorruptError
		if !errors.As(err, &ce) || ce.Session != info.ID || ce.Version != s.Version || ce.Blob != blob.Digest || !strings.Contains(ce.Reason, "missing") {
			t.Errorf("%s: %v; want the missing content %s of v%d named", what, err, blob.Digest, s.Version)
		}
	}
	if _, err := st.Blob(ctx, blob.Digest); !errors.Is(err, storage.ErrBlobNotFound) {
		t.Errorf("blob: %v", err)
	}
}

// FuzzDecodeBlob feeds arbitrary bytes to the blob decoder: it must never
// panic, and never return content of another length than declared.
func FuzzDecodeBlob(f *testing.F) {
	for _, b := range blobSamples() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkBlobDecode(t, b) })
}

// FuzzBlobPayload seals arbitrary payloads with a valid checksum, so the
// fuzzer gets past the CRC and into the length and the decompressor.
func FuzzBlobPayload(f *testing.F) {
	for _, b := range blobSamples() {
		f.Add(b[sealSize:])
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		b := make([]byte, sealSize+len(payload))
		copy(b[sealSize:], payload)
		b[0] = recordFormat
		binary.LittleEndian.PutUint32(b[1:], crc32.Checksum(payload, castagnoli))
		checkBlobDecode(t, b)
	})
}

func blobSamples() [][]byte {
	return [][]byte{
		encodeBlob(nil),
		encodeBlob([]byte("x")),
		encodeBlob([]byte(strings.Repeat("package main\n", 40))),
		encodeBlob(bytes.Repeat([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 7)),
	}
}

func checkBlobDecode(t *testing.T, b []byte) {
	got, err := decodeBlob(b)
	if err != nil {
		return
	}
	p, _ := unseal(b)
	size, _ := binary.Uvarint(p[1:])
	if uint64(len(got)) != size {
		t.Fatalf("decoded %d bytes; the record declares %d", len(got), size)
	}
	if again, err := decodeBlob(encodeBlob(got)); err != nil || !bytes.Equal(again, got) {
		t.Fatalf("accepted content does not round trip: %v", err)
	}
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// failOnWrite is a writer nothing should be written to.
type failOnWrite struct{ t *testing.T }

func (f failOnWrite) Write(p []byte) (int, error) {
	f.t.Errorf("wrote %q", p)
	return len(p), nil
}

// An empty file's content is empty, not absent: its export's JSON holds
// "", which an import reads back (null, which a nil content made, it
// refused).
func TestEmptyContentExportsAndImports(t *testing.T) {
	ctx := context.Background()
	st, err := Open(filepath.Join(t.TempDir(), "retrace.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	info, _ := st.Create(ctx, storage.NewSession{Title: "empty file"})
	b, img := content("")
	changeFiles(t, st, state.New(info.ID), "empty.txt", state.FileImage{Absent: true}, img, b)
	ex, err := st.Export(ctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(storage.Exported{Format: storage.ExportFormat, Export: ex})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(js, []byte(`"`+b.Digest+`":""`)) {
		t.Fatalf("the export writes the empty content as:\n%s", js)
	}
	back, err := storage.DecodeExport(js)
	if err != nil {
		t.Fatalf("the export does not read back: %v", err)
	}
	other, err := Open(filepath.Join(t.TempDir(), "retrace.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Import(ctx, back); err != nil {
		t.Fatalf("import: %v", err)
	}
	if data, err := other.Blob(ctx, b.Digest); err != nil || data == nil || len(data) != 0 {
		t.Fatalf("the imported empty content: %q, %v", data, err)
	}
}
