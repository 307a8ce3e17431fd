package fileid

import (
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"golang.org/x/sys/unix"
)

// Lstat says which file is at path: path itself when it is a symlink. A
// missing path (or one under a missing directory, or under a file) is an
// error wrapping fs.ErrNotExist.
func Lstat(path string) (File, error) { return statx(path, unix.AT_SYMLINK_NOFOLLOW) }

// Stat says which file path leads to, following symlinks (and the links
// of /proc/PID/fd, to the open file itself).
func Stat(path string) (File, error) { return statx(path, 0) }

const mask = unix.STATX_BASIC_STATS | unix.STATX_BTIME | unix.STATX_MNT_ID | unix.STATX_MNT_ID_UNIQUE

func statx(path string, flags int) (File, error) {
	var sx unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, flags, mask, &sx); err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			err = fs.ErrNotExist
		}
		return File{}, &fs.PathError{Op: "statx", Path: path, Err: err}
	}
	if !mounts.trusted(path, flags, &sx) {
		return File{}, fmt.Errorf("%s: %w", path, ErrNoIdentity)
	}
	f := File{
		Dev:   unix.Mkdev(sx.Dev_major, sx.Dev_minor),
		Ino:   sx.Ino,
		Size:  int64(sx.Size),
		Mode:  uint32(sx.Mode),
		Mtime: nanos(sx.Mtime),
		Ctime: nanos(sx.Ctime),
	}
	if sx.Mask&unix.STATX_BTIME != 0 {
		f.Birth = nanos(sx.Btime)
	}
	return f, nil
}

func nanos(t unix.StatxTimestamp) int64 { return t.Sec*1e9 + int64(t.Nsec) }

// mount is a mount's id as statx gave it: unique says it is one the
// kernel never gives again (Linux 6.8), rather than one it may give to
// the next mount once this one is gone.
type mount struct {
	id     uint64
	unique bool
}

// trust remembers, per mount, whether its file system says which file a
// path holds, so that a path is stat'ed once, not twice, on a mount seen
// before.
type trust struct {
	mu      sync.Mutex
	byMount map[mount]bool
}

var mounts = trust{byMount: map[mount]bool{}}

// trusted reports whether the file system of the file sx describes keeps
// a file's inode and birth through its life: every one but overlayfs. The
// file system is asked through a descriptor of the file itself (of the
// symlink, when flags say not to follow it), since a symlink's target
// can lie on another.
func (t *trust) trusted(path string, flags int, sx *unix.Statx_t) bool {
	m, known := mount{}, false
	switch {
	case sx.Mask&unix.STATX_MNT_ID_UNIQUE != 0:
		m, known = mount{sx.Mnt_id, true}, true
	case sx.Mask&unix.STATX_MNT_ID != 0:
		m, known = mount{sx.Mnt_id, false}, true
	}
	if known {
		t.mu.Lock()
		ok, seen := t.byMount[m]
		t.mu.Unlock()
		if seen {
			return ok
		}
	}
	open := unix.O_PATH | unix.O_CLOEXEC
	if flags&unix.AT_SYMLINK_NOFOLLOW != 0 {
		open |= unix.O_NOFOLLOW
	}
	fd, err := unix.Open(path, open, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Statfs_t
	if unix.Fstatfs(fd, &st) != nil {
		return false
	}
	ok := st.Type != unix.OVERLAYFS_SUPER_MAGIC
	if known {
		t.mu.Lock()
		t.byMount[m] = ok
		t.mu.Unlock()
	}
	return ok
}
