package session

import (
	"retrace/state"
	"retrace/storage"
)

// History returns the open session's version tree and the versions on the
// path from the root to version, each with the event that made it, so any
// of them can be shown by replaying the path. The path is the tree's.
func (c *Controller) History(version int) (storage.Tree, []storage.Record, error) {
	id := c.Info().Session.ID
	if id == "" && version == 0 {
		return storage.BuildTree("", 0, nil), nil, nil // a draft: version 0 alone
	}
	ex, err := c.store.Export(c.base, id)
	if err != nil {
		return storage.Tree{}, nil, err
	}
	cps := make([]storage.Checkpoint, len(ex.Checkpoints))
	byVersion := make(map[int]storage.Record, len(ex.Checkpoints))
	for i, r := range ex.Checkpoints {
		cps[i] = r.Checkpoint
		byVersion[r.Version] = r
	}
	tree := storage.BuildTree(id, ex.Session.Head, cps)
	storage.OpenBranches(&tree, func(v int) (state.Event, bool) {
		r, ok := byVersion[v]
		return r.Data, ok
	})
	path := tree.Path(version)
	if path == nil && version != 0 {
		return tree, nil, &storage.VersionError{Session: id, Version: version, Versions: len(tree.Nodes)}
	}
	records := make([]storage.Record, len(path))
	for i, v := range path {
		records[i] = byVersion[v]
	}
	return tree, records, nil
}

// Sessions lists every session in the store, newest first, saying which
// another process has open and which has no workspace here.
func (c *Controller) Sessions() ([]Listed, error) {
	list, err := c.store.Sessions(c.base)
	if err != nil {
		return nil, err
	}
	h, _ := c.store.(holder)
	out := make([]Listed, len(list))
	for i, s := range list {
		out[i].SessionInfo = s
		out[i].NoWorkspace = !isWorkspace(s.Workspace)
		if h != nil {
			_, out[i].Busy = h.Holder(s.ID)
		}
	}
	return out, nil
}

// Delete removes a session other than the open one, with all its
// versions.
func (c *Controller) Delete(id string) error {
	if id == c.Info().Session.ID {
		return ErrOpenSession
	}
	return c.store.Delete(c.base, id)
}
