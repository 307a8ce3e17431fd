package boltstore

import "retrace/storage"

// SetImportBatch makes an import's transactions hold at most n
// checkpoints, so that tests reach the staged path with small sessions.
// It returns the function that puts the bound back.
func SetImportBatch(n int) (restore func()) {
	old := importBatch
	importBatch.checkpoints = n
	return func() { importBatch = old }
}

// ImportTxs is how many read-write transactions imports have run in this
// process.
func ImportTxs() int64 { return importTxs.Load() }

func mustBatches(t interface{ Fatal(...any) }, ex storage.Export) [][]importRecord {
	records, err := storage.CheckImport(ex)
	if err != nil {
		t.Fatal(err)
	}
	batches, err := importBatches(ex, records)
	if err != nil {
		t.Fatal(err)
	}
	return batches
}
