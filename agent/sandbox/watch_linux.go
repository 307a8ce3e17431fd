package sandbox

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"retrace/agent/fileid"
)

// Struct seccomp_notif and seccomp_notif_resp, as the kernel lays them
// out.
type (
	seccompNotif struct {
		ID    uint64
		Pid   uint32
		Flags uint32
		Nr    int32
		Arch  uint32
		IP    uint64
		Args  [6]uint64
	}
	seccompResp struct {
		ID    uint64
		Val   int64
		Error int32
		Flags uint32
	}
)

// Bounds on what the launcher keeps: past them it stops telling which
// paths were written, and says so, rather than grow without end.
const (
	maxWrittenBytes = 64 << 20
	maxPathRead     = unix.PathMax
)

// watcher is the launcher's side of the watch: it serves the filter's
// notifications, notes each path under the workspace that a call of the
// command's names, and what the call does there, and lets the call run.
type watcher struct {
	fd   int
	root string // the workspace, symlinks resolved

	mu      sync.Mutex
	closed  bool
	made    map[string]bool // created, linked: what is there after is the command's
	removed map[string]bool
	trees   map[string]bool // renamed: everything under them written
	// opened holds, per path, the files already there that the command
	// wrote in place, as they were before its first call on each.
	opened map[string][]fileid.File
	size   int    // bytes of the record, about as it is reported
	lost   string // why the record is incomplete, if it is
}

func newWatcher(fd int, root string) *watcher {
	// Each watched call stops its process until the launcher answers:
	// asking the kernel (6.6 and later) to switch to the launcher on the
	// caller's own CPU saves a trip through the scheduler per call. An
	// older kernel refuses, and the watch works as well, if slower.
	_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SECCOMP_IOCTL_NOTIF_SET_FLAGS, unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	return &watcher{fd: fd, root: root, made: map[string]bool{}, removed: map[string]bool{},
		trees: map[string]bool{}, opened: map[string][]fileid.File{}}
}

// serve answers the notifications until the listener fails, and calls
// run whenever a byte comes on wake.
func (w *watcher) serve(wake *os.File, run func()) {
	fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}, {Fd: int32(wake.Fd()), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); err != nil && err != unix.EINTR {
			return
		}
		if fds[1].Revents != 0 {
			var b [1]byte
			_, _ = wake.Read(b[:])
			run()
		}
		switch {
		case fds[0].Revents&unix.POLLIN != 0:
			if !w.receive() {
				return
			}
		case fds[0].Revents != 0:
			return // the listener is gone
		}
	}
}

// receive takes one notification and answers it. It is false when the
// listener failed.
func (w *watcher) receive() bool {
	var req seccompNotif
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(w.fd), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&req)))
	switch errno {
	case 0:
		w.answer(&req)
	case unix.EINTR, unix.ENOENT:
		// Interrupted, or the caller died before we got to it.
	default:
		return false
	}
	return true
}

