package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"retrace/state/transcript"
)

// listArgs are list_files' arguments.
type listArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
}

// listFiles is list_files: the entries under a directory that match a
// glob, in tree order (a directory, then what it holds, names sorted), as
// paths relative to the workspace root so they can be passed straight to
// the other tools.
func (r *Registry) listFiles(ctx context.Context, a *listArgs) (string, error) {
	pattern := a.Pattern
	if pattern == "" {
		pattern = "**"
	}
	g, err := compileGlob(pattern)
	if err != nil {
		return "", invalidArgs("list_files", err)
	}
	dir, err := r.resolveDir(a.Path)
	if err != nil {
		return "", err
	}
	out := capped{max: r.opts.MaxOutputBytes}
	total := 0
	unreadable, err := r.ws.walkTree(ctx, dir, func(abs, rel string, d fs.DirEntry) error {
		if d.IsDir() && !g.mayMatchBelow(rel) {
			return fs.SkipDir
		}
		if !g.match(rel, d.IsDir()) {
			return nil
		}
		total++
		if out.lines < r.opts.MaxEntries {
			name := r.ws.rel(abs)
			if d.IsDir() {
				name += "/"
			}
			out.add(quotePath(name))
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("list %s: %w", r.ws.rel(dir), err)
	}
	if total == 0 {
		return fmt.Sprintf("no entries match %q in %s", pattern, r.ws.rel(dir)) + unreadableNote(unreadable), nil
	}
	res := out.b.String()
	if out.lines < total {
		limit := fmt.Sprintf("%d-entry cap", r.opts.MaxEntries)
		if out.full {
			limit = sizeString(r.opts.MaxOutputBytes) + " cap"
		}
		res += fmt.Sprintf("[truncated: showed %d of %d entries (%s); narrow the pattern or path]", out.lines, total, limit)
	}
	return res + unreadableNote(unreadable), nil
}

// resolveDir resolves a directory argument; empty means the root.
func (r *Registry) resolveDir(p string) (string, error) {
	if p == "" {
		p = "."
	}
	abs, err := r.ws.Resolve(p)
	if err != nil {
		return "", err
	}
	info, err := r.ws.stat(abs, p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%s does not exist", p)
	case err != nil:
		return "", err
	case !info.IsDir():
		return "", fmt.Errorf("%s is not a directory; use read_file to read a file", p)
	}
	return abs, nil
}

// unreadableNote says how many directories a walk could not read, since a
// listing or search that silently missed them would mislead.
func unreadableNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("\n[%s could not be read]", transcript.Count(n, "directory"))
}
