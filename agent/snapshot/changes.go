package snapshot

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"

	"retrace/state"
)

// Mark is the workspace as a scan saw it before a command ran; Changes
// compares the workspace after with it. The content of every file it saw
// is in the content cache, so a file the command overwrote can still be
// given back.
type Mark struct {
	w    *Watcher
	dirs map[string]*listing
}

// Mark scans the workspace: every file that is not ignored is hashed,
// unless its stamp matches the stat cache, and its content kept in the
// content cache. It fails when the content cannot be kept, since Changes
// could then not say what the command overwrote.
func (w *Watcher) Mark(ctx context.Context) (Mark, error) {
	s := w.newScan(ctx, false, true)
	if err := s.run(); err != nil {
		return Mark{}, fmt.Errorf("mark %s: %w", w.dir, err)
	}
	w.tidy()
	return Mark{w: w, dirs: s.seen}, nil
}

// Changes scans the workspace again and lists every path created, changed
// or deleted since m, sorted by path, with the content of every image that
// names a digest. A change to a file's content or permissions counts; a
// new mtime over the same content does not. An ignored path is reported
// (as Untracked on the sides where it exists) when its size or mtime moved,
// an ignored directory when its own entries did. A content the cache has
// lost turns its image Untracked rather than failing the call: the command
// has run, and the rest of what it did must still be recorded.
func (w *Watcher) Changes(ctx context.Context, m Mark) ([]state.FileChange, []state.Blob, error) {
	if m.w != w {
		return nil, nil, fmt.Errorf("changes in %s: %w", w.dir, ErrForeignMark)
	}
	s := w.newScan(ctx, true, false)
	if err := s.walkAll(); err != nil {
		return nil, nil, fmt.Errorf("changes in %s: %w", w.dir, err)
	}
	changes := diff(m.dirs, s.seen)
	blobs := w.attach(changes, s.kept)
	s.keepIndex()
	w.tidy()
	return changes, blobs, nil
}

// diff lists the paths whose entries differ between two scans, sorted.
func diff(before, after map[string]*listing) []state.FileChange {
	var out []state.FileChange
	for dir, b := range before {
		out = diffListing(out, dir, b, after[dir])
	}
	for dir, a := range after {
		if _, ok := before[dir]; !ok {
			out = diffListing(out, dir, nil, a)
		}
	}
	slices.SortFunc(out, func(x, y state.FileChange) int { return strings.Compare(x.Path, y.Path) })
	return out
}

// diffListing adds the changes between two listings of dir to out; nil is
// a directory that was not there (or not listed). Both are sorted by name,
// so one pass through them in step finds every name on either side.
func diffListing(out []state.FileChange, dir string, b, a *listing) []state.FileChange {
	if b == a {
		return out // the later scan found the directory as it was
	}
	if b == nil {
		b = &listing{}
	}
	if a == nil {
		a = &listing{}
	}
	absent := state.FileImage{Absent: true}
	i, j := 0, 0
	for i < len(b.names) || j < len(a.names) {
		switch {
		case j == len(a.names) || i < len(b.names) && b.names[i] < a.names[j]:
			out = append(out, state.FileChange{Path: join(dir, b.names[i]), Before: b.entries[i].image(), After: absent})
			i++
		case i == len(b.names) || a.names[j] < b.names[i]:
			out = append(out, state.FileChange{Path: join(dir, a.names[j]), Before: absent, After: a.entries[j].image()})
			j++
		default:
			if differ(b.entries[i], a.entries[j]) {
				out = append(out, state.FileChange{Path: join(dir, b.names[i]), Before: b.entries[i].image(), After: a.entries[j].image()})
			}
			i, j = i+1, j+1
		}
	}
	return out
}

// differ reports whether a path changed between two scans. Hashed files
// compare by content and permissions. Ignored paths compare by size and
// mtime, so that an edit to .gitignore alone, which turns a path from
// ignored to tracked or back, does not pass for a change of the file.
// Anything else not hashed (symlinks, files over the cap) has only its
// stamp to go by.
func differ(b, a entry) bool {
	switch {
	case b.mode.Type() != a.mode.Type():
		return true
	case b.hashed && a.hashed:
		return b.sum != a.sum || b.perm() != a.perm()
	case b.ignored != "" || a.ignored != "":
		return b.size != a.size || b.mtime != a.mtime
	}
	return b.stamp != a.stamp
}

// attach finds the content of every image in changes that names a digest:
// what this scan read, else the content cache. An image whose content is
// in neither can no longer be restored, and says so; so does one past the
// command's budget (MaxCallFiles contents, MaxCallBytes bytes), which
// OverBudget tells apart.
func (w *Watcher) attach(changes []state.FileChange, kept map[[sha256.Size]byte][]byte) []state.Blob {
	var blobs []state.Blob
	have := map[string]bool{}
	var total int64
	find := func(img *state.FileImage) {
		if img.Blob == "" || have[img.Blob] {
			return
		}
		switch {
		case len(blobs) >= w.opts.MaxCallFiles:
			*img = state.FileImage{Size: img.Size, Mode: img.Mode, Untracked: callFilesReason(w.opts.MaxCallFiles)}
			return
		case total+img.Size > w.opts.MaxCallBytes:
			*img = state.FileImage{Size: img.Size, Mode: img.Mode, Untracked: callCapReason(w.opts.MaxCallBytes)}
			return
		}
		sum, _ := parseDigest(img.Blob)
		data, ok := kept[sum]
		if !ok {
			data, ok = w.objects.get(sum, img.Size)
		}
		if !ok {
			*img = state.FileImage{Size: img.Size, Mode: img.Mode, Untracked: reasonUncached}
			return
		}
		total += int64(len(data))
		have[img.Blob] = true
		blobs = append(blobs, state.Blob{Digest: img.Blob, Data: data})
	}
	for i := range changes {
		find(&changes[i].Before)
		find(&changes[i].After)
	}
	return blobs
}
