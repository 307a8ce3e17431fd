package storage

import (
	"context"
	"time"

	"retrace/state"
)

// Appender is the part of a Store that Commit needs.
type Appender interface {
	Append(ctx context.Context, id string, parent int, ev state.Event) (Checkpoint, error)
}

// Commit is the one way to move a session forward: it applies ev to s and
// keeps it as a checkpoint under s.Version, returning the new state with
// its version set. On any error s is still the session's state and nothing
// was kept.
//
// A zero ev.At is set to now. The event is made canonical first, so the
// state Commit returns is exactly the state the store gives back later.
func Commit(ctx context.Context, st Appender, s state.State, ev state.Event) (state.State, error) {
	if ev.At.IsZero() {
		ev.At = time.Now()
	}
	ev, err := state.Canonical(ev)
	if err != nil {
		return s, err
	}
	next, err := state.Apply(s, ev)
	if err != nil {
		return s, err
	}
	cp, err := st.Append(ctx, s.SessionID, s.Version, ev)
	if err != nil {
		return s, err
	}
	next.Version, next.ParentVersion = cp.Version, cp.Parent
	return next, nil
}
