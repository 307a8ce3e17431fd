package session

import (
	"fmt"
	"os"
	"path/filepath"

	"retrace/agent/snapshot"
	"retrace/agent/tools"
	"retrace/storage"
)

// A session works in one directory: the workspace it recorded when it
// began. Its tools, the sandbox its commands run in, the watcher that
// records and restores its files, and the instructions its briefing reads
// are all that directory's, whichever directory retrace was started in.
// Config.Workspace is only where a new session begins; opening a session
// of another directory moves the controller there, and a session whose
// directory is not here is refused (or opened read-only, to look), never
// worked on in the current directory instead.

// place is where the open session works: its workspace, and the watcher
// of that workspace's files, or why there is none.
type place struct {
	ws       *tools.Workspace
	files    *snapshot.Watcher
	filesErr error
}

// newPlace opens the watcher of ws's files. A watcher that cannot be
// opened is said when a tool or a restore needs it, not here: reading and
// talking need none.
func newPlace(ws *tools.Workspace, opts snapshot.Options) place {
	p := place{ws: ws}
	p.files, p.filesErr = snapshot.New(ws.Root(), opts)
	if p.filesErr != nil {
		p.filesErr = fmt.Errorf("watch the workspace %s: %w", ws.Root(), p.filesErr)
	}
	return p
}

// close releases the place's directory.
func (p place) close() error {
	if p.files == nil {
		return nil
	}
	return p.files.Close()
}

// OpenWorkspace opens the workspace a session recorded. One that is
// empty, relative, or not a directory on this machine is ErrNoWorkspace:
// a relative or empty path would name whatever directory retrace runs in.
func OpenWorkspace(recorded string) (*tools.Workspace, error) {
	switch {
	case recorded == "":
		return nil, fmt.Errorf("%w: the session records none", ErrNoWorkspace)
	case !filepath.IsAbs(recorded):
		return nil, fmt.Errorf("%w: the session records %q, which is not an absolute path", ErrNoWorkspace, recorded)
	}
	if !isWorkspace(recorded) {
		return nil, fmt.Errorf("%w: the session works in %s, which is not a directory on this machine", ErrNoWorkspace, recorded)
	}
	ws, err := tools.NewWorkspace(recorded)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoWorkspace, err)
	}
	return ws, nil
}

// placeLocked is where the open session works.
func (c *Controller) placeLocked() place {
	return place{ws: c.ws, files: c.files, filesErr: c.filesErr}
}

// placeForLocked is where a session that recorded workspace works: the
// place open now or the new sessions' one when it is that directory, or
// a new place.
func (c *Controller) placeForLocked(recorded string) (place, error) {
	for _, p := range []place{c.placeLocked(), c.home} {
		if recorded == p.ws.Root() {
			return p, nil
		}
	}
	ws, err := OpenWorkspace(recorded)
	if err != nil {
		return place{}, err
	}
	for _, p := range []place{c.placeLocked(), c.home} {
		if ws.Root() == p.ws.Root() { // the same directory by another path
			return p, nil
		}
	}
	return newPlace(ws, c.cfg.Files), nil
}

// moveLocked makes p where the session works and returns the place it
// leaves, still open: the caller drops one of the two, as the open
// succeeds or not.
func (c *Controller) moveLocked(p place) place {
	was := c.placeLocked()
	c.ws, c.files, c.filesErr = p.ws, p.files, p.filesErr
	return was
}

// dropLocked closes p's watcher unless p is where the session works now
// or where new sessions begin.
func (c *Controller) dropLocked(p place) {
	if p.ws != c.ws && p.ws != c.home.ws {
		_ = p.close()
	}
}

// OpenReadOnly makes id the open session to look at only: nothing is
// claimed, written, run or restored, and no writer is followed. It is
// how a session of another directory, or one whose workspace is gone,
// is read without acting in it. The session open before is let go.
func (c *Controller) OpenReadOnly(id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.idleLocked(false); err != nil {
		return err
	}
	info, err := c.store.Session(c.base, id)
	if err != nil {
		return err
	}
	head, err := storage.Latest(c.base, c.store, id, storage.KeepRecent)
	if err != nil {
		return err
	}
	// A workspace that is gone leaves the tools where they are: a
	// session opened to look runs none of them.
	next, perr := c.placeForLocked(info.Workspace)
	if perr != nil {
		next = c.placeLocked()
	}
	was := c.moveLocked(next)
	if err := c.setHeadLocked(head); err != nil {
		c.dropLocked(c.moveLocked(was))
		return err
	}
	c.dropLocked(was)
	if c.info.ID != "" && !c.readOnly {
		_ = c.store.Release(c.info.ID) // this one too, if it was open for writing
	}
	c.unfollowLocked()
	c.info, c.readOnly, c.looking, c.draft = info, true, true, nil
	return nil
}

// isWorkspace reports a recorded workspace that is a directory here,
// named by an absolute path: one a session can be opened in.
func isWorkspace(recorded string) bool {
	if !filepath.IsAbs(recorded) {
		return false
	}
	fi, err := os.Stat(recorded)
	return err == nil && fi.IsDir()
}
