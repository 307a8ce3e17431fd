package storage

import (
	"bytes"
	"fmt"
	"time"

	"retrace/state"
)

// ExportFormat names the JSON export's layout, so a reader can tell which
// retrace wrote it.
const ExportFormat = "retrace-export/1"

// MaxImportSize bounds the export file an import reads. ReadExport holds
// none of its file contents in memory, but every content in it was at
// most a few MiB when it was kept: a larger file is not an export retrace
// wrote.
const MaxImportSize = 1 << 30

// Exported is the JSON export as written: its format, then everything
// Export returns.
type Exported struct {
	Format string `json:"format"`
	Export
}

// DecodeExport reads an export file as `retrace export --format json`
// writes it, held in memory: ReadExport's checks, with the contents in
// Blobs. Anything but one such document (another format, unknown fields,
// trailing data, more than MaxImportSize bytes) is an error wrapping
// ErrInvalid that says what is wrong. It checks the form only;
// CheckImport checks the content.
func DecodeExport(data []byte) (Export, error) {
	if len(data) > MaxImportSize {
		return Export{}, fmt.Errorf("the file is %d bytes; an export is at most %d: %w", len(data), MaxImportSize, ErrInvalid)
	}
	ex, err := ReadExport(bytes.NewReader(data), "")
	if err != nil {
		return Export{}, err
	}
	defer ex.Spool.Close()
	for _, d := range ex.Spool.Digests() {
		// A content that does not match its digest is CheckImport's to
		// refuse, naming it.
		data, err := ex.Spool.readUnchecked(d)
		if err != nil {
			return Export{}, err
		}
		if ex.Blobs == nil {
			ex.Blobs = map[string][]byte{}
		}
		ex.Blobs[d] = data
	}
	ex.Spool = nil
	return ex, nil
}

// CheckImport checks an export whole before a store keeps any of it, and
// returns its checkpoints as a store keeps them: each event canonical,
// carrying in Data.Blobs the file contents first referred to there, so a
// store keeps each content with the first checkpoint that needs it.
//
// Versions must rise from 1 (with the gaps gc leaves), each parent an
// older version the export holds;
// every event must replay through the state machine from its parent's
// state to the phase its checkpoint names; the session's count, head and
// phase must agree with its checkpoints; and every file content must hash
// to its digest, be referred to, and be there when referred to. What
// breaks a rule is an error wrapping ErrInvalid that names the version or
// the content.
func CheckImport(ex Export) ([]Record, error) {
	// After `retrace gc --branches` a session's versions have gaps: its
	// count is the highest number it gave, and fewer checkpoints remain.
	n := ex.Session.Versions
	if len(ex.Checkpoints) > n {
		return nil, invalidf("the session says it has %d versions, but the export holds %d checkpoints", n, len(ex.Checkpoints))
	}

	digests := ex.contentDigests()
	for _, d := range digests {
		if err := ex.checkContent(d); err != nil {
			return nil, invalidf("file content %s: %v", d, err)
		}
	}
	// A version whose state a later child needs, other than the child
	// right after it, keeps a snapshot of its state: a session is mostly
	// one line, replayed by one Builder.
	prev := 0
	for i, r := range ex.Checkpoints {
		if r.Version <= prev || r.Version > n {
			return nil, invalidf("checkpoint %d is version %d: versions must rise, from 1 to the session's %d", i+1, r.Version, n)
		}
		prev = r.Version
	}
	forks := map[int]bool{}
	present := map[int]bool{0: true}
	prev = 0
	for _, r := range ex.Checkpoints {
		v := r.Version
		if r.Parent >= v || !present[r.Parent] {
			return nil, invalidf("version %d names parent v%d, which is not an older version", v, r.Parent)
		}
		if r.Parent != prev {
			forks[r.Parent] = true
		}
		present[v], prev = true, v
	}
	if !present[ex.Session.Head] {
		return nil, invalidf("the session's head v%d is not one of its versions", ex.Session.Head)
	}
	out, used, err := replayImport(ex, forks)
	if err != nil {
		return nil, err
	}
	for _, d := range digests {
		if !used[d] {
			return nil, invalidf("file content %s is carried, but no version refers to it", d)
		}
	}
	phase := state.Idle
	for _, r := range out {
		if r.Version == ex.Session.Head {
			phase = r.Phase
		}
	}
	if ex.Session.Phase != phase {
		return nil, invalidf("the session's phase is %s, but its head v%d is in phase %s", ex.Session.Phase, ex.Session.Head, phase)
	}
	return out, nil
}

// replayImport replays every checkpoint from its parent's state and
// returns them as kept, and the contents they refer to.
func replayImport(ex Export, forks map[int]bool) ([]Record, map[string]bool, error) {
	empty := state.New(ex.Session.ID)
	snaps := map[int]state.State{0: empty}
	b := state.NewBuilder(empty)
	used := map[string]bool{}
	out := make([]Record, len(ex.Checkpoints))
	prev := 0
	for i, r := range ex.Checkpoints {
		v := r.Version
		if r.Parent != prev {
			b = state.NewBuilder(snaps[r.Parent])
		}
		prev = v
		ev, err := state.Canonical(r.Data)
		if err != nil {
			return nil, nil, invalidf("version %d: its event: %v", v, err)
		}
		if ev.Kind != r.Event {
			return nil, nil, invalidf("version %d: its event is %s, but its checkpoint says %s", v, ev.Kind, r.Event)
		}
		if !ev.At.Equal(r.At) {
			return nil, nil, invalidf("version %d: its checkpoint's time %s disagrees with its event's %s", v, r.At.Format(time.RFC3339Nano), ev.At.Format(time.RFC3339Nano))
		}
		if ns := ev.At.UnixNano(); ev.At.IsZero() || !time.Unix(0, ns).Equal(ev.At) {
			return nil, nil, invalidf("version %d: its time %s cannot be stored (zero or outside 1678-2262)", v, ev.At.Format(time.RFC3339Nano))
		}
		if err := b.Apply(ev); err != nil {
			return nil, nil, invalidf("version %d does not replay from v%d: %v", v, r.Parent, err)
		}
		if b.Phase() != r.Phase {
			return nil, nil, invalidf("version %d: its event leads to phase %s, but its checkpoint says %s", v, b.Phase(), r.Phase)
		}
		for _, d := range ev.BlobDigests() {
			if used[d] {
				continue
			}
			if !ex.hasContent(d) {
				return nil, nil, invalidf("version %d refers to file content %s, which the export does not carry", v, d)
			}
			used[d] = true
			// A spooled content is read when a store writes it (see
			// Export.Content): only its digest travels here.
			ev.Blobs = append(ev.Blobs, state.Blob{Digest: d, Data: ex.Blobs[d]})
		}
		if forks[v] {
			snaps[v] = b.State()
		}
		out[i] = Record{
			Checkpoint: Checkpoint{Version: v, Parent: r.Parent, Event: ev.Kind, Phase: b.Phase(), At: ev.At},
			Data:       ev,
		}
	}
	return out, used, nil
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("import: "+format+": %w", append(args, ErrInvalid)...)
}
