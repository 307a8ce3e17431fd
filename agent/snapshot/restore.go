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
// is ErrDigestMismatch, and nothing is written.
func (w *Watcher) Put(p string, img state.FileImage, data []byte) error {
	switch {
	case !state.ValidPath(p):
		return fmt.Errorf("put %q: %w", p, ErrInvalidPath)
	case img.Absent:
		return w.Remove(p)
	case img.Untracked != "":
		return fmt.Errorf("put %s (%s): %w", p, img.Untracked, ErrNotRestorable)
	case Digest(data) != img.Blob:
		return fmt.Errorf("put %s: %w: want %s, data is %s", p, ErrDigestMismatch, img.Blob, Digest(data))
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
	d, err := w.root.Open(dir)
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
// target.
func (w *Watcher) Remove(p string) error {
	if !state.ValidPath(p) {
		return fmt.Errorf("remove %q: %w", p, ErrInvalidPath)
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
	dir, base := path.Dir(p), path.Base(p)
	prefix := "." + base[:min(len(base), 100)] + ".retrace-"
	d, err := w.root.Open(dir)
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
