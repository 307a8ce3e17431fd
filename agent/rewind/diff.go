package rewind

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"

	"retrace/state"
)

// BlobReader reads file contents the store keeps by digest.
type BlobReader interface {
	Blob(ctx context.Context, digest string) ([]byte, error)
}

// FileDiff is one path's difference between two images, for people to
// read.
type FileDiff struct {
	state.FileChange
	Kind           Kind
	Added, Removed int  // lines
	Binary         bool // contents that are not text: no line diff
	// Unified is the unified diff of the two contents (---/+++/@@ with
	// three lines of context); empty when either side is binary or its
	// content was not kept.
	Unified string
}

// Kind is what happened to a path.
type Kind string

// The kinds of change.
const (
	Created    Kind = "created"
	Changed    Kind = "changed"
	Deleted    Kind = "deleted"
	NotTracked Kind = "not tracked"
)

// KindOf says what a change did to its path.
func KindOf(c state.FileChange) Kind {
	switch {
	case !c.Before.Tracked() || !c.After.Tracked():
		return NotTracked
	case c.Before.Absent:
		return Created
	case c.After.Absent:
		return Deleted
	}
	return Changed
}

// Manifest lists what the session did to the workspace on the way to s:
// each path it touched, from what it held before the session first
// touched it to what it holds at s, leaving out paths that came back to
// where they started. Paths are sorted.
func Manifest(s state.State) []state.FileChange {
	var out []state.FileChange
	for p, e := range s.Files {
		if !e.Was.Same(e.Now) {
			out = append(out, state.FileChange{Path: p, Before: e.Was, After: e.Now})
		}
	}
	slices.SortFunc(out, func(a, b state.FileChange) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// Between is the workspace's difference from version a to version b of
// one session, path by path.
func Between(ctx context.Context, blobs BlobReader, a, b state.State) ([]FileDiff, error) {
	return DiffAll(ctx, blobs, Plan(a, b))
}

// DiffAll reads both sides of each change and diffs them. The contents are
// read ahead in batches where the store can (see Prefetch): a command that
// changed ten thousand files costs a few reads, not twenty thousand.
func DiffAll(ctx context.Context, blobs BlobReader, changes []state.FileChange) ([]FileDiff, error) {
	blobs = Prefetch(blobs, changes)
	out := make([]FileDiff, 0, len(changes))
	for _, c := range changes {
		d, err := Diff(ctx, blobs, c)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// Diff reads both sides of one change and diffs them by line.
func Diff(ctx context.Context, blobs BlobReader, c state.FileChange) (FileDiff, error) {
	d := FileDiff{FileChange: c, Kind: KindOf(c)}
	if d.Kind == NotTracked {
		return d, nil
	}
	before, err := content(ctx, blobs, c.Before)
	if err != nil {
		return d, fmt.Errorf("%s before: %w", c.Path, err)
	}
	after, err := content(ctx, blobs, c.After)
	if err != nil {
		return d, fmt.Errorf("%s after: %w", c.Path, err)
	}
	if binary(before) || binary(after) {
		d.Binary = true
		return d, nil
	}
	from, to := "a/"+c.Path, "b/"+c.Path
	if c.Before.Absent {
		from = "/dev/null"
	}
	if c.After.Absent {
		to = "/dev/null"
	}
	edits := udiff.Lines(string(before), string(after))
	u, err := udiff.ToUnifiedDiff(from, to, string(before), edits, 3)
	if err != nil {
		return d, fmt.Errorf("diff %s: %w", c.Path, err)
	}
	for _, h := range u.Hunks {
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Insert:
				d.Added++
			case udiff.Delete:
				d.Removed++
			}
		}
	}
	d.Unified = u.String()
	return d, nil
}

func content(ctx context.Context, blobs BlobReader, img state.FileImage) ([]byte, error) {
	if img.Absent {
		return nil, nil
	}
	return blobs.Blob(ctx, img.Blob)
}

// binary reports content a line diff would not help with: a NUL byte
// early on, as git decides, or bytes that are not UTF-8.
func binary(b []byte) bool {
	head := b[:min(len(b), 8000)]
	return bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(b)
}

// Stat is the one-line form of a change: "created notes.md (+12)",
// "changed main.go (+3 −1)", "deleted old.txt (−40)", "changed logo.png
// (binary)", "not tracked build/out.bin (larger than the 10 MiB cap)".
func (d FileDiff) Stat() string {
	switch {
	case d.Kind == NotTracked:
		why := d.After.Untracked
		if why == "" {
			why = d.Before.Untracked
		}
		return fmt.Sprintf("%s %s (%s)", d.Kind, d.Path, why)
	case d.Binary:
		return fmt.Sprintf("%s %s (binary)", d.Kind, d.Path)
	case d.Kind == Changed && d.Added == 0 && d.Removed == 0:
		return fmt.Sprintf("%s %s (mode only)", d.Kind, d.Path)
	}
	var n []string
	if d.Added > 0 || d.Kind == Created {
		n = append(n, fmt.Sprintf("+%d", d.Added))
	}
	if d.Removed > 0 || d.Kind == Deleted {
		n = append(n, fmt.Sprintf("−%d", d.Removed))
	}
	return fmt.Sprintf("%s %s (%s)", d.Kind, d.Path, strings.Join(n, " "))
}
