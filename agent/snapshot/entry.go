package snapshot

import (
	"crypto/sha256"
	"slices"

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
	// not hashed nor ignored.
	untracked string
	// ignored says why an ignore rule (or being .git, or a directory that
	// could not be listed) keeps the path out: it is never read, and is
	// compared by its size and mtime only.
	ignored string
}

// vouched reports whether a later scan, or a later process through the
// index, may take the entry's digest on the word of its stamp.
func (e entry) vouched() bool { return e.hashed && !e.recheck && e.isRegular() }

// image is the entry as a checkpoint records it.
func (e entry) image() state.FileImage {
	switch {
	case e.hashed:
		return state.FileImage{Blob: formatDigest(e.sum), Size: e.size, Mode: e.perm()}
	case e.ignored != "" && e.isDir():
		return notKept(e.stamp, notCompared(e.ignored))
	case e.ignored != "":
		return notKept(e.stamp, e.ignored)
	}
	return notKept(e.stamp, e.untracked)
}

// notKept is the image of a path whose content is not kept, for reason.
// Size and mode are kept for a file: they tell a person what it was. The
// stamp is kept for anything: a restore compares it with the path's stamp
// then to tell whether anyone changed the path since.
func notKept(st stamp, reason string) state.FileImage {
	img := state.FileImage{Untracked: reason, Stamp: st.String()}
	switch {
	case st.isRegular():
		img.Size, img.Mode = st.size, st.perm()
	case st.isDir():
		img.Mode = st.perm()
	}
	return img
}

// listing is what a scan saw in one directory: its entries, bar the
// subdirectories it went into, sorted by name. Listings are never changed
// once made: a Mark and the stat cache share them, and a scan that finds a
// directory as it was keeps the old listing, so Changes passes over it at
// a glance.
type listing struct {
	names   []string
	entries []entry
	rules   string // the key of the ignore rules it was made under
}

// selfName is the one name in the listing of a directory that could not
// be listed: the entry is the directory's own.
const selfName = ""

func (l *listing) add(name string, e entry) {
	l.names = append(l.names, name)
	l.entries = append(l.entries, e)
}

// same reports whether two listings hold the same entries.
func (l *listing) same(m *listing) bool {
	return l.rules == m.rules && slices.Equal(l.names, m.names) && slices.Equal(l.entries, m.entries)
}

// cursor finds names in a listing in ascending order, as a scan meets
// them in the next listing of the same directory.
type cursor struct {
	l *listing
	i int
}

func (c *cursor) find(name string) (entry, bool) {
	if c.l == nil {
		return entry{}, false
	}
	for c.i < len(c.l.names) && c.l.names[c.i] < name {
		c.i++
	}
	if c.i < len(c.l.names) && c.l.names[c.i] == name {
		return c.l.entries[c.i], true
	}
	return entry{}, false
}

// join makes the workspace path of name in dir ("." for the root).
func join(dir, name string) string {
	switch {
	case dir == ".":
		return name
	case name == selfName:
		return dir
	}
	return dir + "/" + name
}
