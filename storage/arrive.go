package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"retrace/state"
)

// Arrival is how a session from elsewhere comes into a store: an export
// imported, or a session copied from another database.
type Arrival struct {
	// At is when it arrives: the time of its imported checkpoint.
	At time.Time
	// From says where it came from ("imported from review.json"), for
	// the timeline to show.
	From string
	// Workspace is the directory its files belong in on this machine;
	// empty keeps the one it recorded.
	Workspace string
}

// Arrive returns ex ready to be kept as a session that arrives from
// elsewhere. A session someone else recorded is something to look at:
// whatever it was doing there (a restore half done, an approval given,
// a call started, a task under way) must not go on here by itself. So an
// imported checkpoint is added on its head, which closes all of that
// (see state.Imported), and it becomes the head; the import keeps it in
// the same transaction as the rest.
//
// The workspace, recorded or a.Workspace, must be a directory of this
// machine: a rollback writes the session's files there. One that is not
// is an error wrapping ErrWorkspace, and ex is not changed.
func Arrive(ex Export, a Arrival) (Export, error) {
	dir := ex.Session.Workspace
	if a.Workspace != "" {
		dir = a.Workspace
	}
	if err := CheckWorkspace(dir); err != nil {
		return ex, err
	}
	rec, err := arrivalRecord(ex, a)
	if err != nil {
		return ex, err
	}
	ex.Session.Workspace = dir
	ex.Session.Head, ex.Session.Versions, ex.Session.Phase = rec.Version, rec.Version, rec.Phase
	if rec.At.After(ex.Session.UpdatedAt) {
		ex.Session.UpdatedAt = rec.At
	}
	// Clipped, so the caller's slice is never written past its end.
	ex.Checkpoints = append(slices.Clip(ex.Checkpoints), rec)
	return ex, nil
}

// arrivalRecord is the imported checkpoint that closes the session ex
// holds at its head: only the head's phase decides where it leads. An
// export whose head says another phase than its checkpoints do is refused
// by CheckImport all the same.
//
// Its arrival number is one past every version and every arrival the
// export holds, so that no version the sender recorded can hold it: a
// rollback to one of theirs is then known for what it is (see
// state.State.Arrival).
func arrivalRecord(ex Export, a Arrival) (Record, error) {
	info := ex.Session
	arrival := info.Versions
	for _, c := range ex.Checkpoints {
		arrival = max(arrival, c.Data.Arrival)
	}
	if arrival >= maxArrival {
		return Record{}, invalidf("the session numbers an arrival or a version past %d", maxArrival-1)
	}
	phase, err := state.Next(info.Phase, state.Imported)
	if err != nil {
		return Record{}, invalidf("the session's head is in phase %s: %v", info.Phase, err)
	}
	at := a.At.UTC()
	if at.IsZero() {
		at = time.Now().UTC()
	}
	v := info.Versions + 1
	ev := state.Event{Kind: state.Imported, At: at, Text: a.From, Arrival: arrival + 1}
	return Record{Checkpoint: Checkpoint{Version: v, Parent: info.Head, Event: ev.Kind, Phase: phase, At: at}, Data: ev}, nil
}

// maxArrival bounds the numbers an arrival is given: far past any count
// of versions, and far from overflowing when one is added.
const maxArrival = 1 << 53

// CheckWorkspace refuses a workspace a session from elsewhere cannot
// have here: none, a relative path (it would be wherever retrace is
// started), or one that is not a directory of this machine.
func CheckWorkspace(dir string) error {
	reason := ""
	switch {
	case dir == "":
		return fmt.Errorf("the session records no workspace: %w", ErrWorkspace)
	case !filepath.IsAbs(dir):
		reason = "is a relative path"
	case filepath.Clean(dir) != dir:
		reason = "is not a clean path"
	default:
		if fi, err := os.Stat(dir); err != nil {
			reason = "is not there"
		} else if !fi.IsDir() {
			reason = "is not a directory"
		} else if real, err := filepath.EvalSymlinks(dir); err != nil || state.InGitDir(filepath.ToSlash(real)) {
			reason = "is inside a .git directory, where git keeps the hooks it runs"
		}
	}
	if reason != "" {
		return fmt.Errorf("the session's workspace %q %s: %w", dir, reason, ErrWorkspace)
	}
	return nil
}
