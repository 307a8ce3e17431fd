package session_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"retrace/agent/llmserver"
	"retrace/agent/session"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// isFollowedAt stops at the Followed event whose head is version v.
func isFollowedAt(v int) func(session.Event) bool {
	return func(ev session.Event) bool {
		f, ok := ev.(session.Followed)
		return ok && f.State.Version == v
	}
}

func isWriterGone(ev session.Event) bool { _, ok := ev.(session.WriterGone); return ok }

// writtenOnce is a rig whose controller writes a session with one turn
// ("first", "First."), left open: the writer a reader follows.
func writtenOnce(t *testing.T) (*rig, string) {
	t.Helper()
	r := newRig(t)
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	r.turn(r.ctrl, "first", "First.")
	return r, r.ctrl.Info().Session.ID
}

// A read-only session follows its writer, in another store on the same
// file as another process would be: each checkpoint and a rollback
// arrive as Followed, with the session's info. Taking it over is refused
// while the writer holds it; once the writer lets go, WriterGone says so
// and TakeOver makes the reader the writer.
func TestReadOnlyFollowsAndTakesOver(t *testing.T) {
	r, id := writtenOnce(t)
	look := r.controller(openStore(t, r.db), session.Config{ReadOnlyWhenBusy: true, Follow: time.Millisecond})
	if err := look.Open(id); err != nil || !look.Info().ReadOnly {
		t.Fatalf("open: read-only %v, %v", look.Info().ReadOnly, err)
	}

	r.turn(r.ctrl, "second", "Second.")
	evs := until(t, look, isFollowedAt(4))
	last := evs[len(evs)-1].(session.Followed)
	if last.State.FinalAnswer != "Second." || last.Info.Session.Versions != 4 || !last.Info.ReadOnly || last.Info.Session.Title != "first" {
		t.Fatalf("followed: %q, info %+v", last.State.FinalAnswer, last.Info)
	}
	if head := look.Head(); head.Version != 4 || len(head.History) != len(r.ctrl.Head().History) {
		t.Fatalf("the reader's head: v%d", head.Version)
	}
	if err := restoreErr(r.ctrl, 2); err != nil {
		t.Fatal(err)
	}
	until(t, look, isFollowedAt(2))

	if err := look.TakeOver(); !errors.Is(err, storage.ErrBusy) || !look.Info().ReadOnly {
		t.Fatalf("taking over from a writer still there: %v, read-only %v", err, look.Info().ReadOnly)
	}
	if err := r.ctrl.Close(); err != nil {
		t.Fatal(err)
	}
	until(t, look, isWriterGone)
	if err := look.TakeOver(); err != nil || look.Info().ReadOnly {
		t.Fatalf("taking over after the writer quit: %v, read-only %v", err, look.Info().ReadOnly)
	}
	if _, busy := openStore(t, r.db).Holder(id); !busy {
		t.Fatal("the session taken over is not claimed")
	}
	if done := r.turn(look, "third", "Third."); done.State.Version != 6 || done.State.ParentVersion != 5 {
		t.Fatalf("the new writer's turn: v%d under v%d", done.State.Version, done.State.ParentVersion)
	}
	if err := look.TakeOver(); err != nil {
		t.Fatalf("taking over a session written already: %v", err)
	}
}

// A reader that opens another session stops following the first: what
// the first's writer keeps then is not reported, and a second writer
// gone is never said of a session no longer open.
func TestFollowingStopsWithTheSession(t *testing.T) {
	r, id := writtenOnce(t)
	look := r.controller(openStore(t, r.db), session.Config{ReadOnlyWhenBusy: true, Follow: time.Millisecond})
	if err := look.Open(id); err != nil {
		t.Fatal(err)
	}
	if err := look.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	r.turn(r.ctrl, "second", "Second.")
	if err := r.ctrl.Close(); err != nil {
		t.Fatal(err)
	}
	// The reader's own task ends its events: none of them is about the
	// session it left.
	r.srv.Enqueue(llmserver.TextReply("Mine."))
	if err := look.Submit("mine"); err != nil {
		t.Fatal(err)
	}
	_, evs := finish(t, look)
	for _, ev := range evs {
		switch ev := ev.(type) {
		case session.Followed:
			t.Fatalf("followed the session left: v%d of %s", ev.State.Version, ev.State.SessionID)
		case session.WriterGone:
			t.Fatal("WriterGone for a session no longer open")
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if ev, err := look.Next(ctx); err == nil {
		t.Fatalf("an event after the task: %#v", ev)
	}
}

// holdCounter counts the reader's questions about the writer's claim:
// each is a claim of its own, taken and let go on the claim file.
type holdCounter struct {
	*boltstore.Store
	asked atomic.Int64
}

func (h *holdCounter) Holder(id string) (int, bool) {
	h.asked.Add(1)
	return h.Store.Holder(id)
}

// Once the writer has gone (said once), the reader stops asking about
// the claim: asking takes the claim itself for a moment, twice a second,
// in a file another process may be opening.
func TestFollowerStopsAskingOnceTheWriterIsGone(t *testing.T) {
	r, id := writtenOnce(t)
	counting := &holdCounter{Store: openStore(t, r.db)}
	look := r.controller(counting, session.Config{ReadOnlyWhenBusy: true, Follow: time.Millisecond})
	if err := look.Open(id); err != nil || !look.Info().ReadOnly {
		t.Fatalf("open: read-only %v, %v", look.Info().ReadOnly, err)
	}
	if err := r.ctrl.Close(); err != nil {
		t.Fatal(err)
	}
	until(t, look, isWriterGone)
	asked := counting.asked.Load()
	// Another writer goes on: following it takes ticks of the reader's.
	next := r.controller(openStore(t, r.db), session.Config{})
	if err := next.Open(id); err != nil {
		t.Fatal(err)
	}
	r.turn(next, "second", "Second.")
	until(t, look, isFollowedAt(4))
	if n := counting.asked.Load() - asked; n != 0 {
		t.Fatalf("the reader asked about the claim %d more times after the writer had gone", n)
	}
}
