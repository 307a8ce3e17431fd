package session

import (
	"context"
	"errors"
	"time"

	"retrace/state"
	"retrace/storage"
)

// A session opened read-only is one another process writes. The store
// tells nobody when that process keeps a checkpoint or lets the session
// go, so a follower looks, every Config.Follow: it reads the session's
// summary (a short read transaction, which never holds the writer up for
// longer than the read) and, only when that moved, the state at the
// head. It reads without the controller's lock, and takes the lock just
// to put what it read in place.

// defaultFollow is how often a read-only session looks for its writer's
// checkpoints: often enough that the screen keeps up with a person
// reading, seldom enough to cost nothing worth measuring.
const defaultFollow = 500 * time.Millisecond

// Followed carries a read-only session as its writer moved it on: the
// state at the new head and the session with it.
type Followed struct {
	State state.State
	Info  Info
}

// WriterGone says the process that wrote the read-only session let it
// go: TakeOver makes this controller its writer.
type WriterGone struct{}

func (Followed) event()   {}
func (WriterGone) event() {}

// follower is the goroutine watching the open read-only session.
type follower struct {
	stop context.CancelFunc
	done chan struct{}
}

// followLocked starts watching the open session, which is read-only.
func (c *Controller) followLocked() {
	ctx, stop := context.WithCancel(c.base)
	f := &follower{stop: stop, done: make(chan struct{})}
	c.follower = f
	every := c.cfg.Follow
	if every <= 0 {
		every = defaultFollow
	}
	go c.follow(ctx, f.done, c.info, every)
}

// unfollowLocked stops the follower, if any. It does not wait: the
// follower may be waiting for the lock the caller holds, and once it has
// it, it sees it was stopped and puts nothing in place.
func (c *Controller) unfollowLocked() *follower {
	f := c.follower
	if f != nil {
		f.stop()
		c.follower = nil
	}
	return f
}

// follow watches session seen.ID until ctx ends.
func (c *Controller) follow(ctx context.Context, done chan struct{}, seen storage.SessionInfo, every time.Duration) {
	defer close(done)
	id := seen.ID
	h, canTell := c.store.(holder)
	held := true // it opened read-only because it was held
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		// Whether the writer is there is asked first: once it has let go,
		// the summary read next holds the last checkpoint it kept. Once
		// it has gone (said once) nothing is asked again: asking takes
		// the claim itself for a moment.
		stillHeld := held
		if canTell && held {
			_, stillHeld = h.Holder(id)
		}
		info, err := c.store.Session(ctx, id)
		if errors.Is(err, storage.ErrSessionNotFound) {
			c.publishFollowing(ctx, Notice{Text: "another retrace process deleted this session"})
			return
		}
		if err != nil {
			continue // the file is busy for a moment: look again next time
		}
		if moved(seen, info) {
			// What the report needs is read here, not under the lock the
			// interface's calls wait on.
			head, err := c.store.Recent(ctx, id, info.Head, storage.KeepRecent)
			if err != nil {
				continue
			}
			tree, err := c.store.Tree(ctx, id)
			if err != nil {
				continue
			}
			if !c.putFollowed(ctx, head, info, tree) {
				return
			}
			seen = info
		}
		if held && !stillHeld && !c.publishFollowing(ctx, WriterGone{}) {
			return
		}
		held = stillHeld
	}
}

// moved reports a session changed since it was last read.
func moved(before, now storage.SessionInfo) bool {
	return now.Head != before.Head || now.Versions != before.Versions || now.Title != before.Title ||
		!now.UpdatedAt.Equal(before.UpdatedAt)
}

// putFollowed makes head the open session's head and says so, unless the
// follower was stopped meanwhile (the controller opened something else).
func (c *Controller) putFollowed(ctx context.Context, head state.State, info storage.SessionInfo, tree storage.Tree) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ctx.Err() != nil {
		return false
	}
	if err := c.setHeadLocked(head); err != nil {
		c.events.publish(Notice{Text: "could not follow the session: " + err.Error()})
		return true
	}
	c.events.publish(Followed{State: head, Info: c.infoWithLocked(info, tree)})
	return true
}

// publishFollowing publishes ev unless the follower was stopped: under
// the lock, so nothing of a session left comes after what the next one
// says.
func (c *Controller) publishFollowing(ctx context.Context, ev Event) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ctx.Err() != nil {
		return false
	}
	c.events.publish(ev)
	return true
}

// TakeOver makes this controller the writer of the read-only session it
// has open, once the process that wrote it has let it go (WriterGone):
// while another still holds it, it is that process's *storage.BusyError
// and the session stays read-only. On a session it writes already it
// does nothing.
func (c *Controller) TakeOver() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.idleLocked(false); err != nil {
		return err
	}
	if !c.readOnly {
		return nil
	}
	return c.openLocked(c.info.ID, false)
}
