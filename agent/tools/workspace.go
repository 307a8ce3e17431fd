package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"retrace/state"
)

// maxLinkHops bounds how many dangling symlinks Resolve follows by hand in
// one chain, like the kernel's ELOOP limit, so a cycle ends in an error.
const maxLinkHops = 40

// Workspace is the directory tools may touch. It is immutable and safe for
// concurrent use.
type Workspace struct {
	root  string   // absolute, symlinks resolved
	alias string   // absolute form of the directory as given, symlinks kept
	dir   *os.Root // root, held open: every file is opened through it
	tree  fs.FS    // dir's tree as walks read it, a field so a test can make a directory unreadable even to root
}

// NewWorkspace confines tools to dir. dir is made absolute and its symlinks
// are resolved once, here, so that every later check compares real paths;
// it must exist and be a directory. The directory is held open for as long
// as the Workspace lives (os.Root closes it when it is collected), so the
// tools keep working in it even if it is renamed.
func NewWorkspace(dir string) (*Workspace, error) {
	if dir == "" {
		return nil, fmt.Errorf("workspace: %w: empty path", ErrInvalidPath)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	root, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	info, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("workspace %s: not a directory", dir)
	}
	if gitOwn(root) {
		return nil, fmt.Errorf("workspace %s: %w", dir, ErrGitDir)
	}
	d, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	return &Workspace{root: root, alias: abs, dir: d, tree: d.FS()}, nil
}

// ErrGitDir is a workspace that is git's own directory: a .git directory,
// a directory inside one, or a bare repository. The hooks there run
// outside any sandbox at the next git command, so nothing a session
// writes may land there.
var ErrGitDir = errors.New("it is git's own directory (a .git directory or a bare repository), where git keeps the hooks it runs; work in the repository's working tree instead")

// gitOwn reports whether root, absolute with symlinks resolved, is git's
// own directory: a .git directory or inside one, or a bare repository
// (HEAD, objects and refs side by side, as git itself recognizes one).
func gitOwn(root string) bool {
	if state.InGitDir(filepath.ToSlash(root)) {
		return true
	}
	head, herr := os.Lstat(filepath.Join(root, "HEAD"))
	objects, oerr := os.Stat(filepath.Join(root, "objects"))
	refs, rerr := os.Stat(filepath.Join(root, "refs"))
	return herr == nil && oerr == nil && rerr == nil && !head.IsDir() && objects.IsDir() && refs.IsDir()
}

// Root is the workspace directory: absolute, with symlinks resolved.
func (w *Workspace) Root() string { return w.root }

// Resolve turns a path the model gave (relative to the root, or absolute)
// into an absolute path inside the workspace, or an error the model can
// read. The result has every existing symlink resolved: a path is inside
// when its real location is, whatever the symlinks it names on the way. A
// path that does not exist yet (a file about to be written) is inside when
// its deepest existing ancestor is.
//
// The answer holds for the moment it was worked out. Opening the result
// by name afterwards would follow a directory replaced by a symlink in the
// meantime, wherever it led; the tools open it through the workspace's
// os.Root instead, which refuses any step out.
func (w *Workspace) Resolve(p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("%w: empty path", ErrInvalidPath)
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("%w: path %q contains a NUL byte", ErrInvalidPath, p)
	}
	abs := filepath.Join(w.root, p)
	if filepath.IsAbs(p) {
		abs = w.unalias(filepath.Clean(p))
	}
	// Clean has removed every "..", so a lexical check catches all the
	// spellings of an escape ("../x", "./a/../../etc") before the
	// filesystem is touched.
	if !w.contains(abs) {
		return "", fmt.Errorf("path %q is %w %s", p, ErrOutsideWorkspace, w.root)
	}
	real, err := resolveLinks(abs, 0)
	if err != nil {
		return "", fmt.Errorf("resolve path %q: %w", p, err)
	}
	if !w.contains(real) {
		return "", fmt.Errorf("path %q is %w %s (it resolves to %s)", p, ErrOutsideWorkspace, w.root, real)
	}
	return real, nil
}

// unalias rewrites an absolute path spelled through the directory as it
// was given (say /tmp/ws when /tmp is a symlink) to the real root, so the
// model may use either spelling.
func (w *Workspace) unalias(abs string) string {
	if w.alias == w.root {
		return abs
	}
	if rel, ok := within(w.alias, abs); ok {
		return filepath.Join(w.root, rel)
	}
	return abs
}

// contains reports whether abs, a clean absolute path, is the root or
// below it.
func (w *Workspace) contains(abs string) bool {
	_, ok := within(w.root, abs)
	return ok
}

// rel returns abs relative to the root, with slashes, for showing to the
// model: "." for the root itself.
func (w *Workspace) rel(abs string) string {
	if r, ok := within(w.root, abs); ok {
		return filepath.ToSlash(r)
	}
	return abs
}

// within returns p relative to dir when p is dir or below it. A plain
// prefix test would take /root-other for a child of /root.
func within(dir, p string) (string, bool) {
	if p == dir {
		return ".", true
	}
	prefix := dir
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if strings.HasPrefix(p, prefix) {
		return p[len(prefix):], true
	}
	return "", false
}

// resolveLinks resolves every symlink in abs (clean and absolute). The
// components that do not exist yet are kept as they are, below the real
// location of the deepest one that does. A dangling symlink is followed by
// hand, because EvalSymlinks gives up on it and a write through it would
// create its target, wherever that is.
func resolveLinks(abs string, hops int) (string, error) {
	if hops > maxLinkHops {
		return "", errors.New("too many levels of symbolic links")
	}
	existing, rest := abs, ""
	for {
		_, err := os.Lstat(existing)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if errors.Is(err, fs.ErrNotExist) {
		real, err = followDangling(existing, hops)
	}
	if err != nil {
		return "", err
	}
	return filepath.Join(real, rest), nil
}

// followDangling resolves link, a symlink whose target does not exist, by
// reading the link and resolving its target relative to the link's real
// directory.
func followDangling(link string, hops int) (string, error) {
	target, err := os.Readlink(link)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(target) {
		dir, err := filepath.EvalSymlinks(filepath.Dir(link))
		if err != nil {
			return "", err
		}
		target = filepath.Join(dir, target)
	}
	return resolveLinks(filepath.Clean(target), hops+1)
}
