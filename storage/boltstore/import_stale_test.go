package boltstore

import (
	"context"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"retrace/storage/storetest"
)

// An import killed between batches leaves its staging bucket, invisible
// to readers. The next import of that id (which holds the claim, so no
// live import owns the bucket) removes it, on either path.
func TestImportRemovesWhatACrashedImportStaged(t *testing.T) {
	for _, batch := range []int{4096, 5} {
		ctx := context.Background()
		st, err := Open(filepath.Join(t.TempDir(), "retrace.db"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		ex := storetest.ScriptedExport("crashed", 20, 2)
		// What the crashed import left: two batches staged, unpublished.
		restore := SetImportBatch(5)
		batches := mustBatches(t, ex)
		for i, b := range batches[:2] {
			err := st.update(ctx, func(tx *bolt.Tx) error {
				vb, err := stagingVersions(tx, "crashed", i == 0, i == 0)
				if err != nil {
					return err
				}
				return st.putBatch(tx, vb, "crashed", b)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		restore()
		restore = SetImportBatch(batch)
		if _, err := st.Import(ctx, ex); err != nil {
			t.Fatalf("batch %d: import over a crashed one: %v", batch, err)
		}
		restore()
		err = st.view(ctx, func(tx *bolt.Tx) error {
			if tx.Bucket(importingBucket) != nil {
				t.Errorf("batch %d: the crashed import's staging bucket is still there", batch)
			}
			return st.checkAll(tx, true)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// gc run between two batches of an import (the lock is free there) keeps
// the contents the staged batches refer to: published, the import is
// whole.
func TestGCKeepsTheContentsOfAnImportUnderWay(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "retrace.db")
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ex := storetest.ScriptedExport("underway", 300, 3)
	if len(ex.Blobs) == 0 {
		t.Fatal("the scripted export carries no file contents to lose")
	}
	restore := SetImportBatch(50)
	defer restore()
	batches := mustBatches(t, ex)
	for i, b := range batches {
		err := st.update(ctx, func(tx *bolt.Tx) error {
			vb, err := stagingVersions(tx, ex.Session.ID, i == 0, i == 0)
			if err != nil {
				return err
			}
			return st.putBatch(tx, vb, ex.Session.ID, b)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.GC(ctx, GCOptions{Branches: true}); err != nil {
		t.Fatal(err)
	}
	in := ex.Session
	rec := infoRecord{Title: in.Title, CreatedAt: in.CreatedAt.UTC(), UpdatedAt: in.UpdatedAt.UTC(),
		Head: in.Head, Versions: in.Versions, Phase: in.Phase}
	if err := st.update(ctx, func(tx *bolt.Tx) error { return st.publishImport(tx, ex.Session.ID, rec) }); err != nil {
		t.Fatal(err)
	}
	if err := Verify(ctx, path); err != nil {
		t.Fatalf("the import published after gc: %v", err)
	}
}
