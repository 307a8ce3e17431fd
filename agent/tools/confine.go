package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// Every file operation of the tools is here, and each goes through the
// workspace's os.Root. Resolve decides whether a path is inside and says
// why not; the root makes that decision hold when the path is used: a
// directory swapped for a symlink after Resolve looked makes the operation
// fail instead of following it out (TestSwapRaceStaysInside).

// escapeText is how os.Root says a path left it. Go keeps the error
// unexported; TestEscapeRecognised fails if its text changes.
const escapeText = "path escapes from parent"

// isEscape reports whether err, from an os.Root method, is a refusal to
// leave the root.
func isEscape(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if err.Error() == escapeText {
			return true
		}
	}
	return false
}

// escaped is the error for a path that os.Root refused although Resolve
// let it through: something on the way changed in between, and the model
// reads the same words as for any other path outside.
func (w *Workspace) escaped(shown string, err error) error {
	return fmt.Errorf("path %q is %w %s (%w)", shown, ErrOutsideWorkspace, w.root, err)
}

// local turns abs, a path Resolve returned, into the name os.Root's
// methods take.
func (w *Workspace) local(abs string) (string, error) {
	rel, ok := within(w.root, abs)
	if !ok {
		return "", fmt.Errorf("path %q is %w %s", abs, ErrOutsideWorkspace, w.root)
	}
	return rel, nil
}

// stat is os.Stat through the root. The error wraps fs.ErrNotExist when
// nothing is there, ErrOutsideWorkspace when the path now leads out.
func (w *Workspace) stat(abs, shown string) (fs.FileInfo, error) {
	rel, err := w.local(abs)
	if err != nil {
		return nil, err
	}
	info, err := w.dir.Stat(rel)
	switch {
	case err == nil:
		return info, nil
	case isEscape(err):
		return nil, w.escaped(shown, err)
	}
	return nil, fmt.Errorf("stat %s: %w", shown, err)
}

// openRegular opens a file for reading and refuses anything but a regular
// file: a directory gets a pointer to list_files, and a FIFO or device
// would block or never end. O_NONBLOCK keeps the open of a FIFO from
// hanging before it can be refused; it changes nothing for regular files.
func (w *Workspace) openRegular(abs, shown string) (*os.File, fs.FileInfo, error) {
	rel, err := w.local(abs)
	if err != nil {
		return nil, nil, err
	}
	f, err := w.dir.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, fmt.Errorf("%s does not exist", shown)
	case isEscape(err):
		return nil, nil, w.escaped(shown, err)
	case err != nil:
		return nil, nil, fmt.Errorf("open %s: %w", shown, err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("stat %s: %w", shown, err)
	}
	switch {
	case info.IsDir():
		f.Close()
		return nil, nil, fmt.Errorf("%s is a directory; use list_files to see what it contains", shown)
	case !info.Mode().IsRegular():
		f.Close()
		return nil, nil, fmt.Errorf("%s is not a regular file (%s)", shown, info.Mode().Type())
	}
	return f, info, nil
}

// readAll reads a whole regular file.
func (w *Workspace) readAll(abs, shown string) (string, error) {
	f, _, err := w.openRegular(abs, shown)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", shown, err)
	}
	return string(b), nil
}

// writeAtomic writes data to abs (shown as the model named it) through a temporary file in the same
// directory and a rename, so that a crash or a full disk leaves either the
// old file or the new one, never half of one. Missing directories are
// created. The directory is opened once and the temporary file is created,
// renamed and (on failure) removed through that handle, so all three act
// in one directory inside the workspace, whatever happens to the names on
// the way to it. The rename replaces the name: other hard links to the
// old file keep the old content.
func (w *Workspace) writeAtomic(abs, shown string, data []byte, mode fs.FileMode) (err error) {
	rel, err := w.local(abs)
	if err != nil {
		return err
	}
	if err := w.dir.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
		if isEscape(err) {
			return w.escaped(shown, err)
		}
		return fmt.Errorf("create directories for %s: %w", abs, err)
	}
	dir, err := w.dir.OpenRoot(filepath.Dir(rel))
	if err != nil {
		if isEscape(err) {
			return w.escaped(shown, err)
		}
		return fmt.Errorf("write %s: %w", abs, err)
	}
	defer dir.Close()
	tmp, tmpName, err := createTemp(dir)
	if err != nil {
		return fmt.Errorf("write %s: %w", abs, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			dir.Remove(tmpName)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", abs, err)
	}
	// The temporary file is made 0600; Chmod, unlike the mode given to
	// OpenFile, is not reduced by the umask, so the mode is kept exactly.
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("chmod %s: %w", abs, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", abs, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", abs, err)
	}
	if err := dir.Rename(tmpName, filepath.Base(rel)); err != nil {
		return fmt.Errorf("rename into %s: %w", abs, err)
	}
	return nil
}

// createTemp is os.CreateTemp for a directory held as a root: a new file
// named .retrace-tmp-<random>, which no other writer can share.
func createTemp(dir *os.Root) (*os.File, string, error) {
	for range 10000 {
		name := ".retrace-tmp-" + strconv.FormatUint(uint64(rand.Uint32()), 10)
		f, err := dir.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		return f, name, nil
	}
	return nil, "", errors.New("no unused temporary file name")
}

// walkTree walks the tree under dir in lexical order, calling visit for
// every entry but dir itself with its absolute path and its slash-separated
// path relative to dir. It skips .git entirely (its objects are noise to
// the model) and does not follow symlinks, which may lead out of the
// workspace. It reads every directory through the workspace's root, so a
// directory replaced by a symlink to outside while the walk goes on is
// not read either; it counts as unreadable. Directories it cannot read
// are counted, not fatal. visit may return fs.SkipDir or fs.SkipAll.
func (w *Workspace) walkTree(ctx context.Context, dir string, visit func(abs, rel string, d fs.DirEntry) error) (unreadable int, err error) {
	start, err := w.local(dir)
	if err != nil {
		return 0, err
	}
	start = filepath.ToSlash(start)
	prefix := len(start) + 1
	if start == "." {
		prefix = 0
	}
	seen := 0
	err = fs.WalkDir(w.tree, start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == start {
				if isEscape(err) {
					return w.escaped(w.rel(dir), err)
				}
				return err
			}
			unreadable++
			return nil
		}
		if seen++; seen%256 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if p == start {
			return nil
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		return visit(filepath.Join(w.root, filepath.FromSlash(p)), p[prefix:], d)
	})
	return unreadable, err
}
