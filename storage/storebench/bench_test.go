package storebench_test

import (
	"context"
	"testing"

	"retrace/storage"
	"retrace/storage/boltstore"
	"retrace/storage/storebench"
)

func TestRunReportsEveryFigure(t *testing.T) {
	open := func(path string) (storage.Store, error) { return boltstore.Open(path, boltstore.Options{}) }
	r, err := storebench.Run(context.Background(), t.TempDir(), 30, open, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Turns != 30 || r.Checkpoints != 60 || r.TextBytes != 60*storebench.MessageLen {
		t.Fatalf("counts: %+v", r)
	}
	if r.DBBytes <= r.TextBytes || r.TotalMS <= 0 || r.First100MSPerTurn <= 0 || r.Last100MSPerTurn <= 0 ||
		r.LoadLatestMS <= 0 || r.LoadEarlyMS <= 0 || r.HistoryMS <= 0 {
		t.Fatalf("a figure is missing: %+v", r)
	}
	if _, err := storebench.Run(context.Background(), t.TempDir(), 0, open, nil); err == nil {
		t.Fatal("zero turns accepted")
	}
}
