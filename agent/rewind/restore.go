package rewind

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"retrace/agent/snapshot"
	"retrace/state"
	"retrace/storage"
)

// Files is the workspace as a restore reads and writes it.
// snapshot.Watcher is one.
type Files interface {
	// Image is what path holds now, with its content when it is kept.
	Image(path string) (state.FileImage, []byte, error)
	// PutIf makes path hold img (data is its content), atomically: a
	// reader sees the old file or the new one, never a mix. An absent
	// img removes the file. Just before the file is replaced it looks
	// at it once more, and when ok (if not nil) refuses what it finds,
	// it replaces nothing and its error wraps
	// snapshot.ErrChangedMeanwhile.
	PutIf(path string, img state.FileImage, data []byte, ok func(now state.FileImage) bool) error
	// Sweep removes what a Put of path killed halfway left beside it.
	Sweep(path string) error
}

// Store is what a restore needs of the session store.
type Store interface {
	storage.Appender
	storage.Forker
	At(ctx context.Context, id string, version int) (state.State, error)
	SetHead(ctx context.Context, id string, version int) error
	Blob(ctx context.Context, digest string) ([]byte, error)
}

// Options says how a restore treats the workspace.
type Options struct {
	// Force overwrites files changed outside retrace instead of refusing.
	Force bool
	// KeepFiles moves only the head and leaves every file as it is.
	KeepFiles bool
	// Hook, when set, is called at each named point of a restore, so a
	// test can stop the process there: PointStarted once restore_started
	// is durable and before the first file, PointFile after each file
	// written (done counts them), PointClosing before files_restored.
	Hook func(p Point, done int)
}

// Point names a moment in a restore.
type Point string

// The points a restore passes, in order.
const (
	PointStarted Point = "started"
	PointFile    Point = "file"
	PointClosing Point = "closing"
)

// ErrChanged is what a restore refused for: workspace files changed
// outside retrace since the session last recorded them.
var ErrChanged = errors.New("workspace files changed outside retrace")

// ConflictError lists the files a restore would overwrite although they
// hold something the session never recorded. Nothing was changed.
type ConflictError struct {
	Version   int
	Conflicts []Conflict
}

// Conflict is one file changed outside retrace.
type Conflict struct {
	Path     string
	Recorded state.FileImage // what the session last recorded there
	Found    state.FileImage // what the file holds now
}

func (e *ConflictError) Error() string {
	paths := make([]string, len(e.Conflicts))
	for i, c := range e.Conflicts {
		paths[i] = c.Path
	}
	return fmt.Sprintf("%s since the session last recorded %s: %s; nothing was restored",
		ErrChanged, plural(len(paths), "it", "them"), strings.Join(paths, ", "))
}

// Unwrap lets errors.Is match ErrChanged.
func (e *ConflictError) Unwrap() error { return ErrChanged }

// Result is what a restore did.
type Result struct {
	// Head is the session's state once the restore is over.
	Head state.State
	// Text is what the files_restored event says the restore did; empty
	// when only the head moved.
	Text string
	// Restored counts files written or removed; Already those that held
	// the target's content before the restore reached them.
	Restored, Already int
	// NotRestorable are target images whose content was never kept;
	// Left are files found changed outside retrace and left as they
	// were: changed while the restore ran, or before an interrupted one
	// was finished. A restore that left any is partial.
	NotRestorable, Left []state.FileChange
	// Failed are files that could not be written back, and why.
	Failed []Failure
}

// Failure is a file a restore could not put back.
type Failure struct {
	state.FileChange
	Err error
}

// notDone lists the changes the restore did not make, for the record.
func (r Result) notDone() []state.FileChange {
	out := append(append([]state.FileChange(nil), r.NotRestorable...), r.Left...)
	for _, f := range r.Failed {
		out = append(out, f.FileChange)
	}
	return out
}

// inOrder is the order a restore takes its changes in: removals first,
// deepest paths first, so that a directory a command made where a file
// was is emptied before the file comes back; then everything else, in
// path order, so parents come before children.
func inOrder(cs []state.FileChange) []state.FileChange {
	out := make([]state.FileChange, 0, len(cs))
	for i := len(cs) - 1; i >= 0; i-- {
		if cs[i].After.Absent {
			out = append(out, cs[i])
		}
	}
	for _, c := range cs {
		if !c.After.Absent {
			out = append(out, c)
		}
	}
	return out
}

// survey reads what each path of cs holds now, once, for the conflict
// check and the writes after it. A path that cannot be read fails the
// survey when strict; otherwise it is left out, and the restore reads it
// again when it comes to it (and lists it if it still cannot).
func survey(files Files, cs []state.FileChange, strict bool) (map[string]state.FileImage, error) {
	found := make(map[string]state.FileImage, len(cs))
	for _, c := range cs {
		img, _, err := files.Image(c.Path)
		if err != nil {
			if strict {
				return nil, fmt.Errorf("check %s: %w", c.Path, err)
			}
			continue
		}
		found[c.Path] = img
	}
	return found, nil
}

