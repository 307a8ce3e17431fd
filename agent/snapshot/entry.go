package snapshot

import (
	"crypto/sha256"

	"retrace/state"
)

// entry is what a scan saw at one path.
type entry struct {
	stamp
	// sum is the content's SHA-256 when hashed is set.
	sum    [sha256.Size]byte
	hashed bool
	// recheck tells the next scan to read the file again whatever its
	// stamp says: the stamp was too recent to vouch for sum, or the
	// content did not reach the content cache.
	recheck bool
	// untracked says why the content was not kept, for an entry that was
	// not hashed.
	untracked string
	// ignored marks a path an ignore rule (or being .git) keeps out: it
	// is compared by its size and mtime only, and never read.
	ignored bool
}

// vouched reports whether a later scan, or a later process through the
// index, may take the entry's digest on the word of its stamp.
func (e entry) vouched() bool { return e.hashed && !e.recheck && e.isRegular() }

// image is the entry as a checkpoint records it.
func (e entry) image() state.FileImage {
	if e.hashed {
		return state.FileImage{Blob: formatDigest(e.sum), Size: e.size, Mode: e.perm()}
	}
	return notKept(e.stamp, e.untracked)
}

// notKept is the image of a path whose content is not kept, for reason.
// Size and mode are kept for a file: they tell a person what it was.
func notKept(st stamp, reason string) state.FileImage {
	img := state.FileImage{Untracked: reason}
	switch {
	case st.isRegular():
		img.Size, img.Mode = st.size, st.perm()
	case st.isDir():
		img.Mode = st.perm()
	}
	return img
}
