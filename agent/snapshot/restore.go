package snapshot

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"retrace/state"
)

// Put makes path hold img: for an Absent image it removes the file (as
// Remove does); otherwise it writes data, which must be img's content, with
// img's permission bits (exactly: a restore gives back the mode it
// recorded, whatever the umask), creating missing parent directories.
//
// The write is atomic: data goes to a temporary file in the same
// directory, is synced, and renamed over path; then the directory is
// synced so the rename itself survives a crash. A reader sees the old file
// or the new one, never half of one. A symlink at path is replaced, not
// followed; one in a parent directory is followed only inside the
// workspace (os.Root refuses the rest).
//
// An Untracked image is ErrNotRestorable; data that is not img's content
// is ErrDigestMismatch; a path inside .git is ErrGitPath; and nothing is
// written.
func (w *Watcher) Put(p string, img state.FileImage, data []byte) error {
	return w.PutIf(p, img, data, nil)
}

// PutIf is Put with one more look at path just before it is replaced:
// once the new content is written and synced beside it (for an absent
// image, just before the removal), what path holds is read again, and
// when ok says that may not be overwritten, nothing is replaced and the
// error wraps ErrChangedMeanwhile. A restore of many files checks them
// all before it starts, but the user may save one while it runs; this
// keeps the window in which such a save is lost to the rename itself.
// A nil ok looks at nothing.
func (w *Watcher) PutIf(p string, img state.FileImage, data []byte, ok func(now state.FileImage) bool) error {
	switch {
	case !state.ValidPath(p):
		return fmt.Errorf("put %q: %w", p, ErrInvalidPath)
	case img.Absent:
		return w.removeIf(p, ok)
	case img.Untracked != "":
		return fmt.Errorf("put %s (%s): %w", p, img.Untracked, ErrNotRestorable)
	case Digest(data) != img.Blob:
		return fmt.Errorf("put %s: %w: want %s, data is %s", p, ErrDigestMismatch, img.Blob, Digest(data))
	}
	if err := w.outsideGit(p); err != nil {
		return fmt.Errorf("put %s: %w", p, err)
	}
	dir := path.Dir(p)
	made, err := w.mkdirs(dir)
	if err != nil {
		return fmt.Errorf("put %s: make parent directory: %w", p, err)
	}
	if info, err := w.root.Lstat(p); err == nil && info.IsDir() {
		// An empty directory where the file goes (one a later version
		// made) gives way; one with anything in it stays, and the rename
		// below says so.
		_ = w.root.Remove(p)
	}
	tmp, err := w.writeTemp(p, data, fs.FileMode(img.Mode).Perm())
	if err != nil {
		return fmt.Errorf("put %s: %w", p, err)
	}
	if err := w.lookAgain(p, ok); err != nil {
		_ = w.root.Remove(tmp)
		return fmt.Errorf("put %s: %w", p, err)
	}
	if err := w.root.Rename(tmp, p); err != nil {
		_ = w.root.Remove(tmp)
		return fmt.Errorf("put %s: %w", p, err)
	}
	if err := w.syncDir(dir); err != nil {
		return fmt.Errorf("put %s: %w", p, err)
	}
	// A directory the put made is there after a crash only once its
	// name is synced into its parent, as the file's is into it.
	for _, d := range made {
		if err := w.syncDir(path.Dir(d)); err != nil {
			return fmt.Errorf("put %s: %w", p, err)
		}
	}
	return nil
}

// mkdirs makes dir and the parents it lacks, and returns those it made,
// deepest first.
func (w *Watcher) mkdirs(dir string) ([]string, error) {
	var missing []string
	for d := dir; d != "."; d = path.Dir(d) {
		if _, err := w.root.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
	}
	if len(missing) == 0 {
		return nil, nil
	}
	return missing, w.root.MkdirAll(dir, 0o755)
}

// writeTemp writes data, synced and with mode perm, to a new file beside
// p, and returns its path. The name starts with p's own so that a leftover
// (after a crash between write and rename) says what it was for.
func (w *Watcher) writeTemp(p string, data []byte, perm fs.FileMode) (string, error) {
	var f *os.File
	var tmp string
	for range 10 {
		var suffix [6]byte
		_, _ = rand.Read(suffix[:])
		base := path.Base(p)
		base = base[:min(len(base), 100)] // room for the suffix in a 255-byte name
		tmp = path.Join(path.Dir(p), "."+base+".retrace-"+hex.EncodeToString(suffix[:]))
		var err error
		f, err = w.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("create temporary file: %w", err)
		}
		f = nil
	}
	if f == nil {
		return "", fmt.Errorf("create temporary file beside %s: every name taken", p)
	}
	_, werr := f.Write(data)
	merr := f.Chmod(perm)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, merr, serr, cerr); err != nil {
		_ = w.root.Remove(tmp)
		return "", fmt.Errorf("write temporary file: %w", err)
	}
	return tmp, nil
}

