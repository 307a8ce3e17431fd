package boltstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
	"retrace/storage"
)

// bigContent is a text of n bytes, and the image of a file holding it.
func bigContent(n int) (state.Blob, state.FileImage) {
	line := "a line of a large file that the store keeps in chunks\n"
	return content(strings.Repeat(line, n/len(line)+1)[:n])
}

// chunkLayout is how the file holds the content under digest: its
// record's codec, and the length of each chunk record, in order.
func chunkLayout(t *testing.T, path, digest string) (codec byte, chunks []int) {
	t.Helper()
	viewFile(t, path, func(tx *bolt.Tx) {
		k, _ := blobKey(digest)
		p, err := unseal(tx.Bucket(blobsBucket).Get(k))
		if err != nil {
			t.Fatalf("the record of %s: %v", digest, err)
		}
		codec = p[0]
		if b := tx.Bucket(chunksBucket).Bucket(k); b != nil {
			_ = b.ForEachBucket(func(k []byte) error {
				chunks = append(chunks, len(b.Bucket(k).Get(chunkRecordKey)))
				return nil
			})
		}
		if tx.Bucket(importingBucket) != nil {
			t.Error("an import left its staging bucket behind")
		}
	})
	return codec, chunks
}

// A content up to 1 MiB is one record; a larger one is a record that
// says so and the chunks it needs, none holding more than 1 MiB of
// content, whether a checkpoint or an import wrote it; either reads back
// whole and passes Verify.
func TestChunkLayout(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		size   int
		chunks int
	}{{chunkSize - 1, 0}, {chunkSize, 0}, {chunkSize + 1, 2}, {2*chunkSize + 7, 3}} {
		blob, img := bigContent(c.size)
		check := func(t *testing.T, path string, st *Store) {
			t.Helper()
			codec, chunks := chunkLayout(t, path, blob.Digest)
			switch {
			case c.chunks == 0 && (codec == codecChunks || chunks != nil):
				t.Errorf("%d bytes: codec %d, %d chunks; want one record", c.size, codec, len(chunks))
			case c.chunks > 0 && (codec != codecChunks || len(chunks) != c.chunks):
				t.Errorf("%d bytes: codec %d, %d chunks; want %d chunks", c.size, codec, len(chunks), c.chunks)
			}
			for i, n := range chunks {
				if n > chunkSize+64 {
					t.Errorf("chunk %d is a record of %d bytes", i, n)
				}
			}
			if got, err := st.Blob(ctx, blob.Digest); err != nil || !bytes.Equal(got, blob.Data) {
				t.Errorf("%d bytes read back as %d, %v", c.size, len(got), err)
			}
			if err := Verify(ctx, path); err != nil {
				t.Error(err)
			}
		}
		path := filepath.Join(t.TempDir(), "retrace.db")
		st, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		info, _ := st.Create(ctx, storage.NewSession{Title: "large"})
		changeFiles(t, st, state.New(info.ID), "big.txt", state.FileImage{Absent: true}, img, blob)
		check(t, path, st)
		ex, err := st.Export(ctx, info.ID)
		if err != nil {
			t.Fatal(err)
		}
		st.Close()

		path = filepath.Join(t.TempDir(), "imported.db")
		if st, err = Open(path, Options{}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Import(ctx, ex); err != nil {
			t.Fatal(err)
		}
		check(t, path, st)
		st.Close()
	}
}

