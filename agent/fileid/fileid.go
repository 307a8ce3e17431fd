package fileid

import "errors"

// File is a file as one stat saw it: which file it is (Dev, Ino, Birth)
// and what it was like (the rest).
type File struct {
	Dev, Ino uint64
	// Birth is when the file was created, in ns since the epoch; zero
	// where the file system does not say.
	Birth int64
	Size  int64
	// Mode is the type and permission bits, as st_mode holds them.
	Mode uint32
	// Mtime and Ctime are in ns since the epoch.
	Mtime, Ctime int64
}

// Same reports whether f and g are the same file, whatever was written to
// it between: the same inode, born at the same time.
func (f File) Same(g File) bool {
	return f.Dev == g.Dev && f.Ino == g.Ino && f.Birth == g.Birth
}

// Unchanged reports whether g is f with nothing changed since: the same
// file, with the same size, mode and times. Any write, truncate, chmod or
// rename of it moves the change time, which no one can set.
func (f File) Unchanged(g File) bool { return f == g }

// IsDir reports whether f is a directory.
func (f File) IsDir() bool { return f.Mode&typeMask == dirType }

// The type bits of st_mode, which are the same on every Unix.
const (
	typeMask = 0o170000
	dirType  = 0o040000
)

// ErrNoIdentity is returned for a path whose file system cannot say which
// file it holds: not Linux, or overlayfs, where a file's first write can
// change its inode number and its birth time.
var ErrNoIdentity = errors.New("the file system cannot say which file a path holds")
