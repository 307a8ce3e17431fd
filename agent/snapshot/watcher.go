package snapshot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"retrace/state"
)

// Watcher sees the files of one workspace: their images one at a time
// (Image), what a command changed among all of them (Mark, Changes), and
// writes images back (Put, Remove). Every file access goes through an
// os.Root, so no symlink can lead a read or a write outside the workspace.
//
// A Watcher is for one goroutine at a time: scans update its stat cache in
// place. Watchers of different workspaces, or of the same one in different
// processes, may share a CacheDir.
type Watcher struct {
	root    *os.Root
	fsys    fs.FS // root.FS(), which the scans walk
	dir     string
	opts    Options
	rules   ignoreRules // at the root: the exclude list
	objects *objects
	index   string

	// last is what the latest scan saw, by directory, or what the index
	// on disk said before the first one: the stat cache a scan consults
	// before reading a file. A scan builds new listings and never changes
	// old ones, since a Mark holds on to them.
	last map[string]*listing
	// saved counts the entries of last that the index on disk holds, so a
	// scan that changed none of them does not write it again.
	saved int
	// loaded says the index on disk was read into last.
	loaded bool

	// Hooks for tests: the scans' clock, and a call for every file about
	// to be read (from a scan's goroutines, side by side).
	now    func() time.Time
	onRead func(path string)
}

// New opens the workspace at dir (made absolute, symlinks resolved) and the
// cache in opts.CacheDir. The workspace's stat index is read by the first
// scan, not here: a session that never runs a command never pays for it.
// Close releases the directory.
func New(dir string, opts Options) (*Watcher, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("snapshot of %s: %w", dir, err)
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot of %s: %w", dir, err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("snapshot of %s: %w", dir, err)
	}
	if err := os.MkdirAll(opts.CacheDir, 0o700); err != nil {
		_ = root.Close()
		return nil, fmt.Errorf("snapshot of %s: make cache directory: %w", dir, err)
	}
	w := &Watcher{
		root:    root,
		fsys:    root.FS(),
		dir:     abs,
		opts:    opts,
		rules:   newIgnoreRules(opts.Exclude),
		objects: newObjects(opts.CacheDir),
		index:   indexFile(opts.CacheDir, abs),
		now:     time.Now,
	}
	return w, nil
}

// Close releases the workspace directory and the content cache's files.
func (w *Watcher) Close() error {
	cerr := w.objects.close()
	if err := w.root.Close(); err != nil {
		return fmt.Errorf("close %s: %w", w.dir, err)
	}
	if cerr != nil {
		return fmt.Errorf("close %s: %w", w.dir, cerr)
	}
	return nil
}

// Image is what path holds now, and its content when the image keeps it
// (nil otherwise). A missing file, or a missing parent directory, is
// Absent. A symlink, a directory or any other non-regular file, a file over
// the size cap, a path inside .git, under a symlinked directory, or ignored
// by a .gitignore or the exclude list is Untracked, with the reason: the
// scans would not keep it either, and Image agrees with them.
func (w *Watcher) Image(p string) (state.FileImage, []byte, error) {
	if !state.ValidPath(p) {
		return state.FileImage{}, nil, fmt.Errorf("image %q: %w", p, ErrInvalidPath)
	}
	comps := strings.Split(p, "/")
	rules := w.rules
	for i := range comps {
		if comps[i] == gitDirName {
			return state.FileImage{Untracked: reasonGitDir}, nil, nil
		}
		dir := "."
		if i > 0 {
			dir = path.Join(comps[:i]...)
		}
		if i > 0 {
			info, err := w.root.Lstat(dir)
			switch {
			case isMissing(err):
				return state.FileImage{Absent: true}, nil, nil
			case err != nil:
				return state.FileImage{}, nil, fmt.Errorf("image %s: %w", p, err)
			case info.Mode()&fs.ModeSymlink != 0:
				return state.FileImage{Untracked: reasonViaSymlink}, nil, nil
			case !info.IsDir():
				return state.FileImage{Absent: true}, nil, nil
			}
			if reason := rules.reason(comps[:i], true); reason != "" {
				return state.FileImage{Untracked: reason}, nil, nil
			}
		}
		if data := w.readGitignore(dir); data != nil {
			rules = rules.with(dir, comps[:i], data)
		}
	}
	info, err := w.root.Lstat(p)
	if isMissing(err) {
		return state.FileImage{Absent: true}, nil, nil
	} else if err != nil {
		return state.FileImage{}, nil, fmt.Errorf("image %s: %w", p, err)
	}
	st := stampOf(info)
	if reason := rules.reason(comps, st.isDir()); reason != "" {
		return notKept(st, reason), nil, nil
	}
	return w.imageOf(p, st)
}

