package boltstore

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"retrace/storage"
	"retrace/storage/storetest"
)

// FuzzImport feeds the import decoder and Store.Import arbitrary files: it
// must never panic, and an import that fails must leave no session and
// nothing staged. Batches of 3 checkpoints take every import through the
// staged path.
//
//	go test ./storage/boltstore -run '^$' -fuzz FuzzImport -fuzztime 60s
func FuzzImport(f *testing.F) {
	good, err := json.Marshal(storage.Exported{Format: storage.ExportFormat, Export: storetest.ScriptedExport("fuzz", 12, 1)})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(`{"format":"retrace-export/1","session":{"id":"x","versions":0,"head":0,"phase":"idle"},"checkpoints":[]}`))
	f.Add([]byte(`{"format":"retrace-export/1","session":{"id":"x","versions":1,"head":1,"phase":"planning"},"checkpoints":[{"version":1,"parent":0,"event":"user_message","phase":"planning","at":"2026-01-01T00:00:00Z","data":{"kind":"user_message","at":"2026-01-01T00:00:00Z","messages":[{"role":"user","content":"hi"}]}}]}`))
	// A count the checkpoints do not bear out.
	f.Add([]byte(`{"format":"retrace-export/1","session":{"id":"x","versions":2,"head":1,"phase":"planning"},"checkpoints":[{"version":1,"parent":0,"event":"user_message","phase":"planning","at":"2026-01-01T00:00:00Z","data":{"kind":"user_message","at":"2026-01-01T00:00:00Z","messages":[{"role":"user","content":"hi"}]}}]}`))
	f.Add([]byte(`{"format":"retrace-export/1","session":{"id":"x"},"blobs":{"sha256:00":"AA=="}}`))
	f.Add([]byte(`[]`))
	// A session closed on arrival, and one whose arrival comes mid-task.
	arrived, err := storage.Arrive(storetest.ScriptedExport("fuzz", 12, 1), storage.Arrival{At: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), Workspace: f.TempDir()})
	if err != nil {
		f.Fatal(err)
	}
	if good, err = json.Marshal(storage.Exported{Format: storage.ExportFormat, Export: arrived}); err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"format":"retrace-export/1","session":{"id":"x","versions":2,"head":2,"phase":"idle"},"checkpoints":[{"version":1,"parent":0,"event":"user_message","phase":"planning","at":"2026-01-01T00:00:00Z","data":{"kind":"user_message","at":"2026-01-01T00:00:00Z","messages":[{"role":"user","content":"hi"}]}},{"version":2,"parent":1,"event":"imported","phase":"idle","at":"2026-01-02T00:00:00Z","data":{"kind":"imported","at":"2026-01-02T00:00:00Z","text":"imported from x.json"}}]}`))

	defer func(old struct{ checkpoints, bytes int }) { importBatch = old }(importBatch)
	importBatch.checkpoints = 3
	st, err := Open(filepath.Join(f.TempDir(), "retrace.db"), Options{})
	if err != nil {
		f.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, data []byte) {
		ex, err := storage.DecodeExport(data)
		if err != nil {
			return
		}
		info, err := st.Import(ctx, ex)
		list, lerr := st.Sessions(ctx)
		if lerr != nil {
			t.Fatalf("after an import (%v) the store cannot list its sessions: %v", err, lerr)
		}
		if err != nil {
			if len(list) != 0 {
				t.Fatalf("a failed import (%v) left %d sessions", err, len(list))
			}
		} else {
			if len(list) != 1 {
				t.Fatalf("an import left %d sessions", len(list))
			}
			if _, err := st.Export(ctx, info.ID); err != nil {
				t.Fatalf("the imported session does not export: %v", err)
			}
			// Every record as the whole-file check reads it: the
			// session's count and head agree with its versions.
			if err := st.view(ctx, func(tx *bolt.Tx) error { return st.checkAll(tx, true) }); err != nil {
				t.Fatalf("the file after an import: %v", err)
			}
			if err := st.Delete(ctx, info.ID); err != nil {
				t.Fatal(err)
			}
		}
		err = st.view(ctx, func(tx *bolt.Tx) error {
			if tx.Bucket(importingBucket) != nil {
				t.Fatal("an import left its staging bucket")
			}
			return nil
		})
		if err != nil && !errors.Is(err, errNoFile) {
			t.Fatal(err)
		}
	})
}
