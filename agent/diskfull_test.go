package agent_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"retrace/agent"
	"retrace/agent/llm"
	"retrace/agent/llmserver"
	"retrace/agent/tools"
	"retrace/state"
	"retrace/storage"
)

// fullDisk is a store whose disk has no room for contents: a checkpoint
// that carries some fails as a full disk fails a write.
type fullDisk struct{ agent.Checkpointer }

func (f fullDisk) Commit(ctx context.Context, ev state.Event) (state.State, error) {
	if len(ev.Blobs) > 0 {
		return f.State(), fmt.Errorf("commit: %w", &os.PathError{Op: "write", Path: "retrace.db", Err: syscall.ENOSPC})
	}
	return f.Checkpointer.Commit(ctx, ev)
}

// madeOne is a workspace in which every call makes r1.bin, and that keeps
// its content.
type madeOne struct{}

func (madeOne) Start(context.Context, string, string) (func(context.Context) ([]state.FileChange, []state.Blob, error), error) {
	data := []byte("made by the command\n")
	d := storage.Digest(data)
	return func(context.Context) ([]state.FileChange, []state.Blob, error) {
		return []state.FileChange{{Path: "r1.bin", Before: state.FileImage{Absent: true},
			After: state.FileImage{Blob: d, Size: int64(len(data)), Mode: 0o644}}}, []state.Blob{{Digest: d, Data: data}}, nil
	}, nil
}

// A call whose changes' contents do not fit on the disk still has its
// changes recorded, without contents, and says so: left unrecorded, a
// rollback would leave its files behind without a word.
func TestAFullDiskStillRecordsTheChanges(t *testing.T) {
	r := newRig(t, agent.Options{Files: madeOne{}})
	head, err := r.store.Head(context.Background(), r.session)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := tools.NewWorkspace(r.ws)
	if err != nil {
		t.Fatal(err)
	}
	model := llm.New(llm.Config{BaseURL: r.srv.URL(), APIKey: "sk-test", Model: "gpt-test",
		Sleep: func(context.Context, time.Duration) error { return nil }})
	a := agent.New(fullDisk{storage.NewCursor(r.store, head)}, model, tools.New(ws, tools.Options{}), r.approve, r.obs, r.opts)
	r.srv.Enqueue(
		llmserver.ToolCallReply(call("call_list", "list_files", `{"path":"."}`)),
		llmserver.TextReply("Listed."),
	)
	s, err := a.Send(context.Background(), "list the files")
	if err != nil {
		t.Fatal(err)
	}
	var got []state.FileChange
	for _, c := range s.Memory.ToolCalls {
		if c.Name == "list_files" {
			if !strings.Contains(c.Result, "disk was full") {
				t.Errorf("the call's result does not say the disk was full: %q", c.Result)
			}
		}
	}
	for p, e := range s.Files {
		got = append(got, state.FileChange{Path: p, Before: e.Was, After: e.Now})
	}
	if len(got) != 1 || got[0].Path != "r1.bin" || got[0].After.Blob != "" || !strings.Contains(got[0].After.Untracked, "disk was full") || !got[0].Before.Absent {
		t.Fatalf("the manifest: %+v", got)
	}
	if !strings.Contains(strings.Join(r.obs.notices, "\n"), "disk was full") {
		t.Errorf("no notice said so: %q", r.obs.notices)
	}
}
