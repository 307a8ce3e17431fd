package session

import (
	"context"
	"errors"
	"slices"
	"strings"

	"retrace/agent"
	"retrace/state"
	"retrace/storage"
)

// Submit starts a task for a message, on its own goroutine, and returns
// at once; the events tell how it goes and TaskDone how it ended. An
// unfinished task at the head (a restored mid-task version) is recorded
// as interrupted first. An untitled session is named after its first
// message; a draft is written to the store by it.
func (c *Controller) Submit(text string) error {
	if strings.TrimSpace(text) == "" {
		return ErrEmptyMessage
	}
	if len(text) > state.MaxMessage {
		return agent.ErrMessageTooLong
	}
	if err := c.writeDraft(text); err != nil {
		return err
	}
	return c.start(func(ctx context.Context, a *agent.Agent) (state.State, error) {
		c.nameAfter(text)
		if err := a.Interrupt(ctx, "a new message replaced this unfinished task"); err != nil {
			return a.State(), err
		}
		return a.Send(ctx, text)
	})
}

// Resume carries on the task the session left unfinished, after a crash,
// a quit or a restore, on its own goroutine. At rest it ends at once.
func (c *Controller) Resume() error {
	return c.start(func(ctx context.Context, a *agent.Agent) (state.State, error) { return a.Resume(ctx) })
}

// Cancel stops the running task: its TaskDone follows, saying so. With
// nothing running it does nothing.
func (c *Controller) Cancel() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.task != nil {
		c.task.cancel()
	}
}

// Decide answers the pending ApprovalNeeded. An answer nobody waits for
// is dropped, so a late key press cannot approve the next question.
func (c *Controller) Decide(d agent.Decision) {
	select {
	case c.decided <- d:
	default:
	}
}

// Allow lets tool run without asking in every session this controller
// opens or starts from now on, as Config.Allowed does: an approval "for
// every session of this project" must not ask again after /new. With
// Config.AllowedIn, only in the sessions of the open session's project.
// The session open now keeps its own answer (Decision.Always) and is
// unchanged until its agent is made again.
func (c *Controller) Allow(tool string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cfg.AllowedIn != nil {
		p := Project(c.ws.Root())
		if !slices.Contains(c.allowed[p], tool) {
			if c.allowed == nil {
				c.allowed = map[string][]string{}
			}
			c.allowed[p] = append(slices.Clone(c.allowed[p]), tool)
		}
		return
	}
	if !slices.Contains(c.cfg.Allowed, tool) {
		c.cfg.Allowed = append(slices.Clone(c.cfg.Allowed), tool)
	}
}

// allowedLocked lists the tools that run without asking in the open
// session: those of its project, with Config.AllowedIn.
func (c *Controller) allowedLocked() []string {
	if c.cfg.AllowedIn == nil {
		return c.cfg.Allowed
	}
	p := Project(c.ws.Root())
	out := slices.Clone(c.cfg.AllowedIn(p))
	for _, t := range c.allowed[p] {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// start runs fn as the session's task on a goroutine of its own.
func (c *Controller) start(fn func(context.Context, *agent.Agent) (state.State, error)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ctx, t, err := c.beginLocked()
	if err != nil {
		return err
	}
	if err := c.readyLocked(); err != nil {
		c.endLocked(t)
		return err
	}
	a := c.agent
	go func() {
		s, err := fn(ctx, a)
		c.mu.Lock()
		defer c.mu.Unlock()
		c.endLocked(t)
		c.wroteLocked(err)
		// Published under the lock, so no later task's events can come
		// before this one's end.
		c.events.publish(TaskDone{State: s, Info: c.infoLocked(), Err: err})
	}()
	return nil
}

// wroteLocked looks at how an operation that writes the session ended:
// one whose write found the claim gone (its connection to the database
// ended) makes the session read-only. Every writing operation ends here:
// a task, a compaction, a restore.
func (c *Controller) wroteLocked(err error) {
	if !errors.Is(err, storage.ErrClaimLost) || c.readOnly {
		return
	}
	// Another process may write it now, so this one follows it, as one
	// opened read-only does, until the person takes it over.
	c.readOnly = true
	c.followLocked()
	c.events.publish(Notice{Text: "this session went read-only: its claim ended with the connection to the database, so another process may write it now; nothing of the step that failed was kept. Once no other process holds it, retrace offers to take it over"})
}

// readyLocked says why a task cannot start on the open session: a restore
// left open at its head, or no key for its endpoint.
func (c *Controller) readyLocked() error {
	if err := RestoreLeftOpen(c.head); err != nil {
		return err
	}
	return c.ep.KeyProblem()
}

// beginLocked reserves the session for one operation.
func (c *Controller) beginLocked() (context.Context, *task, error) {
	if err := c.idleLocked(true); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(c.base)
	t := &task{cancel: cancel, done: make(chan struct{})}
	c.task = t
	return ctx, t, nil
}

func (c *Controller) endLocked(t *task) {
	t.cancel()
	c.task = nil
	close(t.done)
}

// nameAfter titles an untitled session after its first message.
func (c *Controller) nameAfter(text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.info.Title != "" {
		return
	}
	title := Title(text)
	if err := c.store.Rename(c.base, c.info.ID, title); err != nil {
		c.events.publish(Notice{Text: "could not set the title: " + err.Error()})
		return
	}
	c.info.Title = title
}

// Title is a message shortened to a session title: one line, at most 60
// characters.
func Title(text string) string {
	t := strings.Join(strings.Fields(text), " ")
	if r := []rune(t); len(r) > 60 {
		t = string(r[:59]) + "…"
	}
	return t
}

// SetModel sends the next requests to another model of the same endpoint.
func (c *Controller) SetModel(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.idleLocked(false); err != nil {
		return err
	}
	c.model, c.ep.Model = name, name
	if c.cursor != nil {
		c.agent = c.newAgentLocked()
	}
	return nil
}

// Compact summarises the older turns now, between tasks. It has the
// session to itself while it runs, and Cancel stops it.
func (c *Controller) Compact() error {
	c.mu.Lock()
	ctx, t, err := c.beginLocked()
	if err == nil {
		if err = c.ep.KeyProblem(); err != nil {
			c.endLocked(t)
		}
	}
	a := c.agent
	c.mu.Unlock()
	if err != nil {
		return err
	}
	err = a.Compact(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endLocked(t)
	c.wroteLocked(err)
	return err
}
