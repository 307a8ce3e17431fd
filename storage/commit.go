package storage

import (
	"context"
	"fmt"
	"time"

	"retrace/state"
)

// Appender is the part of a Store that moving a session forward needs.
type Appender interface {
	Append(ctx context.Context, id string, parent int, ev state.Event) (Checkpoint, error)
}

// Cursor moves a session forward from its head, one checkpoint at a time:
// it is how the agent (and anything else that writes a run of events)
// advances a session. It owns the state it builds (a state.Builder), so a
// commit costs the same at the ten-thousandth message as at the first.
type Cursor struct {
	st Appender
	b  *state.Builder
	s  state.State
}

// NewCursor starts at s, which must be the session's head in st.
func NewCursor(st Appender, s state.State) *Cursor {
	return &Cursor{st: st, b: state.NewBuilder(s), s: s}
}

// State is the session's state at the cursor.
func (c *Cursor) State() state.State { return c.s }

// Commit checks ev against the state, keeps it as a checkpoint, and only
// then applies it: on any error the cursor's state is still the session's
// state and nothing was kept. It returns the new state, its version set.
//
// A zero ev.At is set to now. The event is made canonical first, so the
// state Commit returns is exactly the state the store gives back later;
// the file contents it carries (ev.Blobs) go to the store with it.
func (c *Cursor) Commit(ctx context.Context, ev state.Event) (state.State, error) {
	return c.commit(ctx, ev, c.st.Append)
}

// Forker keeps a checkpoint under any version and moves the head to it
// (Store.Fork).
type Forker interface {
	Fork(ctx context.Context, id string, parent int, ev state.Event) (Checkpoint, error)
}

// Fork is Commit for a cursor at a version that need not be the head:
// the checkpoint is kept under the cursor's version, and the head moves
// to it, in one step. The cursor goes on from there with Commit.
func (c *Cursor) Fork(ctx context.Context, st Forker, ev state.Event) (state.State, error) {
	return c.commit(ctx, ev, st.Fork)
}

func (c *Cursor) commit(ctx context.Context, ev state.Event, keep func(context.Context, string, int, state.Event) (Checkpoint, error)) (state.State, error) {
	if ev.At.IsZero() {
		ev.At = time.Now()
	}
	blobs := ev.Blobs
	ev, err := state.Canonical(ev)
	if err != nil {
		return c.s, err
	}
	// Canonical is the event as stored, which has no contents: they travel
	// beside it to the store, to be kept in the checkpoint's transaction.
	ev.Blobs = blobs
	if err := c.b.Check(ev); err != nil {
		return c.s, err
	}
	cp, err := keep(ctx, c.s.SessionID, c.s.Version, ev)
	if err != nil {
		return c.s, err
	}
	if err := c.b.Apply(ev); err != nil {
		// Check passed a moment ago on the same state; this is a bug in
		// state, and the store is now one event ahead of memory.
		return c.s, fmt.Errorf("session %s v%d was kept but does not apply: %w", c.s.SessionID, cp.Version, err)
	}
	c.b.SetVersion(cp.Version, cp.Parent)
	c.s = c.b.State()
	return c.s, nil
}

// Commit applies ev to s and keeps it as a checkpoint under s.Version: one
// step of a Cursor started at s. It copies s's history to build on it (s
// may have forks), so for a run of events use a Cursor.
func Commit(ctx context.Context, st Appender, s state.State, ev state.Event) (state.State, error) {
	return NewCursor(st, s).Commit(ctx, ev)
}
