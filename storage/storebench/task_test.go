package storebench_test

import (
	"context"
	"path/filepath"
	"testing"

	"retrace/storage"
	"retrace/storage/boltstore"
	"retrace/storage/storebench"
)

func openBolt(path string) (storage.Store, error) { return boltstore.Open(path, boltstore.Options{}) }

// A task with one tool call and an answer keeps its checkpoints and
// fills its counters. Those count the model's loopback traffic too, so
// they are never zero; what the task writes to the file is held by
// TestTaskWritesAtMost150KB, which counts that file's writes alone.
func TestRunTaskKeepsItsCheckpoints(t *testing.T) {
	for _, tool := range storebench.TaskTools {
		dir := t.TempDir()
		r, err := storebench.RunTask(context.Background(), dir, filepath.Join(dir, "task.db"), tool, openBolt, nil)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		t.Logf("%+v", r)
		if r.Checkpoints < 4 || r.WChar <= 0 || r.SysCW <= 0 {
			t.Fatalf("%s: a figure is missing: %+v", tool, r)
		}
	}
	if _, err := storebench.RunTask(context.Background(), t.TempDir(), filepath.Join(t.TempDir(), "x.db"), "rm_rf", openBolt, nil); err == nil {
		t.Fatal("an unknown tool was accepted")
	}
}