// syncDir makes a rename in dir durable.
func (w *Watcher) syncDir(dir string) error {
	d, _, err := w.open(dir)
	if err != nil {
		return fmt.Errorf("open directory %s to sync: %w", dir, err)
	}
	serr := d.Sync()
	cerr := d.Close()
	if err := errors.Join(serr, cerr); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// Remove deletes the file at path; a file that is not there is fine, and
// so is a directory (there is no file at path). It then removes the parent
// directories the removal left empty, up to the root, as git does on a
// checkout: a restore to a version before a command made build/out.txt
// takes build/ with it, and a later restore that puts a file named build
// back finds the way clear. A symlink at path is removed itself, not its
// target. A path inside .git is ErrGitPath, and stays.
func (w *Watcher) Remove(p string) error { return w.removeIf(p, nil) }

// lookAgain reads what p holds now and asks ok whether it may be
// replaced: ErrChangedMeanwhile when not. A nil ok allows anything.
func (w *Watcher) lookAgain(p string, ok func(now state.FileImage) bool) error {
	if ok == nil {
		return nil
	}
	now, _, err := w.Image(p)
	if err != nil {
		return fmt.Errorf("look at it again: %w", err)
	}
	if !ok(now) {
		return ErrChangedMeanwhile
	}
	return nil
}

// removeIf is Remove, which asks ok first (see PutIf).
func (w *Watcher) removeIf(p string, ok func(now state.FileImage) bool) error {
	if !state.ValidPath(p) {
		return fmt.Errorf("remove %q: %w", p, ErrInvalidPath)
	}
	if err := w.outsideGit(p); err != nil {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	info, err := w.root.Lstat(p)
	switch {
	case isMissing(err):
		return nil
	case err != nil:
		return fmt.Errorf("remove %s: %w", p, err)
	case info.IsDir():
		return nil
	}
	if err := w.lookAgain(p, ok); err != nil {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	if err := w.root.Remove(p); err != nil && !isMissing(err) {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
		// Remove takes a directory only when it is empty: the first one
		// that is not ends the climb.
		if w.root.Remove(dir) != nil {
			break
		}
	}
	return nil
}

// Sweep removes what a Put of path left behind when its process was
// killed between writing the temporary file and renaming it: the
// ".name.retrace-…" files beside path. Anything else is left alone.
func (w *Watcher) Sweep(p string) error {
	if !state.ValidPath(p) {
		return fmt.Errorf("sweep %q: %w", p, ErrInvalidPath)
	}
	if err := w.outsideGit(p); err != nil {
		return fmt.Errorf("sweep %s: %w", p, err)
	}
	dir, base := path.Dir(p), path.Base(p)
	prefix := "." + base[:min(len(base), 100)] + ".retrace-"
	d, _, err := w.open(dir)
	if isMissing(err) {
		return nil
	} else if err != nil {
		return fmt.Errorf("sweep %s: %w", p, err)
	}
	names, err := d.Readdirnames(-1)
	_ = d.Close()
	if err != nil {
		return fmt.Errorf("sweep %s: %w", p, err)
	}
	for _, name := range names {
		suffix, ok := strings.CutPrefix(name, prefix)
		if _, herr := hex.DecodeString(suffix); !ok || len(suffix) != 12 || herr != nil {
			continue
		}
		if err := w.root.Remove(path.Join(dir, name)); err != nil && !isMissing(err) {
			return fmt.Errorf("sweep %s: %w", p, err)
		}
	}
	return nil
}

// InGitDir reports whether the workspace path p is a .git directory or
// inside one (see state.InGitDir).
func InGitDir(p string) bool { return state.InGitDir(p) }

// outsideGit refuses a path a restore must not write: one named inside
// a .git directory (ErrGitPath), one whose directories include a
// symbolic link (ErrLinkedPath: os.Root follows a link that stays in
// the workspace, and a link to .git would lead a write into git's own
// directory under a harmless name), and one inside a directory git
// keeps a repository in under another name (a --separate-git-dir kept
// in the workspace, a bare repository): ErrGitPath. What is missing is
// fine: the restore makes it, as a plain directory.
func (w *Watcher) outsideGit(p string) error {
	if InGitDir(p) {
		return ErrGitPath
	}
	for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
		info, err := w.root.Lstat(dir)
		switch {
		case isMissing(err):
			continue
		case err != nil:
			return err
		case info.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s: %w", dir, ErrLinkedPath)
		case info.IsDir() && w.holdsRepository(dir):
			return fmt.Errorf("%s: %w", dir, ErrGitPath)
		}
	}
	return nil
}

// holdsRepository reports whether dir is a git repository's own
// directory, as git itself tells one: HEAD, objects and refs side by side.
func (w *Watcher) holdsRepository(dir string) bool {
	head, herr := w.root.Lstat(path.Join(dir, "HEAD"))
	objects, oerr := w.root.Lstat(path.Join(dir, "objects"))
	refs, rerr := w.root.Lstat(path.Join(dir, "refs"))
	return herr == nil && oerr == nil && rerr == nil && head.Mode().IsRegular() && objects.IsDir() && refs.IsDir()
}
