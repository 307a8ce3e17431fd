package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"retrace/agent"
	"retrace/agent/llmserver"
	"retrace/agent/rewind"
	"retrace/agent/session"
	"retrace/agent/snapshot"
	"retrace/agent/snapshot/snapshottest"
	"retrace/agent/tools"
	"retrace/state"
	"retrace/storage"
)

func toolCall(id, name string, args map[string]string) llmserver.Response {
	b, _ := json.Marshal(args)
	return llmserver.ToolCallReply([]llmserver.Call{{ID: id, Name: name, Args: string(b)}})
}

// A scripted model writes a file, edits it, runs a command that creates
// one file, changes another and deletes a third, then writes again.
// Restoring each version leaves the workspace byte-identical to what it
// was at that version, going back and forth; a branch taken from the
// middle keeps its own bytes, and moving between the branches' tips
// brings each one's back.
func TestRestoreBringsBackEveryVersionsFiles(t *testing.T) {
	r := newRig(t)
	if err := os.WriteFile(filepath.Join(r.ws, "changed.txt"), []byte("before the command\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.ws, "doomed.txt"), []byte("the command deletes me\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	// The workspace after each call, by call id.
	calls := []struct {
		id, name string
		args     map[string]string
	}{
		{"w1", "write_file", map[string]string{"path": "notes.md", "content": "one\ntwo\n"}},
		{"e1", "edit_file", map[string]string{"path": "notes.md", "old_text": "two", "new_text": "TWO"}},
		{"c1", "run_command", map[string]string{"command": "echo made > made.txt && echo after >> changed.txt && rm doomed.txt"}},
		{"w2", "write_file", map[string]string{"path": "notes.md", "content": "three\n"}},
	}
	for _, c := range calls {
		r.srv.Enqueue(toolCall(c.id, c.name, c.args))
	}
	r.srv.Enqueue(llmserver.TextReply("Done."))
	if err := r.ctrl.Submit("do the four things"); err != nil {
		t.Fatal(err)
	}
	// Each call waits for its approval: the workspace then is what the
	// calls before it left, and nothing runs while it is read.
	disk := map[string]map[string][32]byte{}
	prev := ""
	var done session.TaskDone
	for done.State.Version == 0 {
		for _, ev := range until(t, r.ctrl, func(ev session.Event) bool {
			_, ask := ev.(session.ApprovalNeeded)
			return ask || isDone(ev)
		}) {
			switch ev := ev.(type) {
			case session.ApprovalNeeded:
				disk[prev] = snapshottest.Hashes(t, r.ws)
				prev = ev.Call.ID
				r.ctrl.Decide(agent.Decision{Approved: true})
			case session.TaskDone:
				disk[prev] = snapshottest.Hashes(t, r.ws)
				done = ev
			}
		}
	}
	if done.Err != nil {
		t.Fatal(done.Err)
	}
	if len(disk) != 5 || maps.Equal(disk["c1"], disk["e1"]) {
		t.Fatalf("the script did not change the workspace as planned: %d states", len(disk))
	}

	// What the workspace must be at each version: as the last tool call
	// before it left it.
	tip := done.State.Version
	_, path, err := r.ctrl.History(tip)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]map[string][32]byte{0: disk[""]}
	last := ""
	for _, rec := range path {
		if rec.Data.Kind == state.ToolFinished {
			last = rec.Data.Tool.ID
		}
		want[rec.Version] = disk[last]
	}
	check := func(v int) {
		t.Helper()
		if _, err := r.ctrl.Restore(v, session.Rollback{}); err != nil {
			t.Fatalf("restore v%d: %v", v, err)
		}
		if got := snapshottest.Hashes(t, r.ws); !maps.Equal(got, want[v]) {
			t.Fatalf("at v%d the workspace differs: %d files, want %d", v, len(got), len(want[v]))
		}
	}
	for v := 0; v <= tip; v++ {
		check(v)
	}
	for v := tip; v >= 0; v-- {
		check(v)
	}

	// A branch from after the edit: the model writes another way.
	var afterEdit int
	for _, rec := range path {
		if rec.Data.Kind == state.ToolFinished && rec.Data.Tool.ID == "e1" {
			afterEdit = rec.Version
		}
	}
	check(afterEdit)
	r.srv.Enqueue(toolCall("w3", "write_file", map[string]string{"path": "other.md", "content": "another way\n"}), llmserver.TextReply("Other."))
	if err := r.ctrl.Submit("another way"); err != nil {
		t.Fatal(err)
	}
	until(t, r.ctrl, func(ev session.Event) bool { _, ask := ev.(session.ApprovalNeeded); return ask })
	r.ctrl.Decide(agent.Decision{Approved: true})
	branch, _ := finish(t, r.ctrl)
	if branch.Err != nil {
		t.Fatal(branch.Err)
	}
	want[branch.State.Version] = snapshottest.Hashes(t, r.ws)
	if _, ok := want[branch.State.Version]["other.md"]; !ok {
		t.Fatal("the branch's write is not on disk")
	}
	check(tip)
	if _, ok := snapshottest.Hashes(t, r.ws)["other.md"]; ok {
		t.Fatal("back on the first branch, the second branch's file is still there")
	}
	check(branch.State.Version)
	check(tip)

	// A file edited by hand is a conflict: nothing changes, the head
	// included; Force restores it.
	if err := os.WriteFile(filepath.Join(r.ws, "notes.md"), []byte("by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	headBefore := r.ctrl.Head().Version
	_, err = r.ctrl.Restore(0, session.Rollback{})
	var ce *rewind.ConflictError
	if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].Path != "notes.md" {
		t.Fatalf("restore over a file edited by hand: %v", err)
	}
	if r.ctrl.Head().Version != headBefore {
		t.Fatal("a refused restore moved the head")
	}
	if b, _ := os.ReadFile(filepath.Join(r.ws, "notes.md")); string(b) != "by hand\n" {
		t.Fatalf("a refused restore changed notes.md: %q", b)
	}
	if _, err := r.ctrl.Restore(0, session.Rollback{Force: true}); err != nil {
		t.Fatal(err)
	}
	if got := snapshottest.Hashes(t, r.ws); !maps.Equal(got, want[0]) {
		t.Fatal("--force did not bring back v0's workspace")
	}
}

// A command stopped halfway has its changes recorded all the same, so a
// rollback undoes them.
func TestInterruptedCommandsChangesAreRecorded(t *testing.T) {
	r := newRig(t)
	r.ctrl = r.controller(r.store, session.Config{Allowed: []string{"run_command"}})
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	made := filepath.Join(r.ws, "made.txt")
	r.srv.Enqueue(toolCall("c1", "run_command", map[string]string{"command": "echo half > made.txt && sleep 60"}))
	if err := r.ctrl.Submit("start something long"); err != nil {
		t.Fatal(err)
	}
	// The command runs until it is cancelled: wait for its first effect.
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(made); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never wrote made.txt")
		}
		time.Sleep(10 * time.Millisecond)
	}
	r.ctrl.Cancel()
	done, _ := finish(t, r.ctrl)
	if !done.Interrupted() {
		t.Fatalf("the task ended %v", done.Err)
	}
	if e, ok := done.State.Files["made.txt"]; !ok || !e.Was.Absent || e.Now.Absent {
		t.Fatalf("the manifest does not hold made.txt: %+v", done.State.Files)
	}
	if _, err := r.ctrl.Restore(0, session.Rollback{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(made); !os.IsNotExist(err) {
		t.Fatalf("restoring v0 left made.txt: %v", err)
	}
}

// A restore left open (the process stopped between restore_started and
// files_restored) is not finished when the session is opened: no file is
// written, the session takes no message, and FinishRestore finishes it
// when the user says so.
func TestOpenLeavesAnOpenRestoreUntilAsked(t *testing.T) {
	r := newRig(t)
	r.ctrl = r.controller(r.store, session.Config{Allowed: []string{"write_file"}})
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	r.srv.Enqueue(toolCall("w1", "write_file", map[string]string{"path": "notes.md", "content": "hi\n"}), llmserver.TextReply("Wrote it."))
	if err := r.ctrl.Submit("write notes"); err != nil {
		t.Fatal(err)
	}
	done, _ := finish(t, r.ctrl)
	id := done.Info.Session.ID
	// What a restore to v1 writes first, then the process stops.
	ctx := context.Background()
	target, err := r.store.At(ctx, id, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.store.SetHead(ctx, id, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := storage.NewCursor(r.store, target).Commit(ctx, state.Event{Kind: state.RestoreStarted, From: done.State.Version,
		Files: rewind.Plan(done.State, target)}); err != nil {
		t.Fatal(err)
	}
	if err := r.ctrl.Open(id); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(r.ws, "notes.md")
	if _, err := os.Stat(notes); err != nil {
		t.Fatalf("opening the session wrote the restore's files: %v", err)
	}
	if head := r.ctrl.Head(); head.Restoring == nil {
		t.Fatalf("the open restore is gone at v%d", head.Version)
	}
	var open *session.RestoreOpenError
	for _, start := range []func() error{func() error { return r.ctrl.Submit("go on") }, r.ctrl.Resume} {
		if err := start(); !errors.As(err, &open) || open.Target != 1 || open.Files != 1 || !errors.Is(err, session.ErrRestoreOpen) {
			t.Fatalf("a task on an open restore: %v", err)
		}
	}
	if _, err := os.Stat(notes); err != nil {
		t.Fatalf("a refused task wrote the restore's files: %v", err)
	}
	res, err := r.ctrl.FinishRestore()
	if err != nil || !strings.Contains(res.Text, "interrupted, then finished: restored 1 file to v1") {
		t.Fatalf("finish: %q, %v", res.Text, err)
	}
	if _, err := os.Stat(notes); !os.IsNotExist(err) {
		t.Fatalf("FinishRestore did not finish the restore: %v", err)
	}
	if head := r.ctrl.Head(); head.Restoring != nil {
		t.Fatalf("the restore is still open at v%d", head.Version)
	}
}

// keyed is a controller that talks to the rig's model with key, in the
// rig's workspace and store, on a new session.
func keyed(t *testing.T, r *rig, key string, allowed ...string) *session.Controller {
	t.Helper()
	ws, err := tools.NewWorkspace(r.ws)
	if err != nil {
		t.Fatal(err)
	}
	c := session.New(context.Background(), r.store, session.Config{BaseURL: r.srv.URL(), APIKey: key, Model: "gpt-test",
		Workspace: ws, Allowed: allowed, Files: snapshot.Options{CacheDir: t.TempDir()}})
	t.Cleanup(func() { c.Close() })
	if err := c.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	return c
}

// keyNotInTheDatabase closes c and the store, and fails if the database
// file holds key anywhere.
func keyNotInTheDatabase(t *testing.T, r *rig, c *session.Controller, key string) {
	t.Helper()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.store.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(r.db)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(key)) {
		t.Fatal("the database file holds the key")
	}
}

// A file that holds the API key is recorded as changed, never with its
// content: the key reaches neither the store nor an export.
func TestAKeyInAFileIsNeverStored(t *testing.T) {
	r := newRig(t)
	const key = "sk-a-real-looking-key-0123456789"
	c := keyed(t, r, key, "edit_file")
	// The person's own file holds the key; the agent edits another line.
	if err := os.WriteFile(filepath.Join(r.ws, ".env.local"), []byte("OPENAI_API_KEY="+key+"\nDEBUG=0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.srv.Enqueue(toolCall("e1", "edit_file", map[string]string{"path": ".env.local", "old_text": "DEBUG=0", "new_text": "DEBUG=1"}),
		llmserver.TextReply("Debugging on."))
	if err := c.Submit("turn debugging on"); err != nil {
		t.Fatal(err)
	}
	done, _ := finish(t, c)
	e, ok := done.State.Files[".env.local"]
	if !ok || e.Now.Untracked != "it holds retrace's API key, which is never stored" || e.Was.Untracked != e.Now.Untracked {
		t.Fatalf("manifest: %+v", done.State.Files)
	}
	keyNotInTheDatabase(t, r, c, key)
}

// A file that holds the API key, read by the agent, reaches the store
// with the key replaced.
func TestAKeyReadFromAFileIsNeverStored(t *testing.T) {
	r := newRig(t)
	const key = "sk-a-real-looking-key-9876543210"
	if err := os.WriteFile(filepath.Join(r.ws, ".env"), []byte("OPENAI_API_KEY="+key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := keyed(t, r, key)
	r.srv.Enqueue(toolCall("r1", "read_file", map[string]string{"path": ".env"}), llmserver.TextReply("It sets the key."))
	if err := c.Submit("what is in .env?"); err != nil {
		t.Fatal(err)
	}
	done, _ := finish(t, c)
	if res := done.State.Memory.ToolCalls[0].Result; !strings.Contains(res, "OPENAI_API_KEY=[the API key]") {
		t.Fatalf("the tool result %q", res)
	}
	reqs := r.srv.Requests()
	for _, m := range reqs[len(reqs)-1].Messages {
		if strings.Contains(m.Content, key) {
			t.Fatal("the key went to the model")
		}
	}
	keyNotInTheDatabase(t, r, c, key)
}

// A project's AGENTS.md that holds the key reaches the model, and the
// session that records what it was told, with the key replaced.
func TestAKeyInTheInstructionsIsNeverStored(t *testing.T) {
	r := newRig(t)
	const key = "sk-a-real-looking-key-5555566666"
	if err := os.WriteFile(filepath.Join(r.ws, "AGENTS.md"), []byte("Deploy with the key "+key+".\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := keyed(t, r, key)
	r.srv.Enqueue(llmserver.TextReply("Noted."))
	if err := c.Submit("how do I deploy?"); err != nil {
		t.Fatal(err)
	}
	finish(t, c)
	sys := r.srv.Requests()[0].Messages[0].Content
	if strings.Contains(sys, key) || !strings.Contains(sys, "Deploy with the key [the API key].") {
		t.Fatalf("the system message: %q", sys)
	}
	keyNotInTheDatabase(t, r, c, key)
}

// A command that changes more files than its budget has every change
// recorded, the contents past the budget left out, and both the person
// (a notice) and the model (the tool result) told so.
func TestACommandPastItsBudgetSaysSo(t *testing.T) {
	r := newRig(t)
	c := r.controller(r.store, session.Config{Allowed: []string{"run_command"}, Files: snapshot.Options{MaxCallFiles: 2, CacheDir: t.TempDir()}})
	if err := c.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	r.srv.Enqueue(toolCall("c1", "run_command", map[string]string{"command": "for i in 1 2 3 4 5; do echo $i > f$i.txt; done"}),
		llmserver.TextReply("Made five files."))
	if err := c.Submit("make five files"); err != nil {
		t.Fatal(err)
	}
	done, evs := finish(t, c)
	if len(done.State.Files) != 5 {
		t.Fatalf("manifest holds %d files, want all 5: %+v", len(done.State.Files), done.State.Files)
	}
	kept := 0
	for _, e := range done.State.Files {
		if e.Now.Tracked() {
			kept++
		}
	}
	if kept != 2 {
		t.Errorf("%d contents kept, want the budget's 2", kept)
	}
	const said = "3 files of the 5 files this command changed were recorded without content"
	noticed := false
	for _, ev := range evs {
		if n, ok := ev.(session.Notice); ok && strings.Contains(n.Text, said) {
			noticed = true
		}
	}
	if !noticed {
		t.Errorf("no notice says %q among %v", said, evs)
	}
	calls := done.State.Memory.ToolCalls
	if len(calls) != 1 || !strings.Contains(calls[0].Result, said) {
		t.Errorf("the tool result does not say %q: %+v", said, calls)
	}
}
