package session

import (
	"context"
	"errors"
	"fmt"

	"retrace/agent"
	"retrace/agent/llm"
	"retrace/agent/rewind"
	"retrace/agent/snapshot"
	"retrace/agent/tools"
	"retrace/state"
	"retrace/state/transcript"
	"retrace/storage"
)

// recorder finds what each tool call changes in the workspace: the one
// file write_file or edit_file names, compared before and after, or the
// whole workspace around a command.
type recorder struct {
	tools *tools.Registry
	files *snapshot.Watcher
	err   error     // why there is no watcher
	key   llm.Scrub // a content holding the API key is never kept
}

// Start records the call's changes, leaving out any content that holds
// the API key: a key is never written to the store, whatever file it is
// in.
func (r recorder) Start(ctx context.Context, name, args string) (func(context.Context) ([]state.FileChange, []state.Blob, error), error) {
	done, err := r.start(ctx, name, args)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) ([]state.FileChange, []state.Blob, error) {
		changes, blobs, err := done(ctx)
		changes, blobs = withoutSecret(r.key, changes, blobs)
		return changes, blobs, err
	}, nil
}

// holdsKey is why a content holding the API key was not kept.
const holdsKey = "it holds retrace's API key, which is never stored"

// withoutSecret drops every content that holds the key and marks the
// images that named it as not kept.
func withoutSecret(key llm.Scrub, changes []state.FileChange, blobs []state.Blob) ([]state.FileChange, []state.Blob) {
	secret := map[string]bool{}
	kept := blobs[:0:0]
	for _, b := range blobs {
		if key.In(b.Data) {
			secret[b.Digest] = true
			continue
		}
		kept = append(kept, b)
	}
	if len(secret) == 0 {
		return changes, blobs
	}
	hide := func(img state.FileImage) state.FileImage {
		if secret[img.Blob] {
			return state.FileImage{Size: img.Size, Mode: img.Mode, Untracked: holdsKey}
		}
		return img
	}
	out := make([]state.FileChange, len(changes))
	for i, c := range changes {
		c.Before, c.After = hide(c.Before), hide(c.After)
		out[i] = c
	}
	return out, kept
}

func (r recorder) start(ctx context.Context, name, args string) (func(context.Context) ([]state.FileChange, []state.Blob, error), error) {
	paths, whole := r.tools.Touches(name, args)
	if (whole || len(paths) > 0) && r.err != nil {
		return nil, r.err
	}
	if whole {
		mark, err := r.files.Mark(ctx)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) ([]state.FileChange, []state.Blob, error) {
			changes, blobs, err := r.files.Changes(ctx, mark)
			if err != nil {
				return changes, blobs, err
			}
			changes, blobs = r.files.Attribute(changes, blobs, commandWrites(ctx))
			return changes, blobs, overBudget(changes)
		}, nil
	}
	type seen struct {
		img  state.FileImage
		data []byte
	}
	before := make([]seen, len(paths))
	for i, p := range paths {
		img, data, err := r.files.Image(p)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		before[i] = seen{img, data}
	}
	return func(context.Context) ([]state.FileChange, []state.Blob, error) {
		var changes []state.FileChange
		var blobs []state.Blob
		for i, p := range paths {
			img, data, err := r.files.Image(p)
			if err != nil {
				return changes, blobs, fmt.Errorf("read %s: %w", p, err)
			}
			if img.Same(before[i].img) {
				continue
			}
			changes = append(changes, state.FileChange{Path: p, Before: before[i].img, After: img})
			for _, s := range []seen{before[i], {img, data}} {
				if s.img.Blob != "" {
					blobs = append(blobs, state.Blob{Digest: s.img.Blob, Data: s.data})
				}
			}
		}
		return changes, blobs, nil
	}, nil
}

// commandWrites is what the call's command wrote, as the sandbox saw it,
// for Attribute to tell its changes from the user's; a context that
// carries no record says nobody watched.
func commandWrites(ctx context.Context) snapshot.Written {
	w, ok := tools.CommandWrites(ctx)
	if !ok {
		return snapshot.Written{Why: "the call was not watched"}
	}
	return snapshot.Written{Watched: w.Watched, Why: w.Why, Made: w.Made, Removed: w.Removed, Trees: w.Trees, Opened: w.Opened}
}

// overBudget says how many of a command's changes were recorded without
// their content because it changed more than its budget of files or
// bytes, as an error wrapping agent.ErrContentsNotKept; nil when none.
func overBudget(changes []state.FileChange) error {
	n, why := 0, ""
	for _, c := range changes {
		for _, img := range []state.FileImage{c.Before, c.After} {
			if snapshot.OverBudget(img) {
				n, why = n+1, img.Untracked
				break
			}
		}
	}
	if n == 0 {
		return nil
	}
	return notKeptError(fmt.Sprintf("%s of the %s this command changed %s recorded without content: %s. A rollback cannot put %s back",
		transcript.Count(n, "file"), transcript.Count(len(changes), "file"), wasWere(n), why, itThem(n)))
}

// notKeptError is overBudget's error: its text is what the person and
// the model are told.
type notKeptError string

func (e notKeptError) Error() string { return string(e) }
func (notKeptError) Unwrap() error   { return agent.ErrContentsNotKept }

func wasWere(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

func itThem(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// Rollback says how a restore treats the workspace's files.
type Rollback = rewind.Options

// finishRestoreLocked completes a restore that a stopped process left
// open at the head (see FinishRestore).
func (c *Controller) finishRestoreLocked() (rewind.Result, error) {
	if c.head.Restoring == nil || c.readOnly {
		return rewind.Result{Head: c.head}, nil
	}
	if c.filesErr != nil {
		return rewind.Result{}, c.filesErr
	}
	res, err := rewind.Finish(c.base, c.store, c.files, c.head)
	if err != nil {
		return res, err
	}
	return res, c.setHeadLocked(res.Head)
}

// Restore moves the head to version and puts the workspace files back as
// they were there (unless how.KeepFiles). Files changed outside retrace
// since the session last recorded them make it a *rewind.ConflictError,
// with nothing changed, unless how.Force. The next message starts a new
// branch; the branch left stays. A running task must end first.
func (c *Controller) Restore(version int, how Rollback) (rewind.Result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.idleLocked(true); err != nil {
		return rewind.Result{}, err
	}
	if c.filesErr != nil && !how.KeepFiles {
		return rewind.Result{}, c.filesErr
	}
	res, err := rewind.Restore(c.base, c.store, c.files, c.head, version, how)
	var conflict *rewind.ConflictError
	if errors.As(err, &conflict) {
		return res, err // refused before anything was written: the head stays
	}
	if err != nil {
		c.wroteLocked(err)
		// The store says where the head is: if the restore moved it before
		// it stopped, the open restore is what the session shows, and
		// finishes when it is opened again.
		if head, herr := storage.Latest(c.base, c.store, c.info.ID, storage.KeepRecent); herr == nil && head.Version != c.head.Version {
			_ = c.setHeadLocked(head)
		}
		return res, err
	}
	return res, c.setHeadLocked(res.Head)
}

// FileDiffs reads both sides of each workspace change from the store and
// diffs them.
func (c *Controller) FileDiffs(changes []state.FileChange) ([]rewind.FileDiff, error) {
	return rewind.DiffAll(c.base, c.store, changes)
}