// answer notes what one call is about to change and lets it run. A call
// that comes after the report was written is refused: the report must
// hold every write that happened.
func (w *watcher) answer(req *seccompNotif) {
	resp := seccompResp{ID: req.ID, Flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	found := w.named(req)
	w.mu.Lock()
	if w.closed {
		resp.Flags, resp.Error = 0, -int32(unix.EPERM)
	} else {
		for _, c := range found {
			w.note(c)
		}
	}
	// The lock is held until the call may run, so that report, which
	// takes it, never misses a call it let through.
	_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(w.fd), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
	w.mu.Unlock()
}

// change is what a call is about to do at one path: make, remove or
// rename what is there (act), or write the file that is there (actWrite,
// with file as it is before the call).
type change struct {
	path string
	act  act
	file fileid.File
}

// fileBytes is about what one file of opened takes in the report, past
// its path.
const fileBytes = 160

// inside reports whether p is in the workspace.
func (w *watcher) inside(p string) bool {
	return p == w.root || strings.HasPrefix(p, w.root+"/")
}

// note keeps c (w.mu held).
func (w *watcher) note(c change) {
	p := c.path
	if w.lost != "" || w.noted(c) {
		return
	}
	w.size += len(p)
	if c.act == actWrite {
		w.size += fileBytes
	}
	if w.size > maxWrittenBytes {
		w.lost = "the command wrote more paths than retrace keeps track of"
		w.made, w.removed, w.trees, w.opened = nil, nil, nil, nil
		return
	}
	switch c.act {
	case actMake:
		w.made[p] = true
	case actRemove:
		w.removed[p] = true
	case actRename:
		w.trees[p] = true
	default:
		w.opened[p] = append(w.opened[p], c.file)
	}
}

// noted reports whether the record holds c already (w.mu held).
func (w *watcher) noted(c change) bool {
	switch c.act {
	case actMake:
		return w.made[c.path]
	case actRemove:
		return w.removed[c.path]
	case actRename:
		return w.trees[c.path]
	}
	for _, f := range w.opened[c.path] {
		if f.Same(c.file) {
			return true
		}
	}
	return false
}

// named resolves the paths a call names, as absolute paths with their
// parent directories' symlinks resolved, and says what the call does at
// each one in the workspace. A path that cannot be read (the caller died, or its memory could
// not be read) is left out: then the change is not the command's, which
// is the side a doubt must fall on.
func (w *watcher) named(req *seccompNotif) []change {
	t, ok := trapOf(req.Nr)
	if !ok {
		return nil
	}
	pid := int(req.Pid)
	var flags uint64
	switch {
	case t.how != 0:
		var how [8]byte
		if readMem(pid, req.Args[t.how], how[:]) != nil {
			return nil
		}
		if flags = binary.NativeEndian.Uint64(how[:]); flags&writeFlags == 0 {
			return nil
		}
	case t.flags != noArg:
		flags = req.Args[t.flags]
	default:
		// Only the opens read them; of those, creat has none and
		// always creates.
		flags = unix.O_CREAT
	}
	var out []change
	for _, a := range t.paths {
		p, fd, err := w.resolve(pid, req, a)
		if err != nil {
			continue
		}
		// Only a path in the workspace is stat'ed: most writes outside
		// it are to /dev/null.
		if w.inside(p) {
			if c, ok := changeAt(t.act, flags, p, fd); ok {
				out = append(out, c)
			}
		}
		if t.follow {
			if real, ok := symlinkTarget(p); ok && w.inside(real) {
				if c, ok := changeAt(t.act, flags, real, ""); ok {
					out = append(out, c)
				}
			}
		}
	}
	// The pid read above may be another process's by now, if the caller
	// died and its pid was reused: the notification's id says.
	id := req.ID
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(w.fd), unix.SECCOMP_IOCTL_NOTIF_ID_VALID, uintptr(unsafe.Pointer(&id))); errno != 0 {
		return nil
	}
	return out
}

// changeAt says what a call that does a, with open flags flags, is about
// to do at p; fd, when set, is the /proc link of the descriptor whose own
// file p is. A write is told by the file it finds there, stat'ed now,
// before the call runs: a file at p when the command has ended that is
// none it wrote, and that it did not make, was put there by someone else.
// (A file someone renames there between the stat and the call is written
// by the command but taken for theirs: the side a doubt falls on.) When
// nothing is there the call creates the file (an open with O_CREAT) or
// fails and changes nothing. When the file system cannot say which file
// is there, whatever is there after counts as the command's, as after a
// creation.
func changeAt(a act, flags uint64, p, fd string) (change, bool) {
	if a != actWrite && a != actOpen {
		return change{path: p, act: a}, true
	}
	var f fileid.File
	var err error
	if fd != "" {
		f, err = fileid.Stat(fd)
	} else {
		f, err = fileid.Lstat(p)
	}
	switch {
	case err == nil:
		return change{path: p, act: actWrite, file: f}, true
	case errors.Is(err, fs.ErrNotExist) && (a != actOpen || flags&unix.O_CREAT == 0):
		return change{}, false
	}
	return change{path: p, act: actMake}, true
}

func trapOf(nr int32) (trap, bool) {
	for _, t := range traps {
		if int32(t.nr) == nr {
			return t, true
		}
	}
	return trap{}, false
}

// resolve makes one path of a call absolute: relative to the directory fd
// it names, or the caller's working directory. An empty or absent path is
// the fd's own file, and then fd is the /proc link to stat it through.
func (w *watcher) resolve(pid int, req *seccompNotif, a pathArg) (p, fd string, err error) {
	var name string
	if a.path != noArg && req.Args[a.path] != 0 {
		if name, err = readString(pid, req.Args[a.path]); err != nil {
			return "", "", err
		}
	}
	if filepath.IsAbs(name) {
		return resolveParent(filepath.Clean(name)), "", nil
	}
	// The kernel resolves the directory a /proc link names: a name
	// without a slash needs nothing more, and that is most of them.
	proc := "/proc/" + strconv.Itoa(pid)
	base := proc + "/cwd"
	if a.dir != noArg && int32(req.Args[a.dir]) != unix.AT_FDCWD {
		base = proc + "/fd/" + strconv.Itoa(int(int32(req.Args[a.dir])))
	}
	dir, err := os.Readlink(base)
	if err != nil {
		return "", "", err
	}
	switch {
	case name == "":
		return filepath.Clean(dir), base, nil
	case !strings.Contains(name, "/") && name != "." && name != "..":
		return filepath.Join(dir, name), "", nil
	}
	return resolveParent(filepath.Join(dir, name)), "", nil
}

