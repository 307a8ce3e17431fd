package storebench_test

import (
	"context"
	"path/filepath"
	"testing"

	"retrace/storage"
	"retrace/storage/boltstore"
	"retrace/storage/storebench"
)

func TestRunReportsEveryFigure(t *testing.T) {
	open := func(path string) (storage.Store, error) { return boltstore.Open(path, boltstore.Options{}) }
	r, err := storebench.Run(context.Background(), t.TempDir(), 30, open, storebench.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Turns != 30 || r.Checkpoints != 60 || r.TextBytes != 60*storebench.MessageLen {
		t.Fatalf("counts: %+v", r)
	}
	if r.DBBytes <= r.TextBytes || r.TotalMS <= 0 || r.First100MSPerTurn <= 0 || r.Last100MSPerTurn <= 0 ||
		r.LoadRecentMS <= 0 || r.LoadLatestMS <= 0 || r.LoadEarlyMS <= 0 || r.HistoryMS <= 0 {
		t.Fatalf("a figure is missing: %+v", r)
	}
	if _, err := storebench.Run(context.Background(), t.TempDir(), 0, open, storebench.Options{}); err == nil {
		t.Fatal("zero turns accepted")
	}
}

// The chat summarises as the agent would with a 128,000-token window:
// once the text the summary does not cover passes 80% of it, all but the
// last six turns are folded, and resuming loads what is after them, or
// the last 200 messages when those reach further back.
func TestRunSummarisesLikeTheAgent(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func(path string) (storage.Store, error) { return boltstore.Open(path, boltstore.Options{}) }
	r, err := storebench.Run(ctx, dir, 700, open, storebench.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// 683 turns are 409,800 characters, past 409,600: the summary comes
	// before turn 684, through the 1,354 messages before the last six turns.
	if r.Checkpoints != 2*700+1 {
		t.Fatalf("%d checkpoints, want 1401 (one summary)", r.Checkpoints)
	}
	st, err := open(filepath.Join(dir, storebench.File))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recent, err := storage.Latest(ctx, st, r.Session, storage.KeepRecent)
	if err != nil {
		t.Fatal(err)
	}
	// It holds the last KeepRecent (200) messages: more than the six
	// turns after the summary.
	if recent.SummaryThrough != 1354 || recent.HistoryFrom != 1200 || recent.HistoryLen() != 1400 {
		t.Fatalf("summary through %d; the recent part holds messages %d to %d, want 1200 to 1400",
			recent.SummaryThrough, recent.HistoryFrom, recent.HistoryLen())
	}
}
