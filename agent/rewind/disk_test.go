package rewind_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"retrace/agent/snapshot"
	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// disk is a session in a real store file over a real workspace, moved
// forward the way the agent moves one: a task, then commands whose
// changes the watcher records.
type disk struct {
	t                  testing.TB
	dir, ws, db, cache string
	st                 *boltstore.Store
	files              *snapshot.Watcher
	cur                *storage.Cursor
	id                 string
}

// newDisk makes a workspace dir/ws, opens a store and a watcher in dir
// and starts a task: the session rests in executing, at a version before
// any file change.
func newDisk(t testing.TB, dir string) *disk {
	t.Helper()
	ctx := context.Background()
	d := &disk{t: t, dir: dir, ws: filepath.Join(dir, "ws"), db: filepath.Join(dir, "retrace.db"), cache: filepath.Join(dir, "cache")}
	if err := os.MkdirAll(d.ws, 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := boltstore.Open(d.db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	info, err := st.Create(ctx, storage.NewSession{Workspace: d.ws})
	if err != nil {
		t.Fatal(err)
	}
	if d.files, err = snapshot.New(d.ws, snapshot.Options{CacheDir: d.cache}); err != nil {
		t.Fatal(err)
	}
	d.st, d.id, d.cur = st, info.ID, storage.NewCursor(st, state.New(info.ID))
	d.commit(state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "change the files"}}})
	d.commit(state.Event{Kind: state.PlanSet, Plan: []state.Step{{Text: "change them"}}})
	return d
}

func (d *disk) commit(ev state.Event) state.State {
	d.t.Helper()
	s, err := d.cur.Commit(context.Background(), ev)
	if err != nil {
		d.t.Fatal(err)
	}
	return s
}

// command runs change as the command of a run_command call, records what
// it did as the call's tool_finished and returns that version's state.
func (d *disk) command(id string, change func()) state.State {
	d.t.Helper()
	ctx := context.Background()
	d.commit(state.Event{Kind: state.AssistantMessage, Messages: []state.Message{{Role: state.RoleAssistant,
		ToolCalls: []state.ToolRequest{{ID: id, Name: "run_command", Arguments: `{}`}}}}})
	d.commit(state.Event{Kind: state.ToolStarted, Tool: &state.ToolCall{ID: id}})
	mark, err := d.files.Mark(ctx)
	if err != nil {
		d.t.Fatal(err)
	}
	change()
	changes, blobs, err := d.files.Changes(ctx, mark)
	if err != nil {
		d.t.Fatal(err)
	}
	return d.commit(state.Event{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: id, Result: "ok"}, Files: changes, Blobs: blobs})
}

// write makes rel hold content, with its parent directories.
func (d *disk) write(rel, content string) {
	d.t.Helper()
	p := filepath.Join(d.ws, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		d.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		d.t.Fatal(err)
	}
}