// resolveParent resolves the symlinks of p's directory, which exists when
// the call runs, so that p names the file the call will change; p's own
// last component is left as it is (the call may create, remove or rename
// it). The kernel resolves it: the directory is opened as a path only
// (which neither Landlock nor the filter stops) and its /proc link read.
func resolveParent(p string) string {
	dir, file := filepath.Split(p)
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return p
	}
	defer unix.Close(fd)
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return p
	}
	return filepath.Join(real, file)
}

// symlinkTarget is where p leads when it is a symlink: a call that
// follows it changes that file.
func symlinkTarget(p string) (string, bool) {
	var st unix.Stat_t
	if unix.Lstat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
		return "", false
	}
	real, err := filepath.EvalSymlinks(p)
	return real, err == nil && real != p
}

var errNoString = errors.New("no NUL-terminated path")

// readString reads a NUL-terminated string at addr in pid's memory, a
// page at most at a time, so that a string near the end of a mapping is
// read up to its end and no further.
func readString(pid int, addr uint64) (string, error) {
	var out []byte
	for len(out) < maxPathRead {
		n := 4096 - int(addr%4096)
		buf := make([]byte, min(n, maxPathRead-len(out)))
		if err := readMem(pid, addr, buf); err != nil {
			return "", err
		}
		if i := bytes.IndexByte(buf, 0); i >= 0 {
			return string(append(out, buf[:i]...)), nil
		}
		out = append(out, buf...)
		addr += uint64(len(buf))
	}
	return "", errNoString
}

// readMem fills buf from addr in pid's memory.
func readMem(pid int, addr uint64, buf []byte) error {
	local := []unix.Iovec{{Base: &buf[0]}}
	local[0].SetLen(len(buf))
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(buf)}}
	n, err := unix.ProcessVMReadv(pid, local, remote, 0)
	if err != nil {
		return err
	}
	if n != len(buf) {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// report closes the record (a call that comes later is refused) and
// writes it on the status pipe: a "made", "removed" or "tree" line per
// path, quoted; an "opened" line per file written in place, its path
// then what it was like before (device, inode, birth, size, mode, mtime,
// ctime); then "watched", or "unwatched" and why.
func (w *watcher) report(status io.Writer) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if w.lost != "" {
		fmt.Fprintf(status, "unwatched %s\n", w.lost)
		return
	}
	out := bufio.NewWriter(status)
	for kind, set := range map[string]map[string]bool{"made": w.made, "removed": w.removed, "tree": w.trees} {
		for p := range set {
			fmt.Fprintf(out, "%s %s\n", kind, strconv.Quote(p))
		}
	}
	for p, files := range w.opened {
		for _, f := range files {
			fmt.Fprintf(out, "opened %s %d %d %d %d %d %d %d\n", strconv.Quote(p), f.Dev, f.Ino, f.Birth, f.Size, f.Mode, f.Mtime, f.Ctime)
		}
	}
	fmt.Fprintln(out, "watched")
	_ = out.Flush()
}

// watch is the launcher's watch of one command: a watcher, or why there
// is none.
type watch struct {
	w   *watcher
	why string
}

// startWatch puts the write filter on the calling thread, with
// no_new_privs, which an unprivileged process needs to install one, on
// that thread alone: the command it forks cannot gain privileges through
// a setuid program, in every mode.
func startWatch(workspace string, confined bool) watch {
	if workspace == "" {
		return watch{why: "not asked"}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return watch{why: fmt.Sprintf("no_new_privs: %v", err)}
	}
	// The command runs as the same user: without this it could trace the
	// launcher, or take its listener through /proc, and write into the
	// record what it pleased. The command itself is dumpable again once
	// it execs.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return watch{why: fmt.Sprintf("not dumpable: %v", err)}
	}
	fd, err := install(confined)
	if err != nil {
		return watch{why: err.Error()}
	}
	return watch{w: newWatcher(fd, workspace)}
}

// report says on the status pipe what the command wrote, or why that is
// not known.
func (w watch) report(status io.Writer) {
	if w.w == nil {
		fmt.Fprintf(status, "unwatched %s\n", w.why)
		return
	}
	w.w.report(status)
}
