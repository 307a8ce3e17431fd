package session

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"retrace/agent/snapshot"
	"retrace/agent/tools"
	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// BenchmarkWriteFileCheckpoint is one write_file call of a 4 KiB file and
// its tool_finished checkpoint, synced: "unrecorded" as before rollbacks
// restored files, "recorded" with the file read before and after and its
// two contents kept in the checkpoint's transaction.
func BenchmarkWriteFileCheckpoint(b *testing.B) {
	for _, recorded := range []bool{false, true} {
		name := "unrecorded"
		if recorded {
			name = "recorded"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			dir := b.TempDir()
			ws, err := tools.NewWorkspace(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			reg := tools.New(ws, tools.Options{})
			files, err := snapshot.New(ws.Root(), snapshot.Options{CacheDir: filepath.Join(dir, "cache")})
			if err != nil {
				b.Fatal(err)
			}
			rec := recorder{tools: reg, files: files}
			st, err := boltstore.Open(filepath.Join(dir, "retrace.db"), boltstore.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			info, err := st.Create(ctx, storage.NewSession{})
			if err != nil {
				b.Fatal(err)
			}
			cur := storage.NewCursor(st, state.New(info.ID))
			commit := func(ev state.Event) {
				if _, err := cur.Commit(ctx, ev); err != nil {
					b.Fatal(err)
				}
			}
			commit(state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "write"}}})
			commit(state.Event{Kind: state.PlanSet, Plan: []state.Step{{Text: "write"}}})
			line := "a line of the file the agent writes, about sixty bytes long\n"
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				id := fmt.Sprintf("c%d", i)
				content := fmt.Sprintf("version %d\n", i)
				for len(content) < 4096-len(line) {
					content += line
				}
				args, _ := json.Marshal(map[string]string{"path": "notes.md", "content": content})
				commit(state.Event{Kind: state.AssistantMessage, Messages: []state.Message{{Role: state.RoleAssistant,
					ToolCalls: []state.ToolRequest{{ID: id, Name: "write_file", Arguments: string(args)}}}}})
				commit(state.Event{Kind: state.ToolStarted, Tool: &state.ToolCall{ID: id}})
				b.StartTimer()
				done := noChanges
				if recorded {
					if done, err = rec.Start(ctx, "write_file", string(args)); err != nil {
						b.Fatal(err)
					}
				}
				result, err := reg.Run(ctx, "write_file", string(args))
				if err != nil {
					b.Fatal(err)
				}
				changes, blobs, err := done(ctx)
				if err != nil || (recorded && len(changes) != 1) {
					b.Fatalf("%d changes: %v", len(changes), err)
				}
				commit(state.Event{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: id, Result: result}, Files: changes, Blobs: blobs})
			}
		})
	}
}

func noChanges(context.Context) ([]state.FileChange, []state.Blob, error) { return nil, nil, nil }
