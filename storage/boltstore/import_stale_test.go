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
		records, batches := mustBatches(t, ex)
		_ = records
		for i, b := range batches[:2] {
			err := st.update(ctx, func(tx *bolt.Tx) error {
				vb, err := stagingVersions(tx, "crashed", i == 0)
				if err != nil {
					return err
				}
				return st.putBatch(tx, vb, b)
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
