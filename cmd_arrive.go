package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"retrace/storage"
)

// arriving closes a session that comes in by import or copy (see
// storage.Arrive): whatever it was doing where it was recorded does not
// go on here. dir is the workspace the user chose for it (--workspace),
// or "" to keep the one it recorded, which must then be a directory of
// this machine. from says where it came from.
func arriving(ex storage.Export, dir, from string) (storage.Export, error) {
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return ex, fmt.Errorf("--workspace %s: %w", dir, err)
		}
		dir = abs
	}
	out, err := storage.Arrive(ex, storage.Arrival{At: time.Now(), From: from, Workspace: dir})
	switch {
	case errors.Is(err, storage.ErrWorkspace) && dir != "":
		return ex, fmt.Errorf("--workspace: %w", err)
	case errors.Is(err, storage.ErrWorkspace):
		// The recorded one may be another machine's, or a path that only
		// means something where it was typed: a rollback writes there.
		return ex, fmt.Errorf("%w; choose the directory its files belong in here with --workspace DIR", err)
	}
	return out, err
}

// arrivedLine says where an arrived session's files belong, and that
// nothing of it runs by itself.
func arrivedLine(info storage.SessionInfo) string {
	return fmt.Sprintf("  workspace %s; nothing of it runs, and no file of it is written, until you send it a message or roll it back\n", inertLine(info.Workspace))
}
