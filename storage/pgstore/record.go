package pgstore

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"time"

	"retrace/state"
	"retrace/storage"
)

// Every row carries a CRC-32C (Castagnoli), as boltstore's records do:
// PostgreSQL checksums its pages only when the cluster was made with
// --data-checksums, and never what a person or a tool wrote through SQL.
// The CRC is of the row's columns laid out as below, its key included, so
// a row copied under another key is caught as well as a flipped byte.
//
//	session:    id, title, model, workspace, created, updated, head,
//	            versions, phase, removed
//	checkpoint: session, version, parent, phase, kind, at, body_crc
//	            (body_crc is the CRC of body: the tree checks a row's
//	            header without reading the event)
//	blob:       digest, data
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crcBuf lays fields out for a CRC: strings with their length first, so
// that no two rows' fields run together into the same bytes.
type crcBuf []byte

func (b crcBuf) str(s string) crcBuf {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func (b crcBuf) num(n int64) crcBuf { return binary.AppendVarint(b, n) }

func (b crcBuf) sum() int64 { return int64(crc32.Checksum(b, castagnoli)) }

// sessionRow is a session as stored.
type sessionRow struct {
	id                   string
	title, model, wspace string
	created, updated     int64 // Unix nanoseconds
	head, versions       int
	phase                string
	removed              []int32 // [first, last] pairs, flattened
	crc                  int64
}

func (r sessionRow) checksum() int64 {
	b := crcBuf(make([]byte, 0, 64+len(r.title)+len(r.model)+len(r.wspace))).
		str(r.id).str(r.title).str(r.model).str(r.wspace).
		num(r.created).num(r.updated).num(int64(r.head)).num(int64(r.versions)).str(r.phase).
		num(int64(len(r.removed)))
	for _, v := range r.removed {
		b = b.num(int64(v))
	}
	return b.sum()
}

func (r sessionRow) sealed() sessionRow { r.crc = r.checksum(); return r }

// info checks the row and returns the summary it holds.
func (s *Store) info(r sessionRow) (storage.SessionInfo, error) {
	bad := func(reason string) (storage.SessionInfo, error) {
		return storage.SessionInfo{}, s.corrupt(r.id, 0, "session record: "+reason)
	}
	if got := r.checksum(); got != r.crc {
		return bad(fmt.Sprintf("checksum mismatch (stored %08x, computed %08x)", r.crc, got))
	}
	phase, err := state.ParsePhase(r.phase)
	if err != nil {
		return bad(err.Error())
	}
	if r.head < 0 || r.versions < 0 || r.head > r.versions {
		return bad(fmt.Sprintf("head v%d outside versions 0 to %d", r.head, r.versions))
	}
	if len(r.removed)%2 != 0 {
		return bad("its removed versions are not pairs")
	}
	return storage.SessionInfo{
		ID: r.id, Title: r.title, Model: r.model, Workspace: r.wspace,
		CreatedAt: fromNanos(r.created), UpdatedAt: fromNanos(r.updated),
		Head: r.head, Versions: r.versions, Phase: phase,
	}, nil
}

// missing says why the session has no version v (0 being the empty
// session), or returns nil when it has.
func (r sessionRow) missing(v int) error {
	removed := false
	for i := 0; i+1 < len(r.removed); i += 2 {
		if v >= int(r.removed[i]) && v <= int(r.removed[i+1]) {
			removed = true
		}
	}
	if v < 0 || v > r.versions || removed {
		return &storage.VersionError{Session: r.id, Version: v, Versions: r.versions, Removed: removed}
	}
	return nil
}

// checkpointRow is a checkpoint as stored.
type checkpointRow struct {
	version, parent int
	phase, kind     string
	at              int64
	body            []byte // nil when only the header was read
	bodyCRC, crc    int64
}

func (r checkpointRow) checksum(id string) int64 {
	return crcBuf(make([]byte, 0, 64)).str(id).num(int64(r.version)).num(int64(r.parent)).
		str(r.phase).str(r.kind).num(r.at).num(r.bodyCRC).sum()
}

// encodeCheckpoint makes the row of ev kept as version v under parent,
// phase the phase after it: the event as state's binary body, after
// state.Canonical, exactly as boltstore keeps it.
func encodeCheckpoint(id string, v, parent int, phase state.Phase, ev state.Event) (checkpointRow, error) {
	ns := ev.At.UnixNano()
	if ev.At.IsZero() || time.Unix(0, ns).UTC() != ev.At.UTC() {
		return checkpointRow{}, fmt.Errorf("event time %v cannot be stored (zero or outside 1678-2262)", ev.At)
	}
	canon, err := state.Canonical(ev)
	if err != nil {
		return checkpointRow{}, err
	}
	r := checkpointRow{version: v, parent: parent, phase: phase.String(), kind: ev.Kind.String(), at: ns,
		body: state.AppendEventBody(make([]byte, 0, 256), canon)} // never nil: body is NOT NULL
	r.bodyCRC = int64(crc32.Checksum(r.body, castagnoli))
	r.crc = r.checksum(id)
	return r, nil
}

// header checks a row's header (not its body) and returns its checkpoint.
func (s *Store) header(id string, r checkpointRow) (storage.Checkpoint, error) {
	bad := func(reason string) (storage.Checkpoint, error) {
		return storage.Checkpoint{}, s.corrupt(id, r.version, reason)
	}
	if got := r.checksum(id); got != r.crc {
		return bad(fmt.Sprintf("checksum mismatch (stored %08x, computed %08x)", r.crc, got))
	}
	if r.parent < 0 || r.parent >= r.version {
		return bad(fmt.Sprintf("its parent v%d is not older than it", r.parent))
	}
	phase, err := state.ParsePhase(r.phase)
	if err != nil {
		return bad(err.Error())
	}
	kind, err := state.ParseEventKind(r.kind)
	if err != nil {
		return bad(err.Error())
	}
	return storage.Checkpoint{Version: r.version, Parent: r.parent, Event: kind, Phase: phase, At: fromNanos(r.at)}, nil
}

// event checks a whole row and decodes its event.
func (s *Store) event(id string, r checkpointRow) (storage.Checkpoint, state.Event, error) {
	cp, err := s.header(id, r)
	if err != nil {
		return cp, state.Event{}, err
	}
	if got := int64(crc32.Checksum(r.body, castagnoli)); got != r.bodyCRC {
		return cp, state.Event{}, s.corrupt(id, r.version, fmt.Sprintf("event checksum mismatch (stored %08x, computed %08x)", r.bodyCRC, got))
	}
	ev, err := state.DecodeEventBody(cp.Event, cp.At, r.body)
	if err != nil {
		return cp, state.Event{}, s.corrupt(id, r.version, "event: "+err.Error())
	}
	return cp, ev, nil
}

func blobChecksum(digest string, data []byte) int64 {
	c := crc32.Checksum(crcBuf(nil).str(digest), castagnoli)
	return int64(crc32.Update(c, castagnoli, data))
}

// nanos is t as stored: Unix nanoseconds. Times outside 1678-2262 cannot
// be; no time retrace makes is.
func nanos(t time.Time) (int64, error) {
	ns := t.UnixNano()
	if !time.Unix(0, ns).Equal(t) {
		return 0, fmt.Errorf("time %s cannot be stored (outside 1678-2262): %w", t.Format(time.RFC3339Nano), storage.ErrInvalid)
	}
	return ns, nil
}

func fromNanos(ns int64) time.Time { return time.Unix(0, ns).UTC() }
