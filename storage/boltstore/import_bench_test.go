package boltstore_test

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"retrace/storage"
	"retrace/storage/boltstore"
	"retrace/storage/storetest"
)

// BenchmarkImport measures the bulk path: one import of a scripted session
// (branches and file contents) into a fresh file, and the transactions it
// took (txs/op). Per checkpoint, an Append costs a transaction and its two
// fsyncs; an import costs a transaction per batch.
//
//	go test ./storage/boltstore -run '^$' -bench Import -benchtime 5x
func BenchmarkImport(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			ex := storetest.ScriptedExport("bench", n, 9)
			b.ResetTimer()
			txs := boltstore.ImportTxs()
			for range b.N {
				b.StopTimer()
				st, err := boltstore.Open(filepath.Join(b.TempDir(), "retrace.db"), boltstore.Options{})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := st.Import(context.Background(), ex); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				st.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(boltstore.ImportTxs()-txs)/float64(b.N), "txs/op")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/checkpoint")
		})
	}
}

// BenchmarkImportCheck is the part of BenchmarkImport that writes
// nothing: decoding each event again and replaying the whole tree.
func BenchmarkImportCheck(b *testing.B) {
	ex := storetest.ScriptedExport("bench", 10000, 9)
	b.ResetTimer()
	for range b.N {
		if _, err := storage.CheckImport(ex); err != nil {
			b.Fatal(err)
		}
	}
}
