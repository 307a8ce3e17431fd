package rewind_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"retrace/agent/rewind"
	"retrace/agent/snapshot"
	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// BenchmarkRestore100Files is a rollback over a command that changed 100
// files of 4 KiB: each operation restores them all, alternately to before
// and after the command (so every file is written each time), with both
// checkpoints of the restore synced to disk.
func BenchmarkRestore100Files(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		b.Fatal(err)
	}
	body := func(i int, v string) []byte {
		line := fmt.Sprintf("file %d, version %s: the quick brown fox jumps over the lazy dog\n", i, v)
		out := make([]byte, 0, 4096)
		for len(out)+len(line) <= 4096 {
			out = append(out, line...)
		}
		return out
	}
	for i := range 100 {
		if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%03d.txt", i)), body(i, "old"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	st, err := boltstore.Open(filepath.Join(dir, "retrace.db"), boltstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	info, err := st.Create(ctx, storage.NewSession{Workspace: ws})
	if err != nil {
		b.Fatal(err)
	}
	files, err := snapshot.New(ws, snapshot.Options{CacheDir: filepath.Join(dir, "cache")})
	if err != nil {
		b.Fatal(err)
	}
	cur := storage.NewCursor(st, state.New(info.ID))
	for _, ev := range []state.Event{
		{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "rewrite"}}},
		{Kind: state.PlanSet, Plan: []state.Step{{Text: "rewrite"}}},
		{Kind: state.AssistantMessage, Messages: []state.Message{{Role: state.RoleAssistant,
			ToolCalls: []state.ToolRequest{{ID: "c1", Name: "run_command", Arguments: `{}`}}}}},
		{Kind: state.ToolStarted, Tool: &state.ToolCall{ID: "c1"}},
	} {
		if _, err := cur.Commit(ctx, ev); err != nil {
			b.Fatal(err)
		}
	}
	before := cur.State().Version
	mark, err := files.Mark(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 100 {
		if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%03d.txt", i)), body(i, "new"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	changes, blobs, err := files.Changes(ctx, mark)
	if err != nil || len(changes) != 100 {
		b.Fatalf("%d changes, %v", len(changes), err)
	}
	after, err := cur.Commit(ctx, state.Event{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: "c1"}, Files: changes, Blobs: blobs})
	if err != nil {
		b.Fatal(err)
	}
	tips := [2]int{before, after.Version}
	head := after
	b.ResetTimer()
	for i := range b.N {
		res, err := rewind.Restore(ctx, st, files, head, tips[i%2], rewind.Options{})
		if err != nil || res.Restored != 100 {
			b.Fatalf("restored %d: %v", res.Restored, err)
		}
		head = res.Head
	}
}
