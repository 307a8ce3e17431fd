package rewind

import (
	"slices"
	"strings"

	"retrace/agent/snapshot"
	"retrace/state"
)

// Plan is what moving the workspace from the head's version to the
// target's takes: for each path whose content differs between the two,
// Before is what the workspace holds now (as the head recorded it) and
// After what it must hold at the target. Paths are sorted.
//
// A path the head touched but the target never did goes back to what it
// held before the session first touched it; a path only the target
// touched is expected, now, to hold that same first content. The plan
// comes from the two manifests alone: it reads no file.
func Plan(head, target state.State) []state.FileChange {
	var out []state.FileChange
	add := func(p string, now, want state.FileImage) {
		if !now.Same(want) {
			out = append(out, state.FileChange{Path: p, Before: now, After: want})
		}
	}
	// One pass over the head's manifest, with no set of their union: a
	// session whose command made a hundred thousand files pays a lookup
	// per path, not three and a map of them all. The target's needs a
	// pass of its own only when it holds a path the head does not: a
	// rollback to a version before the head usually holds none.
	both := 0
	for p, h := range head.Files {
		want := h.Was
		if t, ok := target.Files[p]; ok {
			want = t.Now
			both++
		}
		add(p, h.Now, want)
	}
	if both == len(target.Files) {
		return sorted(out)
	}
	for p, t := range target.Files {
		if _, ok := head.Files[p]; !ok {
			add(p, t.Was, t.Now)
		}
	}
	return sorted(out)
}

func sorted(out []state.FileChange) []state.FileChange {
	slices.SortFunc(out, func(a, b state.FileChange) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// Restorable splits a plan into the changes a restore can make and those
// it cannot: a target image whose content was never kept (a file over the
// size cap, an ignored path) cannot be written back.
func Restorable(plan []state.FileChange) (can, cannot []state.FileChange) {
	for _, c := range plan {
		if c.After.Tracked() {
			can = append(can, c)
		} else {
			cannot = append(cannot, c)
		}
	}
	return can, cannot
}

// outsideGit splits a plan into the changes outside any .git directory and
// those inside one, which a restore refuses whatever their images say: a
// session can come from elsewhere (an import, a copied database), and a
// hook it planted in .git would run unconfined at the user's next commit.
func outsideGit(plan []state.FileChange) (ok, refused []state.FileChange) {
	for _, c := range plan {
		if snapshot.InGitDir(c.Path) {
			refused = append(refused, c)
		} else {
			ok = append(ok, c)
		}
	}
	return ok, refused
}
