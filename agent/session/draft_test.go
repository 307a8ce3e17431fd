package session_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"retrace/agent/llmserver"
	"retrace/agent/session"
	"retrace/state"
	"retrace/storage"
)

// A draft is a session in memory only: nothing is in the store, and no
// claim held, until its first message writes it, named after it and with
// the model chosen meanwhile. What needs a version says so instead of
// failing on a session that is not there.
func TestDraftIsWrittenByItsFirstMessage(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	count := func() int {
		t.Helper()
		list, err := r.store.Sessions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	left := r.ctrl.Info().Session.ID
	if err := r.ctrl.Draft(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	if _, busy := openStore(t, r.db).Holder(left); busy {
		t.Fatal("the session left for a draft is still claimed")
	}
	if info := r.ctrl.Info(); info.Session.ID != "" || info.ReadOnly || info.Model != "gpt-test" || info.Session.Versions != 0 {
		t.Fatalf("a draft's info: %+v", info)
	}
	if tree, path, err := r.ctrl.History(0); err != nil || len(path) != 0 || len(tree.Branches) != 0 {
		t.Fatalf("a draft's history: %+v %v %v", tree, path, err)
	}
	for name, err := range map[string]error{
		"Restore": restoreErr(r.ctrl, 0), "Compact": r.ctrl.Compact(), "Resume": r.ctrl.Resume(),
		"WriteExport": func() error { _, err := r.ctrl.WriteExport("md", filepath.Join(t.TempDir(), "x.md")); return err }(),
	} {
		if !errors.Is(err, session.ErrDraft) {
			t.Errorf("%s on a draft: %v, want ErrDraft", name, err)
		}
	}
	if err := r.ctrl.Draft(storage.NewSession{}); err != nil { // a draft for a draft
		t.Fatal(err)
	}
	if err := r.ctrl.SetModel("gpt-other"); err != nil {
		t.Fatal(err)
	}
	if err := r.ctrl.Submit(" \n"); !errors.Is(err, session.ErrEmptyMessage) {
		t.Fatalf("an empty message: %v", err)
	}
	if n := count(); n != 1 {
		t.Fatalf("%d sessions before the draft's first message, want 1 (the one left)", n)
	}

	r.srv.Enqueue(llmserver.TextReply("Written."))
	if err := r.ctrl.Submit("write me down"); err != nil {
		t.Fatal(err)
	}
	done, _ := finish(t, r.ctrl)
	id := done.Info.Session.ID
	if done.Err != nil || id == "" || id == left || done.State.SessionID != id || done.State.Version != 2 {
		t.Fatalf("the first message: session %q v%d: %v", id, done.State.Version, done.Err)
	}
	info, err := r.store.Session(ctx, id)
	if err != nil || info.Title != "write me down" || info.Model != "gpt-other" || info.Workspace != r.ws || info.Versions != 2 {
		t.Fatalf("the written draft: %+v %v", info, err)
	}
	if _, busy := openStore(t, r.db).Holder(id); !busy {
		t.Fatal("the written draft is not claimed by its writer")
	}
	if n := count(); n != 2 {
		t.Fatalf("%d sessions after the first message, want 2", n)
	}
}

// A draft whose first message cannot be sent (no key for its endpoint)
// writes nothing, and a draft closed unsent leaves nothing behind.
func TestDraftLeftUnsentLeavesNothing(t *testing.T) {
	r := newRig(t)
	keyless := r.controller(r.store, session.Config{Resolve: func(rec state.Endpoint) (session.Endpoint, error) {
		return session.Endpoint{Endpoint: state.Endpoint{Model: "gpt-test", BaseURL: "https://api.example.com/v1", KeyEnv: "EXAMPLE_KEY"}, URL: "https://api.example.com/v1"}, nil
	}})
	if err := keyless.Draft(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	if err := keyless.Submit("hello"); !errors.Is(err, session.ErrNoKey) {
		t.Fatal("a message with no key was accepted")
	}
	if err := r.ctrl.Draft(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*session.Controller{keyless, r.ctrl} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if list, err := r.store.Sessions(context.Background()); err != nil || len(list) != 0 {
		t.Fatalf("drafts left %d sessions: %v", len(list), err)
	}
	if len(r.srv.Requests()) != 0 {
		t.Fatalf("%d requests from drafts never sent", len(r.srv.Requests()))
	}
}