// A chunked content damaged in any of its chunks is reported, naming its
// digest, by every read that comes across it, and never returned; chunks
// no content's record names are damage Verify reports.
func TestDamagedChunks(t *testing.T) {
	ctx := context.Background()
	good, goodImg := bigContent(2*chunkSize + 7)
	for _, c := range []struct {
		name   string
		damage func(tx *bolt.Tx, k []byte) error
		says   string
	}{
		{"a flipped byte in a chunk", func(tx *bolt.Tx, k []byte) error {
			b := tx.Bucket(chunksBucket).Bucket(k).Bucket(chunkKey(1))
			rec := bytes.Clone(b.Get(chunkRecordKey))
			rec[len(rec)/2] ^= 0x40
			return b.Put(chunkRecordKey, rec)
		}, "chunk 1: checksum mismatch"},
		{"a chunk missing", func(tx *bolt.Tx, k []byte) error {
			return tx.Bucket(chunksBucket).Bucket(k).DeleteBucket(chunkKey(1))
		}, "chunk 1 is missing"},
		{"a chunk's record missing", func(tx *bolt.Tx, k []byte) error {
			return tx.Bucket(chunksBucket).Bucket(k).Bucket(chunkKey(1)).Delete(chunkRecordKey)
		}, "chunk 1: its bucket holds"},
		{"a key beside a chunk's record", func(tx *bolt.Tx, k []byte) error {
			return tx.Bucket(chunksBucket).Bucket(k).Bucket(chunkKey(0)).Put([]byte("more"), []byte("x"))
		}, "chunk 0: a stray key"},
		{"a chunk as a plain value", func(tx *bolt.Tx, k []byte) error {
			b := tx.Bucket(chunksBucket).Bucket(k)
			rec := bytes.Clone(b.Bucket(chunkKey(1)).Get(chunkRecordKey))
			if err := b.DeleteBucket(chunkKey(1)); err != nil {
				return err
			}
			return b.Put(chunkKey(1), rec)
		}, "chunk 1 is missing"},
		{"the last chunk missing", func(tx *bolt.Tx, k []byte) error {
			return tx.Bucket(chunksBucket).Bucket(k).DeleteBucket(chunkKey(2))
		}, "holds 2 chunks of the 3"},
		{"a chunk too many", func(tx *bolt.Tx, k []byte) error {
			return addChunks(tx.Bucket(chunksBucket).Bucket(k), 3, [][]byte{encodeBlob([]byte("more"))})
		}, "stray key"},
		{"every chunk missing", func(tx *bolt.Tx, k []byte) error {
			return tx.Bucket(chunksBucket).DeleteBucket(k)
		}, "its chunks are missing"},
		{"a chunk of the wrong length", func(tx *bolt.Tx, k []byte) error {
			return tx.Bucket(chunksBucket).Bucket(k).Bucket(chunkKey(0)).Put(chunkRecordKey, encodeBlob(good.Data[:chunkSize-1]))
		}, "chunk 0: holds 1048575 bytes, not 1048576"},
		{"other chunks sealed anew", func(tx *bolt.Tx, k []byte) error {
			other := bytes.ToUpper(good.Data[chunkSize : 2*chunkSize])
			return tx.Bucket(chunksBucket).Bucket(k).Bucket(chunkKey(1)).Put(chunkRecordKey, encodeBlob(other))
		}, "hash to sha256:"},
		{"a record that declares another length", func(tx *bolt.Tx, k []byte) error {
			return tx.Bucket(blobsBucket).Put(k, chunkedHead(int64(3*chunkSize+1)))
		}, "chunk 2: holds 7 bytes, not 1048576"},
		{"a chunked record of a length one record holds", func(tx *bolt.Tx, k []byte) error {
			return tx.Bucket(blobsBucket).Put(k, chunkedHead(chunkSize))
		}, "which a record holds whole"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "retrace.db")
			st, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			info, _ := st.Create(ctx, storage.NewSession{Title: "files"})
			changeFiles(t, st, state.New(info.ID), "big.txt", state.FileImage{Absent: true}, goodImg, good)
			other, _ := st.Create(ctx, storage.NewSession{Title: "other"})
			damageFile(t, path, func(tx *bolt.Tx) error {
				k, _ := blobKey(good.Digest)
				return c.damage(tx, k)
			})
			before := fileSum(t, path)
			says := c.says
			wantCorrupt := func(what string, err error) {
				t.Helper()
				var ce *storage.CorruptError
				if !errors.As(err, &ce) || ce.Blob != good.Digest || !strings.Contains(ce.Reason, c.says) || ce.Path != st.path {
					t.Errorf("%s: %v; want a *storage.CorruptError naming %s and saying %q", what, err, good.Digest, c.says)
				}
			}
			data, err := st.Blob(ctx, good.Digest)
			wantCorrupt("blob", err)
			if data != nil {
				t.Errorf("the damaged content was returned (%d bytes)", len(data))
			}
			_, err = st.Export(ctx, info.ID)
			wantCorrupt("export", err)
			// A copy reads a chunk at a time, and finds the last chunk
			// missing as it comes to it.
			if c.name == "the last chunk missing" {
				c.says = "its chunk 2 is missing"
			}
			wantCorrupt("copy", st.CopyBlob(ctx, good.Digest, io.Discard))
			wantCorrupt("written export", storage.WriteExport(ctx, io.Discard, st, info.ID))
			c.says = says
			wantCorrupt("verify", Verify(ctx, path))
			_, err = st.Append(ctx, other.ID, 0, chat(0))
			wantCorrupt("append after", err)
			if fileSum(t, path) != before {
				t.Error("the damaged file was written to")
			}
		})
	}
	t.Run("chunks no record names", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "retrace.db")
		st, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Create(ctx, storage.NewSession{Title: "chat"}); err != nil {
			t.Fatal(err)
		}
		st.Close()
		damageFile(t, path, func(tx *bolt.Tx) error {
			return putChunks(tx.Bucket(chunksBucket), bytes.Repeat([]byte{7}, 32), [][]byte{encodeBlob([]byte("left"))})
		})
		if err := Verify(ctx, path); !errors.Is(err, storage.ErrCorrupt) || !strings.Contains(err.Error(), "no content's record names it") {
			t.Fatalf("verify: %v", err)
		}
	})
}

