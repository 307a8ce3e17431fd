package snapshot

import (
	"path"
	"path/filepath"
	"strings"

	"retrace/agent/fileid"
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
	// Made are absolute paths where the command's processes created
	// something, Removed those where they removed what was there, Trees
	// those they renamed, under which everything counts as written.
	Made, Removed, Trees []string
	// Opened are absolute paths where they wrote a file already there,
	// with each such file as it was just before their first call on it.
	Opened map[string][]fileid.File
}

// Attribute keeps, of the changes Changes found around a command, those
// its own processes made; the others were made meanwhile by someone else,
// the user saving a file while a build ran, and are not the command's:
// left out of its record, a rollback does not take them back (and finds
// them a conflict if the session knows the path). A directory the command
// renamed covers everything under it, and a change to a path the command
// wrote under (an ignored directory, listed as one) is the command's.
//
// At a path where the command only wrote a file that was there already,
// the change is the command's when that file is still there and has
// changed since the command's first call on it. Another file there now
// was put there by someone else: the user's editor saving by rename. So
// was a file gone that the command did not remove. And a file nothing
// touched after the command first opened it was changed, if at all,
// before: by someone else. What Attribute cannot tell is who changed the
// same file after the command opened it: the sandbox sees opens, not
// each write. The whole change then counts as the command's, and with it
// any edit the user made in place (an editor saving in place, an append)
// while the command ran; a rollback takes that back too.
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
			if ours.has(c) {
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
	made, removed, trees map[string]bool
	opened               map[string][]fileid.File
	// above holds every directory above a path the command wrote.
	above map[string]bool
	dir   string // the workspace, to look at a file it wrote in place
}

func (w *Watcher) writtenSet(by Written) written {
	s := written{made: map[string]bool{}, removed: map[string]bool{}, trees: map[string]bool{},
		opened: map[string][]fileid.File{}, above: map[string]bool{}, dir: w.dir}
	// inside makes abs a workspace path, and notes the directories above
	// it; ok is false when it is not in the workspace.
	inside := func(abs string) (p string, ok bool) {
		rel, err := filepath.Rel(w.dir, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return "", false
		}
		rel = filepath.ToSlash(rel)
		for dir := path.Dir(rel); dir != "." && !s.above[dir]; dir = path.Dir(dir) {
			s.above[dir] = true
		}
		return rel, true
	}
	add := func(set map[string]bool, paths []string) {
		for _, p := range paths {
			if r, ok := inside(p); ok {
				set[r] = true
			}
		}
	}
	add(s.made, by.Made)
	add(s.removed, by.Removed)
	add(s.trees, by.Trees)
	for p, files := range by.Opened {
		if r, ok := inside(p); ok {
			s.opened[r] = append(s.opened[r], files...)
		}
	}
	return s
}

// has reports whether c is the command's: it made c's path, wrote under
// it, or renamed it or a directory above it; it removed the path, which
// is gone; or it wrote the file there now, which changed after it first
// did.
func (s written) has(c state.FileChange) bool {
	p := c.Path
	if s.made[p] || s.above[p] || s.renamed(p) {
		return true
	}
	if c.After.Absent {
		return s.removed[p]
	}
	files := s.opened[p]
	if len(files) == 0 {
		return false
	}
	// Asked now, after the scan: a file someone else puts there in
	// between leaves a change of the command's out, never the reverse.
	now, err := fileid.Lstat(filepath.Join(s.dir, filepath.FromSlash(p)))
	if err != nil {
		return false
	}
	for _, f := range files {
		if f.Same(now) {
			return !f.Unchanged(now)
		}
	}
	return false
}

// renamed reports whether the command renamed p or a directory above it.
func (s written) renamed(p string) bool {
	if s.trees["."] {
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
