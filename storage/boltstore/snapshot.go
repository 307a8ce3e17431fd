package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
	"retrace/storage"
)

// Snapshots let a long session be taken up again without reading all of
// it. Every snapshotEvery versions, the checkpoint's transaction also
// keeps the state it leads to, windowed to its latest exchange
// (state.Window), in the session's snapshots bucket. Recent starts from
// the nearest snapshot on the way to the version asked for and applies
// the events after it; when what it must return reaches further back
// (the messages the summary does not cover), it starts from an older
// snapshot, one whose window does reach. Its cost follows what it
// returns, not the session's length.
//
// Snapshots are derived data. Each is sealed (its own format byte and
// CRC) and names its session and version; one that fails any of these, or
// that the events after it do not apply to, is passed over, as if it were
// not there, and the events before it are read instead. The events stay
// the truth: Head and At never read a snapshot, verify checks every
// snapshot against a replay of the events, and gc drops those of the
// versions it removes. A damaged snapshot costs a load time, never a
// write: the check before a Store's first write passes over snapshots.
//
//	sessions/<id>/s/  bucket: version (uint64, big-endian) -> sealed snapshot
//	                  [5:] uvarint version, uvarint length and the session
//	                  id, then state.AppendSnapshot
const snapshotFormat = 3

var snapshotsBucket = []byte("s")

// snapshotEvery is how many versions apart snapshots are kept. A load
// applies at most about this many events past its snapshot, and the
// checkpoint that keeps a snapshot applies as many to build it; see the
// README's benchmarks for the measurements that chose it.
const snapshotEvery = 256

// Recent returns the state at version with only the recent part of its
// history: every message the summary does not cover, and at least the
// last keep messages (state.Window says what else). It is what going on
// with a session needs; At returns the whole.
func (s *Store) Recent(ctx context.Context, id string, version, keep int) (state.State, error) {
	var st state.State
	// Only the versions and snapshots read are walked (guardIn), not the
	// session's every page: a long session costs what is read of it.
	err := s.viewIn(ctx, scope{session: id, guarded: true}, func(tx *bolt.Tx) error {
		b, rec, err := s.session(tx, id)
		if err != nil {
			return err
		}
		if err := rec.missing(id, version); err != nil {
			return err
		}
		st, err = s.windowAt(b, id, version, anySnapshot, func(at state.State) int {
			return max(0, min(at.SummaryThrough, at.HistoryLen()-keep))
		})
		return err
	})
	if errors.Is(err, errNoFile) {
		return state.State{}, &storage.NotFoundError{ID: id, Where: s.path}
	}
	return st, err
}

// windowAt builds the state at version v windowed from the message
// position from(state at v) gives, reading back from v only to the
// nearest snapshot whose window reaches that far, among those use takes.
func (s *Store) windowAt(b *bolt.Bucket, id string, v int, use func(version int) bool, from func(state.State) int) (state.State, error) {
	vb, sb := b.Bucket(versionsBucket), b.Bucket(snapshotsBucket)
	c := versionCursor{c: vb.Cursor()}
	record := func(v int) ([]byte, error) {
		if s.reach == nil || s.reach.inSession == nil {
			return c.record(v), nil
		}
		// A guarded read: each record looked up by its own walked way,
		// where a cursor would step onto pages nobody checked.
		key := versionKey(v)
		if err := s.guardIn(versionsBucket, key); err != nil {
			return nil, err
		}
		return vb.Get(key), nil
	}
	var path []step
	need := -1 // the window's start, once the state at v told it
	cur := v
	passed := map[int]bool{} // snapshots the events after them did not apply to
	for {
		base, snapAt := state.New(id), 0
		for cur > 0 {
			snap, ok, err := s.snapshotAt(sb, id, cur)
			if err != nil {
				return state.State{}, err
			}
			if ok && use(cur) && !passed[cur] && (need < 0 || snap.HistoryFrom <= need) {
				base, snapAt = snap, cur
				break
			}
			raw, err := record(cur)
			if err != nil {
				return state.State{}, err
			}
			h, body, err := s.checkedHeader(id, cur, raw)
			if err != nil {
				return state.State{}, err
			}
			path = append(path, step{cur, h, body})
			cur = h.parent
		}
		st, err := s.fold(base, path, id)
		if err != nil && snapAt > 0 {
			// Sealed and named right, yet not what the events go on
			// from: the snapshot is wrong, not they. Read past it.
			passed[snapAt] = true
			continue
		}
		if err != nil {
			return state.State{}, err
		}
		if need < 0 {
			need = from(st)
		}
		if st.HistoryFrom <= need {
			if st.ParentVersion, err = parentOf(v, path, func() (header, error) {
				raw, err := record(v)
				if err != nil {
					return header{}, err
				}
				h, _, err := s.checkedHeader(id, v, raw)
				return h, err
			}); err != nil {
				return state.State{}, err
			}
			st.Version = v
			return st.Window(need)
		}
		// The snapshot at cur does not reach back far enough: go on past
		// it, to an older one that does (or to the start).
	}
}

