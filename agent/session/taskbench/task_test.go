package taskbench_test

import (
	"context"
	"path/filepath"
	"testing"

	"retrace/agent/session/taskbench"
	"retrace/storage"
	"retrace/storage/boltstore"
)

func openBolt(path string) (storage.Store, error) { return boltstore.Open(path, boltstore.Options{}) }

// A task with one tool call and an answer keeps its checkpoints and
// fills its counters. Those count the model's loopback traffic too, so
// they are never zero; what the task writes to the file is held by
// TestTaskWritesAtMost150KB, which counts that file's writes alone.
func TestRunKeepsItsCheckpoints(t *testing.T) {
	for _, tool := range taskbench.Tools {
		dir := t.TempDir()
		r, err := taskbench.Run(context.Background(), dir, filepath.Join(dir, "task.db"), tool, openBolt, nil)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		t.Logf("%+v", r)
		if r.Checkpoints < 4 || r.WChar <= 0 || r.SysCW <= 0 {
			t.Fatalf("%s: a figure is missing: %+v", tool, r)
		}
	}
	if _, err := taskbench.Run(context.Background(), t.TempDir(), filepath.Join(t.TempDir(), "x.db"), "rm_rf", openBolt, nil); err == nil {
		t.Fatal("an unknown tool was accepted")
	}
}
