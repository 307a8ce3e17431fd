package snapshot

import (
	"path"
	"path/filepath"
	"strings"

	"retrace/state"
)

// Written is what a command's own processes were seen to change, as the
// sandbox reports it: what tells the command's changes from the user's,
// made while it ran.
type Written struct {
	// Watched says every call of the command's that could change a file
	// was seen; when it is false, Why says why not.
	Watched bool
	Why     string
	// Paths are absolute paths the command's processes wrote, created,
	// removed or changed the mode of; Trees are paths they renamed,
	// under which everything counts as written.
	Paths, Trees []string
}

// Attribute keeps, of the changes Changes found around a command, those
// its own processes made; the others were made meanwhile by someone else,
// the user saving a file while a build ran, and are not the command's:
// left out of its record, a rollback does not take them back (and finds
// them a conflict if the session knows the path). A directory the command
// renamed covers everything under it, and a change to a path the command
// wrote under (an ignored directory, listed as one) is the command's.
//
// When nobody could watch the command, nothing tells the two apart, and
// the side a doubt falls on is the user's: each change that leaves a file
// behind keeps what was there before, but what is there after is recorded
// as not kept, without a stamp, so that a rollback over it is a conflict
// and never silently takes back what may be the user's own edit.
// The blobs returned are those the changes kept still name.
func (w *Watcher) Attribute(changes []state.FileChange, blobs []state.Blob, by Written) ([]state.FileChange, []state.Blob) {
	var out []state.FileChange
	if by.Watched {
		ours := w.writtenSet(by)
		for _, c := range changes {
			if ours.has(c.Path) {
				out = append(out, c)
			}
		}
	} else {
		reason := unwatchedReason(by.Why)
		for _, c := range changes {
			if !c.After.Absent {
				c.After = state.FileImage{Size: c.After.Size, Mode: c.After.Mode, Untracked: reason}
			}
			out = append(out, c)
		}
	}
	return out, named(out, blobs)
}

// unwatchedReason is why the after image of a change made while an
// unwatched command ran is not kept.
func unwatchedReason(why string) string {
	return "changed while a command ran whose writes retrace could not see (" + why +
		"), so it may be your own edit; a rollback over it asks first"
}

// written is a command's writes as workspace paths.
type written struct {
	paths, trees map[string]bool
	// above holds every directory above a written or renamed path.
	above map[string]bool
}

func (w *Watcher) writtenSet(by Written) written {
	s := written{paths: map[string]bool{}, trees: map[string]bool{}, above: map[string]bool{}}
	add := func(set map[string]bool, abs string) {
		rel, err := filepath.Rel(w.dir, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return
		}
		rel = filepath.ToSlash(rel)
		set[rel] = true
		for dir := path.Dir(rel); dir != "." && !s.above[dir]; dir = path.Dir(dir) {
			s.above[dir] = true
		}
	}
	for _, p := range by.Paths {
		add(s.paths, p)
	}
	for _, p := range by.Trees {
		add(s.trees, p)
	}
	return s
}

// has reports whether the command wrote p, under p, or renamed p or a
// directory above it.
func (s written) has(p string) bool {
	if s.paths[p] || s.above[p] || s.trees["."] {
		return true
	}
	for q := p; q != "."; q = path.Dir(q) {
		if s.trees[q] {
			return true
		}
	}
	return false
}

// named keeps the blobs whose digests the changes name.
func named(changes []state.FileChange, blobs []state.Blob) []state.Blob {
	want := map[string]bool{}
	for _, c := range changes {
		want[c.Before.Blob], want[c.After.Blob] = true, true
	}
	var out []state.Blob
	for _, b := range blobs {
		if want[b.Digest] {
			out = append(out, b)
		}
	}
	return out
}