// imageOf reads the file at p, which an lstat found with stamp st.
func (w *Watcher) imageOf(p string, st stamp) (state.FileImage, []byte, error) {
	switch {
	case st.isSymlink():
		return notKept(st, reasonSymlink), nil, nil
	case st.isDir():
		// No file is there: a directory is not a file's content, and its
		// files are images of their own.
		return state.FileImage{Absent: true}, nil, nil
	case !st.isRegular():
		return notKept(st, reasonNotRegular), nil, nil
	case st.size > w.opts.MaxFileSize:
		return notKept(st, capReason(w.opts.MaxFileSize)), nil, nil
	}
	data, got, reason, err := w.readFile(p, st)
	switch {
	case isMissing(err):
		return state.FileImage{Absent: true}, nil, nil
	case err != nil:
		return state.FileImage{}, nil, fmt.Errorf("image %s: %w", p, err)
	case reason != "":
		return notKept(got, reason), nil, nil
	}
	return state.FileImage{Blob: Digest(data), Size: int64(len(data)), Mode: got.perm()}, data, nil
}

// readFile reads the regular file at p that an lstat found with stamp st.
// It returns the stamp of the file it actually opened; a reason instead of
// content when that is not a regular file under the cap, or not the file
// the lstat saw; and an error only when the file could not be read.
func (w *Watcher) readFile(p string, st stamp) (data []byte, got stamp, reason string, err error) {
	f, info, err := w.open(p)
	if err != nil {
		return nil, st, "", err
	}
	defer f.Close()
	got = stampOf(info)
	switch {
	case got.ino != st.ino || got.mode.Type() != st.mode.Type():
		// The path changed between the lstat and the open (or the open
		// followed a symlink put there meanwhile): what we would read
		// is not the file the scan listed.
		return nil, got, reasonReplaced, nil
	case got.size > w.opts.MaxFileSize:
		return nil, got, capReason(w.opts.MaxFileSize), nil
	}
	if w.onRead != nil {
		w.onRead(p)
	}
	data, err = readCapped(f, got.size, w.opts.MaxFileSize)
	if errors.Is(err, errOverCap) {
		return nil, got, capReason(w.opts.MaxFileSize), nil
	}
	return data, got, "", err
}

// open opens the workspace file at p for reading, with what fstat says of
// it. It never waits: a FIFO (or a device) put in a file's place between
// an lstat and the open would block a plain open until a writer came,
// which a hostile process can see to it never does, and retrace would
// hang, deaf to signals. O_NONBLOCK changes nothing for a regular file;
// the caller checks the type it gets before reading.
func (w *Watcher) open(p string) (*os.File, fs.FileInfo, error) {
	f, err := w.root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

var errOverCap = errors.New("over the size cap")

// readCapped reads r to the end, expecting about size bytes, and stops
// with errOverCap past limit: a file that grows while we read it is never
// held whole in memory beyond the cap.
func readCapped(r io.Reader, size, limit int64) ([]byte, error) {
	buf := make([]byte, 0, min(size, limit)+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):min(int64(cap(buf)), limit+1)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return nil, errOverCap
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// readGitignore reads dir's .gitignore, if it has one (nil if not). A
// .gitignore that is not a regular file, or cannot be read, is passed over
// as git passes it over (with a warning we have nowhere to show): failing
// the whole scan for it would lose every other file's changes.
func (w *Watcher) readGitignore(dir string) []byte {
	name := join(dir, ".gitignore")
	if info, err := w.root.Lstat(name); err != nil || !info.Mode().IsRegular() {
		return nil
	}
	return w.readIgnoreFile(name)
}

// maxIgnoreFile bounds what is read of one .gitignore: git's own limit.
const maxIgnoreFile = 100 << 20

// readIgnoreFile reads the .gitignore at name, or nil when it is not a
// regular file (any more) or cannot be read.
func (w *Watcher) readIgnoreFile(name string) []byte {
	f, info, err := w.open(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	if !info.Mode().IsRegular() {
		return nil
	}
	data, err := readCapped(f, info.Size(), maxIgnoreFile)
	if err != nil {
		return nil
	}
	return data
}
