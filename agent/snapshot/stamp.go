package snapshot

import (
	"fmt"
	"io/fs"
	"time"
)

// stamp is what one lstat says about a path. Two equal stamps are taken
// to mean equal content, the way git's index does: an edit changes the
// size or the mtime, and when a tool puts the mtime back (or the edit
// lands in the same clock tick), the ctime, which no one can set, or the
// inode, which a rename-over replaces, still moves.
type stamp struct {
	size  int64
	mtime int64 // ns since the epoch
	ctime int64 // ns since the epoch; zero where the platform has none
	ino   uint64
	mode  fs.FileMode // type and permission bits
}

// Windows within which a stamp is too recent to vouch for the content read
// with it. A file's timestamps come from the kernel's coarse clock (one
// tick, 1 to 10 ms, behind the real one), so a write just after our read
// can leave the same stamp behind; a file system that keeps whole seconds
// only (FAT, old ext3 inodes) leaves the same stamp for a second or two.
const (
	recentWindow       = 100 * time.Millisecond
	recentWindowCoarse = 2 * time.Second
)

// recent reports whether the stamp is too close to a scan that started at
// start (ns) for a later scan to trust it: that scan reads the file again,
// as git does with its "racily clean" entries.
func (s stamp) recent(start int64) bool {
	window := recentWindow
	if s.mtime%int64(time.Second) == 0 && s.ctime%int64(time.Second) == 0 {
		window = recentWindowCoarse
	}
	return max(s.mtime, s.ctime) >= start-int64(window)
}

func (s stamp) isDir() bool     { return s.mode.IsDir() }
func (s stamp) isRegular() bool { return s.mode.IsRegular() }
func (s stamp) isSymlink() bool { return s.mode&fs.ModeSymlink != 0 }

// perm is the mode as a FileImage keeps it.
func (s stamp) perm() uint32 { return uint32(s.mode.Perm()) }

// String is the stamp as an untracked image records it
// (state.FileImage.Stamp): the type, then size, mtime, ctime, inode and
// permissions. It is only ever compared whole. A directory's is its type
// and permissions alone: a restore never overwrites a directory (it
// removes only files, and writes a file over nothing but an empty
// directory), so the files coming and going in it, an ignored build
// directory rebuilt, are no reason to stop one.
func (s stamp) String() string {
	if s.isDir() {
		return fmt.Sprintf("dir %o", s.mode.Perm())
	}
	return fmt.Sprintf("%s %d %d %d %d %o", typeName(s.mode), s.size, s.mtime, s.ctime, s.ino, s.mode.Perm())
}

// typeName is one word for the type of a path.
func typeName(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "file"
	case m.IsDir():
		return "dir"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m&fs.ModeNamedPipe != 0:
		return "fifo"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "other"
}
