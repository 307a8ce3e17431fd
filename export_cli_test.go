package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"retrace/state"
	"retrace/state/transcript"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// `retrace export` writes a content a piece at a time, and what it writes
// is byte for byte what it wrote when it encoded the whole export at once
// and made it inert: for a session with text a terminal would act on, a
// content kept in chunks and an empty one.
func TestExportWritesWhatTheWholeEncoderWrote(t *testing.T) {
	db, forked, other := fixture(t)
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	info, err := st.Create(ctx, storage.NewSession{Title: "files \x7f \u202e <b>&", Model: "gpt-test", Workspace: "/src/app"})
	if err != nil {
		t.Fatal(err)
	}
	large := []byte(strings.Repeat("a line of a file kept in chunks \u0085\n", 100_000))
	var files []state.FileChange
	var blobs []state.Blob
	for i, data := range [][]byte{large, {}, []byte("small\n")} {
		b := state.Blob{Digest: storage.Digest(data), Data: data}
		blobs = append(blobs, b)
		files = append(files, state.FileChange{Path: string(rune('a'+i)) + ".txt", Before: state.FileImage{Absent: true},
			After: state.FileImage{Blob: b.Digest, Size: int64(len(data)), Mode: 0o644}})
	}
	cur := storage.NewCursor(st, state.New(info.ID))
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for i, ev := range []state.Event{
		{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "write \x1b[2J the files \u009b"}}},
		{Kind: state.PlanSet, Plan: []state.Step{{Text: "write"}}},
		{Kind: state.AssistantMessage, Messages: []state.Message{{Role: state.RoleAssistant,
			ToolCalls: []state.ToolRequest{{ID: "call_1", Name: "write_file", Arguments: `{"path":"a.txt"}`}}}}},
		{Kind: state.ToolStarted, Tool: &state.ToolCall{ID: "call_1"}},
		{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: "call_1", Result: "written"}, Files: files, Blobs: blobs},
	} {
		ev.At = at.Add(time.Duration(i) * time.Second)
		if _, err := cur.Commit(ctx, ev); err != nil {
			t.Fatalf("%s: %v", ev.Kind, err)
		}
	}
	if err := st.Release(info.ID); err != nil {
		t.Fatal(err)
	}

	for _, id := range []string{info.ID, forked, other} {
		ex, err := st.Export(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var whole bytes.Buffer
		enc := json.NewEncoder(&whole)
		enc.SetIndent("", "  ")
		if err := enc.Encode(storage.Exported{Format: storage.ExportFormat, Export: ex}); err != nil {
			t.Fatal(err)
		}
		want := string(transcript.InertJSON(whole.Bytes()))
		if got := retrace(t, "export", id, "--db", db).ok(t).stdout; got != want {
			t.Errorf("session %s: export wrote %d bytes, the whole encoder %d", id, len(got), len(want))
		}
	}
}
