package session

import (
	"errors"
	"fmt"

	"retrace/agent/rewind"
	"retrace/state"
)

// ErrRestoreOpen: the session's head is a restore of the workspace that a
// stopped retrace left unfinished (see RestoreOpenError).
var ErrRestoreOpen = errors.New("a restore of the workspace was left unfinished")

// RestoreOpenError is a restore a stopped retrace left open at the head.
// Opening the session writes none of its files: the user finishes it
// (FinishRestore) or leaves every file as it is (Restore to Target with
// KeepFiles), and until then the session takes no message.
type RestoreOpenError struct {
	Target int // the version it puts back: the head's parent
	From   int // the version the workspace was at before
	Files  int // how many files it names
}

func (e *RestoreOpenError) Error() string {
	return fmt.Sprintf("a restore of the workspace to v%d (%d files; it was at v%d) was left unfinished by a retrace that stopped, and nothing of it was written since: finish it, or leave the files as they are",
		e.Target, e.Files, e.From)
}

// Unwrap lets errors.Is match ErrRestoreOpen.
func (e *RestoreOpenError) Unwrap() error { return ErrRestoreOpen }

// RestoreLeftOpen returns a *RestoreOpenError when head is a restore left
// open, or nil.
func RestoreLeftOpen(head state.State) error {
	r := head.Restoring
	if r == nil {
		return nil
	}
	return &RestoreOpenError{Target: head.ParentVersion, From: r.From, Files: len(r.Files)}
}

// FinishRestore completes the restore a stopped retrace left open at the
// head, now that the user says so: each file still holding what the
// session recorded gets the restored version's content, and one changed
// since is left and listed. With none open it does nothing.
func (c *Controller) FinishRestore() (rewind.Result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.idleLocked(true); err != nil {
		return rewind.Result{}, err
	}
	res, err := c.finishRestoreLocked()
	c.wroteLocked(err)
	return res, err
}