// conflicts compares each file a plan would write, as found, with what
// the session recorded for it. A file holding either the recorded image
// or already the target's is fine; anything else was changed outside
// retrace, or may have been: see unchanged.
func conflicts(plan []state.FileChange, found map[string]state.FileImage) []Conflict {
	var out []Conflict
	for _, c := range plan {
		f := found[c.Path]
		if !unchanged(c.Before, f) && !f.Same(c.After) {
			out = append(out, Conflict{Path: c.Path, Recorded: c.Before, Found: f})
		}
	}
	return out
}

// unchanged reports whether a path found holding found still holds what
// the session recorded there. A kept image compares by content and mode.
// One whose content was not kept (a file over the size cap, a symlink, an
// ignored path) compares by its stamp: type, size, times and inode, which
// any rewrite moves. Without a stamp on both sides (a record from before
// stamps, a change past the per-command cap, a session from another
// machine) nothing can vouch for the path, and any doubt is a change:
// overwriting what the user may have written is the one thing a restore
// must never do unasked.
func unchanged(recorded, found state.FileImage) bool {
	if recorded.Tracked() {
		return found.Same(recorded)
	}
	return recorded.Stamp != "" && !found.Tracked() && found.Stamp == recorded.Stamp
}

// Restore moves session id's head from head to version and brings the
// workspace files with it. Files changed outside retrace make it a
// *ConflictError, with nothing changed, unless opts.Force. When there is
// nothing to put back (or opts.KeepFiles), only the head moves; otherwise
// the restore is recorded on the target version as restore_started and
// files_restored, so the head ends two versions past the target, on a
// branch of its own.
func Restore(ctx context.Context, st Store, files Files, head state.State, version int, opts Options) (Result, error) {
	target, err := st.At(ctx, head.SessionID, version)
	if err != nil {
		return Result{}, err
	}
	return RestoreMove(ctx, st, files, NewMove(head, target), opts)
}

// A Move is a restore's two ends, the head and the state at the version
// to go back to, and the plan between them. It is made once: a caller
// that loaded the target and looked at the plan (a rollback opens the
// workspace only when there are files to put back) hands it on, and the
// restore neither loads the target nor compares the manifests again,
// which in a session whose command made a hundred thousand files are
// what a rollback costs.
type Move struct {
	Head, Target state.State
	Plan         []state.FileChange
}

// NewMove plans the move from head to target.
func NewMove(head, target state.State) Move {
	return Move{Head: head, Target: target, Plan: Plan(head, target)}
}

// RestoreMove is Restore along a move already planned.
//
// A target recorded before the session arrived here (by an import or a
// copy) is someone else's version, which holds what they allowed and
// left open there: the tools allowed for the session, an approval, a
// restore half done. Going back to it closes it the way the arrival
// closed their head, in the checkpoint that moves the head there (see
// closing), so that none of it comes back with the rollback.
func RestoreMove(ctx context.Context, st Store, files Files, m Move, opts Options) (Result, error) {
	head, target, plan := m.Head, m.Target, m.Plan
	id, version := head.SessionID, target.Version
	foreign := target.Arrival != head.Arrival
	if opts.KeepFiles || len(plan) == 0 {
		if foreign {
			closed, err := storage.NewCursor(st, target).Fork(ctx, st, closing(head, target, nil))
			if err != nil {
				return Result{}, fmt.Errorf("record the rollback: %w", err)
			}
			return Result{Head: closed}, nil
		}
		if err := st.SetHead(ctx, id, version); err != nil {
			return Result{}, err
		}
		return Result{Head: target}, nil
	}
	writable, _ := outsideGit(plan)
	can, _ := Restorable(writable)
	found, err := survey(files, can, !opts.Force)
	if err != nil {
		return Result{}, err
	}
	if c := conflicts(can, found); len(c) > 0 && !opts.Force {
		return Result{}, &ConflictError{Version: version, Conflicts: c}
	}
	// The head moves to the target and the restore is recorded there in
	// one step: a process stopped in between must not leave the head at
	// the target with the files still at the version it left.
	cur := storage.NewCursor(st, target)
	start := state.Event{Kind: state.RestoreStarted, From: head.Version, Files: plan}
	if foreign {
		start = closing(head, target, plan)
	}
	started, err := cur.Fork(ctx, st, start)
	if err != nil {
		return Result{}, fmt.Errorf("record the restore: %w", err)
	}
	return finish(ctx, st, files, cur, started.Restoring, found, opts, "")
}

// closing is the imported event a rollback from head to a target
// recorded elsewhere forks from the target: it keeps the head's arrival,
// names the version it left (an arrival names none), closes what the
// target was doing, and, with plan, opens the restore of its files in
// the same checkpoint.
func closing(head, target state.State, plan []state.FileChange) state.Event {
	return state.Event{Kind: state.Imported, Arrival: head.Arrival, From: head.Version, Files: plan,
		Text: fmt.Sprintf("back to v%d, recorded before the session arrived here", target.Version)}
}

