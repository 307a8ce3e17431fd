//go:build !linux

package fileid

import "fmt"

// Lstat says which file is at path: path itself when it is a symlink.
// Off Linux it cannot, and says ErrNoIdentity.
func Lstat(path string) (File, error) { return File{}, fmt.Errorf("%s: %w", path, ErrNoIdentity) }

// Stat says which file path leads to, following symlinks. Off Linux it
// cannot, and says ErrNoIdentity.
func Stat(path string) (File, error) { return File{}, fmt.Errorf("%s: %w", path, ErrNoIdentity) }