// damageFile changes the file at path behind the store's back.
func damageFile(t *testing.T, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(fn)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// gc removes a chunked content's chunks with its record; Recover copies
// an intact one and names a damaged one lost.
func TestChunksGCAndRecover(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "retrace.db")
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	intact, intactImg := bigContent(chunkSize + 100)
	damaged, damagedImg := bigContent(chunkSize + 200)
	info, _ := st.Create(ctx, storage.NewSession{Title: "files"})
	s := changeFiles(t, st, state.New(info.ID), "a.txt", state.FileImage{Absent: true}, intactImg, intact)
	changeFiles(t, st, s, "b.txt", state.FileImage{Absent: true}, damagedImg, damaged)
	st.Close()
	damageFile(t, path, func(tx *bolt.Tx) error {
		k, _ := blobKey(damaged.Digest)
		return tx.Bucket(chunksBucket).Bucket(k).DeleteBucket(chunkKey(0))
	})
	to := filepath.Join(t.TempDir(), "recovered.db")
	rep, err := Recover(ctx, path, to)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Blobs != 1 || len(rep.Lost) == 0 {
		t.Errorf("recovered %d contents, lost %+v; want the intact one kept and the damaged one lost", rep.Blobs, rep.Lost)
	}
	rec, err := Open(to, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if got, err := rec.Blob(ctx, intact.Digest); err != nil || !bytes.Equal(got, intact.Data) {
		t.Errorf("the intact content reads back from the recovered file as %d bytes, %v", len(got), err)
	}
	if codec, chunks := chunkLayout(t, to, intact.Digest); codec != codecChunks || len(chunks) != 2 {
		t.Errorf("recovered: codec %d, %d chunks", codec, len(chunks))
	}

	if err := rec.Delete(ctx, info.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := rec.GC(ctx, GCOptions{Branches: true}); err != nil {
		t.Fatal(err)
	}
	viewFile(t, to, func(tx *bolt.Tx) {
		if n := tx.Bucket(chunksBucket).Stats().KeyN; n != 0 {
			t.Errorf("gc left %d keys among the chunks", n)
		}
	})
	if err := Verify(ctx, to); err != nil {
		t.Error(err)
	}
}

// An import writes a large content's chunks before the batch that keeps
// it, in one batch or in several: once it succeeds, nothing of the
// staging is left; when the content turns out not to match its digest
// as it is read (the spool changed after the check), the import fails,
// and neither the session, the content, its chunks nor the staging stay.
func TestImportStagesChunks(t *testing.T) {
	ctx := context.Background()
	big, bigImg := bigContent(3*chunkSize + 11)
	small, smallImg := content("a small file beside it\n")
	src := filepath.Join(t.TempDir(), "src.db")
	st, err := Open(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	info, _ := st.Create(ctx, storage.NewSession{Title: "large"})
	s := changeFiles(t, st, state.New(info.ID), "small.txt", state.FileImage{Absent: true}, smallImg, small)
	changeFiles(t, st, s, "big.txt", state.FileImage{Absent: true}, bigImg, big)
	ex, err := st.Export(ctx, info.ID)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, batch := range []int{4096, 2} {
		for _, spoiled := range []bool{false, true} {
			restore := SetImportBatch(batch)
			path := filepath.Join(t.TempDir(), "retrace.db")
			to, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			records, err := storage.CheckImport(ex)
			if err != nil {
				t.Fatal(err)
			}
			data := bytes.Clone(big.Data)
			if spoiled {
				data[2*chunkSize+5] ^= 1 // in the last transaction's chunk: the others are staged by then
			}
			in := ex
			in.Blobs = map[string][]byte{big.Digest: data, small.Digest: small.Data}
			batches, err := importBatches(in, records)
			if err != nil {
				t.Fatal(err)
			}
			if err := to.autoClaim(ctx, info.ID); err != nil {
				t.Fatal(err)
			}
			rec := infoRecord{Title: "large", Head: ex.Session.Head, Versions: ex.Session.Versions, Phase: ex.Session.Phase}
			err = to.writeImport(ctx, info.ID, rec, batches)
			restore()
			if spoiled != (err != nil) || spoiled && !errors.Is(err, storage.ErrInvalid) {
				t.Fatalf("batches of %d, spoiled %v: %v", batch, spoiled, err)
			}
			viewFile(t, path, func(tx *bolt.Tx) {
				if tx.Bucket(importingBucket) != nil {
					t.Errorf("batches of %d, spoiled %v: the staging bucket stayed", batch, spoiled)
				}
				n := 0
				_ = tx.Bucket(chunksBucket).ForEach(func(_, _ []byte) error { n++; return nil })
				if spoiled && n != 0 || !spoiled && n != 1 {
					t.Errorf("batches of %d, spoiled %v: %d contents among the chunked ones", batch, spoiled, n)
				}
			})
			got, err := to.Blob(ctx, big.Digest)
			if spoiled && !errors.Is(err, storage.ErrBlobNotFound) || !spoiled && (err != nil || !bytes.Equal(got, big.Data)) {
				t.Errorf("batches of %d, spoiled %v: the content reads as %d bytes, %v", batch, spoiled, len(got), err)
			}
			if err := Verify(ctx, path); err != nil {
				t.Error(err)
			}
			to.Close()
		}
	}
}
