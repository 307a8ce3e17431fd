package session_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"retrace/agent/session"
	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// losingStore is a store whose claims can be lost, as a database
// connection's can: while lost, every checkpoint is refused with
// storage.ErrClaimLost and nothing is kept.
type losingStore struct {
	*boltstore.Store
	lost atomic.Bool
}

func (s *losingStore) Append(ctx context.Context, id string, parent int, ev state.Event) (storage.Checkpoint, error) {
	if err := s.lostErr(id); err != nil {
		return storage.Checkpoint{}, err
	}
	return s.Store.Append(ctx, id, parent, ev)
}

// A write that finds the claim lost turns the session read-only, says
// so, keeps nothing of the step, follows the session as any read-only one
// does, and is taken over once nobody holds it.
func TestALostClaimTurnsTheSessionReadOnly(t *testing.T) {
	r := newRig(t)
	st := &losingStore{Store: r.store}
	c := r.controller(st, session.Config{Follow: time.Millisecond})
	if err := c.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	r.turn(c, "first", "First.")
	before := c.Head()

	st.lost.Store(true)
	if err := c.Submit("second"); err != nil {
		t.Fatal(err)
	}
	done, evs := finish(t, c)
	var said string
	for _, ev := range evs {
		if n, ok := ev.(session.Notice); ok {
			said += n.Text
		}
	}
	if done.Err == nil || !done.Info.ReadOnly || !c.Info().ReadOnly || !strings.Contains(said, "went read-only") {
		t.Fatalf("after the lost claim: err %v, read-only %v (info %v), notices %q", done.Err, c.Info().ReadOnly, done.Info.ReadOnly, said)
	}
	if head := c.Head(); head.Version != before.Version {
		t.Errorf("the head moved to v%d after nothing was kept (was v%d)", head.Version, before.Version)
	}
	if err := c.Submit("third"); err == nil {
		t.Error("a read-only session took a message")
	}

	// Nobody holds it (the lost claim was this process's): the follower
	// says the writer is gone, and a take-over writes again.
	until(t, c, isWriterGone)
	st.lost.Store(false)
	if err := c.TakeOver(); err != nil || c.Info().ReadOnly {
		t.Fatalf("take over: %v, read-only %v", err, c.Info().ReadOnly)
	}
	// Its message and answer follow the last version kept.
	if done := r.turn(c, "again", "Again."); done.State.Version != before.Version+2 {
		t.Errorf("the next turn ends at v%d, want v%d", done.State.Version, before.Version+2)
	}
}

func (s *losingStore) Fork(ctx context.Context, id string, parent int, ev state.Event) (storage.Checkpoint, error) {
	if err := s.lostErr(id); err != nil {
		return storage.Checkpoint{}, err
	}
	return s.Store.Fork(ctx, id, parent, ev)
}

// A rollback whose write finds the claim lost turns the session
// read-only too: every operation that writes ends the same way.
func TestALostClaimUnderARollbackTurnsTheSessionReadOnly(t *testing.T) {
	r := newRig(t)
	st := &losingStore{Store: r.store}
	c := r.controller(st, session.Config{Follow: time.Millisecond})
	if err := c.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	r.turn(c, "first", "First.")
	st.lost.Store(true)
	if err := restoreErr(c, 1); !errors.Is(err, storage.ErrClaimLost) || !c.Info().ReadOnly {
		t.Fatalf("rollback after the lost claim: %v, read-only %v", err, c.Info().ReadOnly)
	}
}

func (s *losingStore) SetHead(ctx context.Context, id string, version int) error {
	if err := s.lostErr(id); err != nil {
		return err
	}
	return s.Store.SetHead(ctx, id, version)
}

// lostErr is what every write says while the claim is lost.
func (s *losingStore) lostErr(id string) error {
	if s.lost.Load() {
		return fmt.Errorf("session %s: the connection ended: %w", id, storage.ErrClaimLost)
	}
	return nil
}
