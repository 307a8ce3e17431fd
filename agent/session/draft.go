package session

import (
	"retrace/state"
	"retrace/storage"
)

// Draft makes a new session the open one in memory only: the store holds
// nothing of it, so no list shows it, until its first message, which
// Submit writes it with. A draft left for another session, or closed,
// leaves nothing behind. Until then its Info has no id, and what needs a
// version (restore, compact, export) is ErrDraft.
func (c *Controller) Draft(ns storage.NewSession) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.idleLocked(false); err != nil {
		return err
	}
	// A new session begins where retrace was started.
	was := c.moveLocked(c.home)
	if err := c.setHeadLocked(state.New("")); err != nil {
		c.moveLocked(was)
		return err
	}
	c.dropLocked(was)
	c.letGoLocked("")
	c.unfollowLocked()
	shown := c.completeLocked(ns)
	c.info = storage.SessionInfo{Title: shown.Title, Model: shown.Model, Workspace: shown.Workspace}
	c.readOnly, c.looking, c.draft = false, false, &ns
	return nil
}

// writeDraft writes the open draft to the store, titled after its first
// message, and opens it for writing. Without a draft it does nothing. A
// message that could not be sent (no key) writes nothing.
func (c *Controller) writeDraft(text string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.draft == nil {
		return nil
	}
	if err := c.idleLocked(false); err != nil {
		return err
	}
	if err := c.ep.KeyProblem(); err != nil {
		return err
	}
	// Completed now, not when drafted: /model may have changed it since.
	ns := c.completeLocked(*c.draft)
	if ns.Title == "" {
		ns.Title = Title(text)
	}
	info, err := c.store.Create(c.base, ns)
	if err != nil {
		return err
	}
	return c.openLocked(info.ID, false)
}