// Finish completes a restore a stopped process left open: head says one
// is (head.Restoring). Each file still holding what the session recorded
// before the restore gets the target's content; a file holding something
// else is left as it was and listed. It does nothing when no restore is
// open.
func Finish(ctx context.Context, st Store, files Files, head state.State) (Result, error) {
	if head.Restoring == nil {
		return Result{Head: head}, nil
	}
	for _, c := range head.Restoring.Files {
		// A temporary file is all a killed Put leaves; it is not worth
		// failing the restore for, so an error here is not one.
		_ = files.Sweep(c.Path)
	}
	return finish(ctx, st, files, storage.NewCursor(st, head), head.Restoring, nil, Options{}, "interrupted, then finished: ")
}

// finish writes a restore's files and records its end. found is what a
// survey just read, by path; a path it lacks is read here.
func finish(ctx context.Context, st Store, files Files, cur *storage.Cursor, r *state.Restore, found map[string]state.FileImage, opts Options, lead string) (Result, error) {
	hook := opts.Hook
	if hook == nil {
		hook = func(Point, int) {}
	}
	hook(PointStarted, 0)
	writable, refused := outsideGit(r.Files)
	can, cannot := Restorable(writable)
	res := Result{NotRestorable: cannot}
	for _, c := range refused {
		res.Failed = append(res.Failed, Failure{c, snapshot.ErrGitPath})
	}
	for _, c := range inOrder(can) {
		now, ok := found[c.Path]
		if !ok {
			var err error
			if now, _, err = files.Image(c.Path); err != nil {
				res.Failed = append(res.Failed, Failure{c, err})
				continue
			}
		}
		switch {
		case now.Same(c.After):
			res.Already++
			continue
		case !opts.Force && !unchanged(c.Before, now):
			res.Left = append(res.Left, c)
			continue
		}
		data, err := content(ctx, st, c.After)
		if err != nil {
			res.Failed = append(res.Failed, Failure{c, err})
			continue
		}
		err = files.PutIf(c.Path, c.After, data, stillOurs(c, opts.Force))
		if errors.Is(err, snapshot.ErrChangedMeanwhile) {
			// Saved by the user since the check: theirs now.
			res.Left = append(res.Left, c)
			continue
		}
		if err != nil {
			// One file that cannot be written (a directory in its way, a
			// disk full) must not leave the restore open for ever: it is
			// listed, and the rest goes on.
			res.Failed = append(res.Failed, Failure{c, err})
			continue
		}
		res.Restored++
		hook(PointFile, res.Restored)
	}
	hook(PointClosing, res.Restored)
	res.Text = lead + res.summary(cur.State().ParentVersion, r.From)
	closed, err := cur.Commit(ctx, state.Event{Kind: state.FilesRestored,
		Text: res.Text, Files: res.notDone()})
	if err != nil {
		return res, fmt.Errorf("record the end of the restore: %w", err)
	}
	res.Head = closed
	return res, nil
}

// stillOurs is what a restore asks of a file just before replacing it:
// that it still holds what the session recorded, or the target already.
// A forced restore overwrites whatever it finds.
func stillOurs(c state.FileChange, force bool) func(now state.FileImage) bool {
	if force {
		return nil
	}
	return func(now state.FileImage) bool { return unchanged(c.Before, now) || now.Same(c.After) }
}

// summary says in one line what a restore did, for the files_restored
// event and the person reading it.
func (r Result) summary(to, from int) string {
	parts := []string{fmt.Sprintf("restored %s to v%d (the workspace was at v%d)", count(r.Restored, "file"), to, from)}
	if r.Already > 0 {
		parts = append(parts, fmt.Sprintf("%s already right", count(r.Already, "file")))
	}
	if n := len(r.NotRestorable); n > 0 {
		parts = append(parts, fmt.Sprintf("%s not restorable (content not kept): %s", count(n, "file"), pathList(r.NotRestorable)))
	}
	if n := len(r.Left); n > 0 {
		parts = append(parts, fmt.Sprintf("%s left as %s, changed outside retrace: %s", count(n, "file"), plural(n, "it was", "they were"), pathList(r.Left)))
	}
	for _, f := range r.Failed {
		parts = append(parts, fmt.Sprintf("could not restore %s: %v", f.Path, f.Err))
	}
	if len(r.Left) > 0 || len(r.Failed) > 0 {
		parts = append(parts, "the restore is partial")
	}
	return strings.Join(parts, "; ")
}

func pathList(cs []state.FileChange) string {
	ps := make([]string, len(cs))
	for i, c := range cs {
		ps[i] = c.Path
	}
	return strings.Join(ps, ", ")
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
