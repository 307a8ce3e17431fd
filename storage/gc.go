package storage

import (
	"cmp"
	"slices"
	"time"
)

// GC removes what people no longer need, when a person asks: sessions not
// updated for a while, and the branches a session left behind. Each
// backend runs it its own way; these say what to remove and what went.

// GCOptions says what GC removes. At least one of OlderThan and Branches
// must be set.
type GCOptions struct {
	// OlderThan removes every session not updated for at least this long.
	// Zero removes no session by age.
	OlderThan time.Duration
	// Branches removes, in every session it does not remove whole, the
	// versions on no path from the root to the head or to a kept version:
	// the abandoned branches. What stays replays exactly as before.
	Branches bool
	// Keep names versions, by session id, that Branches keeps with all
	// their ancestors: a branch a person wants to come back to.
	Keep map[string][]int
	// DryRun reports what would go and changes nothing.
	DryRun bool
}

// GCReport is what GC removed, or with DryRun would remove.
type GCReport struct {
	DryRun   bool
	Sessions []GoneSession
	Branches []GoneBranch
	// Blobs and BlobBytes count the file contents nothing refers to any
	// more once the rest is gone, which go with it.
	Blobs     int
	BlobBytes int64
	// Skipped are sessions another process holds: left whole, and their
	// contents with them.
	Skipped []Skipped
	// Bytes is what the removed records took: keys and values (rows, on
	// a server), without the store's own overhead.
	Bytes int64
	// FreeBytes, after a real run on a file, is the free space inside
	// it, which later writes reuse and compact gives back to the disk.
	// A database server keeps its own account (0).
	FreeBytes int64
}

// GoneSession is a session GC removes whole.
type GoneSession struct {
	SessionInfo
	Bytes int64
}

// GoneBranch is the part of one branch GC removes: versions First to Tip
// of Branch (the whole branch unless a kept version is on it).
type GoneBranch struct {
	Session  SessionInfo
	Branch   int
	Fork     int // the version the removed part hangs under, which stays
	Versions []int
	Bytes    int64
}

// Skipped is a session GC would have touched, held by another process.
type Skipped struct {
	SessionInfo
	PID int // 0 when the holder wrote none
}

// CompactReport is the store's size before and after Compact.
type CompactReport struct {
	Before, After int64
	// Copy is the size of the compacted copy, where a store compacts
	// into a copy (a file rewritten); 0 where it does not.
	Copy int64
	// Kept says the copy was no smaller than the store, which is kept as
	// it was (After is Before): a compaction never makes a store larger.
	Kept bool
}

// CheckReport is what a whole check (retrace verify) read.
type CheckReport struct {
	Sessions    int   // sessions
	Checkpoints int   // versions, over every session
	Contents    int   // file contents
	Memories    int   // entries of the memory log
	Bytes       int64 // what the store takes: the file, or a database's tables
}

// Abandoned finds a session's versions on no path from the root to its
// head or to a kept version, in tree order, and groups them by the
// branch they were on; size says what each version takes.
func Abandoned(info SessionInfo, tree Tree, keep []int, size func(version int) int64) ([]GoneBranch, []int) {
	kept := map[int]bool{}
	for _, tip := range append([]int{tree.Head}, keep...) {
		for _, v := range tree.Path(tip) {
			kept[v] = true
		}
	}
	var versions []int
	var out []GoneBranch
	byBranch := map[int]int{} // branch -> index in out
	for _, n := range tree.Nodes {
		if kept[n.Version] {
			continue
		}
		versions = append(versions, n.Version)
		i, ok := byBranch[n.Branch]
		if !ok {
			i = len(out)
			byBranch[n.Branch] = i
			out = append(out, GoneBranch{Session: info, Branch: tree.Branches[n.Branch-1].ID, Fork: n.Parent})
		}
		out[i].Versions = append(out[i].Versions, n.Version)
		out[i].Bytes += size(n.Version)
	}
	return out, versions
}

// WithRemoved returns a session's runs of removed versions ([first,
// last], ascending) with the versions vs added, adjacent runs merged. It
// works on the runs, never on each version in them: a run an import
// brought may span far more versions than the session holds.
func WithRemoved(runs [][2]int, vs []int) [][2]int {
	all := slices.Clone(runs)
	for _, v := range vs {
		all = append(all, [2]int{v, v})
	}
	slices.SortFunc(all, func(a, b [2]int) int { return cmp.Compare(a[0], b[0]) })
	var out [][2]int
	for _, span := range all {
		if n := len(out); n > 0 && span[0]-1 <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], span[1])
			continue
		}
		out = append(out, span)
	}
	return out
}

// Gaps is the runs of versions, up to count, that records lack: what gc
// removed before an export was made. It looks at the records alone, so
// a count far past them costs nothing more.
func Gaps(records []Record, count int) [][2]int {
	held := make([]int, 0, len(records))
	for _, r := range records {
		if r.Version >= 1 && r.Version <= count {
			held = append(held, r.Version)
		}
	}
	slices.Sort(held)
	var out [][2]int
	next := 1 // the first version not yet accounted for
	for _, v := range held {
		if v > next {
			out = append(out, [2]int{next, v - 1})
		}
		next = max(next, v+1)
	}
	if next <= count {
		out = append(out, [2]int{next, count})
	}
	return out
}
