package storage

import (
	"errors"
	"os"
	"path/filepath"
)

// DefaultPath is where the database lives unless --db says otherwise:
// $XDG_DATA_HOME/retrace/retrace.db, with XDG's fallback of
// ~/.local/share when XDG_DATA_HOME is unset or not absolute.
func DefaultPath() (string, error) {
	dir := os.Getenv("XDG_DATA_HOME")
	if !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return "", errors.New("cannot find a place for the database: neither XDG_DATA_HOME nor HOME is set; pass --db PATH")
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "retrace", "retrace.db"), nil
}