// parentOf is version v's parent: from the path already read when it
// holds v, else from v's header.
func parentOf(v int, path []step, header func() (header, error)) (int, error) {
	if v == 0 {
		return 0, nil
	}
	if len(path) > 0 {
		return path[0].header.parent, nil
	}
	h, err := header()
	return h.parent, err
}

// snapshotAt reads the snapshot kept at version v, if there is a sound
// one. A damaged one is passed over: the events it was made from are
// still there (verify reports it). Damage on the way to it, in the
// file's pages, is an error like any other.
func (s *Store) snapshotAt(sb *bolt.Bucket, id string, v int) (state.State, bool, error) {
	if sb == nil {
		return state.State{}, false, nil
	}
	key := versionKey(v)
	if err := s.guardIn(snapshotsBucket, key); err != nil {
		return state.State{}, false, err
	}
	raw := sb.Get(key)
	if raw == nil {
		return state.State{}, false, nil
	}
	st, err := decodeSnapshot(raw, id, v)
	if err != nil {
		return state.State{}, false, nil
	}
	return st, true, nil
}

func encodeSnapshot(id string, v int, st state.State) []byte {
	buf := binary.AppendUvarint(make([]byte, sealSize, 1024), uint64(v))
	buf = binary.AppendUvarint(buf, uint64(len(id)))
	buf = append(buf, id...)
	return sealAs(state.AppendSnapshot(buf, st), snapshotFormat)
}

// decodeSnapshot checks a sealed snapshot, and that it is session id's
// at version v: a snapshot moved by damage to another key, or into
// another session's bucket, must not be taken for the state there.
func decodeSnapshot(raw []byte, id string, v int) (state.State, error) {
	format, p, err := unsealAny(raw)
	if err != nil {
		return state.State{}, err
	}
	if format != snapshotFormat {
		return state.State{}, fmt.Errorf("is in record format %d", format)
	}
	at, k := binary.Uvarint(p)
	if k <= 0 || at != uint64(v) {
		return state.State{}, fmt.Errorf("is kept at v%d but is of v%d", v, at)
	}
	p = p[k:]
	n, k := binary.Uvarint(p)
	if k <= 0 || n > uint64(len(p)-k) || string(p[k:k+int(n)]) != id {
		return state.State{}, errors.New("is of another session")
	}
	st, err := state.DecodeSnapshot(p[k+int(n):])
	st.SessionID, st.Version = id, v
	return st, err
}

// keepSnapshot keeps the state at version v as a snapshot when the
// nearest snapshot before it is snapshotEvery or more versions back. It
// runs in the transaction that wrote v.
func (s *Store) keepSnapshot(b *bolt.Bucket, id string, v int) error {
	if v < snapshotEvery {
		return nil // the empty session, v0, is as good as a snapshot
	}
	sb, err := b.CreateBucketIfNotExists(snapshotsBucket)
	if err != nil {
		return err
	}
	if k, _ := sb.Cursor().Seek(versionKey(v - snapshotEvery + 1)); k != nil {
		return nil // one of the last snapshotEvery-1 versions has one
	}
	st, err := s.windowAt(b, id, v, anySnapshot, state.State.HistoryLen)
	if err != nil {
		return err
	}
	sb.FillPercent = 1.0
	return sb.Put(versionKey(v), encodeSnapshot(id, v, st))
}

func anySnapshot(int) bool { return true }

// keepSnapshots keeps the snapshots an imported session would have had,
// had its versions been appended one by one (keepSnapshot): where no
// snapshot is within the last snapshotEvery versions, at the versions gc
// did not remove.
func (s *Store) keepSnapshots(b *bolt.Bucket, id string, rec infoRecord) error {
	for v := snapshotEvery; v <= rec.Versions; v += snapshotEvery {
		if rec.removed(v) {
			continue
		}
		if err := s.keepSnapshot(b, id, v); err != nil {
			return err
		}
	}
	return nil
}

// verifySnapshots checks every snapshot of a session: its seal, that it
// is kept at a version the session holds, and that it is what the events
// make of that version (built from the snapshots before it, checked
// first, so a session costs one pass over its events).
func (s *Store) verifySnapshots(b *bolt.Bucket, id string, rec infoRecord) error {
	sb := b.Bucket(snapshotsBucket)
	if sb == nil {
		return nil
	}
	c := sb.Cursor()
	for k, raw := c.First(); k != nil; k, raw = c.Next() {
		v, ok := keyVersion(k)
		if !ok || raw == nil {
			return &storage.CorruptError{Path: s.path, Session: id, Reason: fmt.Sprintf("stray key %x among the snapshots", k), Derived: true}
		}
		damaged := func(reason string) error {
			return &storage.CorruptError{Path: s.path, Session: id, Version: v, Reason: "its snapshot " + reason, Derived: true}
		}
		if rec.missing(id, v) != nil {
			return damaged("is of a version the session does not hold")
		}
		if _, err := decodeSnapshot(raw, id, v); err != nil {
			return damaged(err.Error())
		}
		want, err := s.windowAt(b, id, v, func(at int) bool { return at < v }, state.State.HistoryLen)
		if err != nil {
			return err
		}
		if !bytes.Equal(raw, encodeSnapshot(id, v, want)) {
			return damaged("is not what its events make of the version")
		}
	}
	return nil
}
