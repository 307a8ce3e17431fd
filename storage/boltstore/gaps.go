package boltstore

import (
	"fmt"

	"retrace/storage"
)

// Versions gc removed leave gaps. A session's versions stay numbered as
// they were made, and a removed number is never given again (the next
// version is still Versions+1): people and records name versions by number
// (a restore names the version it came from), and renumbering would make
// every such name point at something else without a word. The info record
// lists the removed runs, so a version that is not there can be told from
// one that was lost to damage: the first is a VersionError with Removed,
// the second a CorruptError.

// removed reports whether gc removed version v.
func (r infoRecord) removed(v int) bool {
	for _, span := range r.Removed {
		if v >= span[0] && v <= span[1] {
			return true
		}
	}
	return false
}

// removedCount is how many versions gc removed.
func (r infoRecord) removedCount() int {
	n := 0
	for _, span := range r.Removed {
		n += span[1] - span[0] + 1
	}
	return n
}

// missing says why the session has no version v (0 being the empty
// session), or returns nil when it has.
func (r infoRecord) missing(id string, v int) error {
	if v < 0 || v > r.Versions || r.removed(v) {
		return &storage.VersionError{Session: id, Version: v, Versions: r.Versions, Removed: r.removed(v)}
	}
	return nil
}

// checkRemoved refuses a list of runs that cannot have been written: out
// of range, out of order, overlapping, or taking the head.
func (r infoRecord) checkRemoved() error {
	last := 0
	for _, span := range r.Removed {
		if span[0] <= last || span[1] < span[0] || span[1] > r.Versions {
			return fmt.Errorf("removed versions %v are not ascending runs within 1 to %d", r.Removed, r.Versions)
		}
		last = span[1]
	}
	if r.Head > 0 && r.removed(r.Head) {
		return fmt.Errorf("head v%d is among the removed versions", r.Head)
	}
	return nil
}
