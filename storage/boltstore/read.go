package boltstore

import (
	"bytes"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
	"retrace/storage"
)

// session returns a session's bucket and its info record.
func (s *Store) session(tx *bolt.Tx, id string) (*bolt.Bucket, infoRecord, error) {
	sessions, err := s.sessionsOf(tx)
	if err != nil {
		return nil, infoRecord{}, err
	}
	var b *bolt.Bucket
	if validID.MatchString(id) {
		b = sessions.Bucket([]byte(id))
	}
	if b == nil {
		return nil, infoRecord{}, &storage.NotFoundError{ID: id, Where: s.path}
	}
	rec, err := decodeInfo(b.Get(infoKey))
	if err != nil {
		return nil, infoRecord{}, &storage.CorruptError{Path: s.path, Session: id, Reason: "session record: " + err.Error()}
	}
	if b.Bucket(versionsBucket) == nil {
		return nil, infoRecord{}, &storage.CorruptError{Path: s.path, Session: id, Reason: "its versions are missing"}
	}
	return b, rec, nil
}

// listedSession is session for a key found by walking the sessions
// bucket. There, a key that is no id retrace makes, or one that cannot be
// looked up again, is damage, not a missing session.
func (s *Store) listedSession(tx *bolt.Tx, k []byte) (*bolt.Bucket, infoRecord, error) {
	if !validID.Match(k) {
		return nil, infoRecord{}, &storage.CorruptError{Path: s.path, Reason: fmt.Sprintf("a session's id %q is malformed", k)}
	}
	b, rec, err := s.session(tx, string(k))
	if errors.Is(err, storage.ErrSessionNotFound) {
		return nil, infoRecord{}, &storage.CorruptError{Path: s.path, Session: string(k), Reason: "it is listed among the sessions but cannot be looked up: the list is damaged"}
	}
	return b, rec, err
}

func putInfo(b *bolt.Bucket, rec infoRecord) error {
	value, err := encodeInfo(rec)
	if err != nil {
		return err
	}
	return b.Put(infoKey, value)
}

// allSessions reads the info of every session whose id starts with prefix.
func (s *Store) allSessions(tx *bolt.Tx, prefix []byte) ([]storage.SessionInfo, error) {
	sessions, err := s.sessionsOf(tx)
	if err != nil {
		return nil, err
	}
	var list []storage.SessionInfo
	c := sessions.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if v != nil {
			continue // not a bucket: nothing of ours
		}
		_, rec, err := s.listedSession(tx, k)
		if err != nil {
			return nil, err
		}
		list = append(list, rec.info(string(k)))
	}
	return list, nil
}

// header reads one checkpoint's header.
func (s *Store) header(vb *bolt.Bucket, id string, v int) (header, []byte, error) {
	return s.checkedHeader(id, v, vb.Get(versionKey(v)))
}

// checkedHeader decodes version v's record, raw (nil: there is none), and
// checks it can be v's.
func (s *Store) checkedHeader(id string, v int, raw []byte) (header, []byte, error) {
	if raw == nil {
		return header{}, nil, &storage.CorruptError{Path: s.path, Session: id, Version: v, Reason: "the version is missing"}
	}
	h, body, err := decodeHeader(raw)
	if err != nil {
		return header{}, nil, &storage.CorruptError{Path: s.path, Session: id, Version: v, Reason: err.Error()}
	}
	if h.parent >= v {
		return header{}, nil, &storage.CorruptError{Path: s.path, Session: id, Version: v, Reason: fmt.Sprintf("its parent v%d is not older than it", h.parent)}
	}
	return h, body, nil
}

// phaseAt is the phase at version v, read from its header.
func (s *Store) phaseAt(vb *bolt.Bucket, id string, v int) (state.Phase, error) {
	if v == 0 {
		return state.Idle, nil
	}
	h, _, err := s.header(vb, id, v)
	return h.phase, err
}

// step is one checkpoint on the way to a version: its header and its
// event's bytes (valid for the transaction).
type step struct {
	version int
	header  header
	event   []byte
}

// pathTo reads the checkpoints from v up to the root, v first.
func (s *Store) pathTo(vb *bolt.Bucket, id string, v int) ([]step, error) {
	// Room for every version up to v: a session without branches has
	// all of them on its path, and growing the path is a copy of it.
	path := make([]step, 0, v)
	c := versionCursor{c: vb.Cursor()}
	for cur := v; cur > 0; {
		h, body, err := s.checkedHeader(id, cur, c.record(cur))
		if err != nil {
			return nil, err
		}
		path = append(path, step{cur, h, body})
		cur = h.parent
	}
	return path, nil
}

// versionCursor reads records going back through the versions. In a
// session without branches a version's parent is the record before it,
// a step back for the cursor where a lookup would search from the root;
// a parent further back (where a branch starts) is sought.
type versionCursor struct {
	c  *bolt.Cursor
	at int // the version under the cursor; 0 when unknown
}

// record returns version v's record, nil when there is none.
func (vc *versionCursor) record(v int) []byte {
	const stepBack = 8
	if vc.at > v && vc.at-v <= stepBack {
		for {
			k, raw := vc.c.Prev()
			got, ok := keyVersion(k)
			if !ok {
				break // the first record, or a key no version has: seek
			}
			if vc.at = got; got <= v {
				if got == v {
					return raw
				}
				return nil
			}
		}
	}
	k, raw := vc.c.Seek(versionKey(v))
	vc.at, _ = keyVersion(k)
	if vc.at != v {
		vc.at = 0
		return nil
	}
	return raw
}

// replay builds the state at version v from the events on the path from
// the root to it. Each record is read once: the walk up collects the
// events' bytes (valid for the transaction), the fold down decodes them.
func (s *Store) replay(vb *bolt.Bucket, id string, v int) (state.State, error) {
	path, err := s.pathTo(vb, id, v)
	if err != nil {
		return state.State{}, err
	}
	out, err := s.fold(state.New(id), path, id)
	if err != nil {
		return state.State{}, err
	}
	out.Version = v
	if len(path) > 0 {
		out.ParentVersion = path[0].header.parent
	}
	return out, nil
}

// fold applies the events of path (read going back, so the newest first)
// to base, the state at the version before the path's oldest, checking
// that each leads to the phase its header recorded.
func (s *Store) fold(base state.State, path []step, id string) (state.State, error) {
	r := state.NewBuilder(base)
	// Most events add a message: room for one each saves growing the
	// history, and copying it, again and again on the way.
	r.GrowHistory(len(path))
	for i := len(path) - 1; i >= 0; i-- {
		st := path[i]
		damaged := func(reason string) error {
			return &storage.CorruptError{Path: s.path, Session: id, Version: st.version, Reason: reason}
		}
		ev, err := decodeEvent(st.header, st.event)
		if err != nil {
			return state.State{}, damaged(err.Error())
		}
		if err := r.Apply(ev); err != nil {
			return state.State{}, damaged("does not replay: " + err.Error())
		}
		if r.Phase() != st.header.phase {
			return state.State{}, damaged(fmt.Sprintf("replays to phase %s, but was stored as %s", r.Phase(), st.header.phase))
		}
	}
	return r.State(), nil
}

// eachCheckpoint calls fn for every version in ascending order with its
// checked header and raw record (valid only during the call).
func (s *Store) eachCheckpoint(vb *bolt.Bucket, id string, fn func(v int, h header, raw []byte) error) error {
	c := vb.Cursor()
	for k, raw := c.First(); k != nil; k, raw = c.Next() {
		v, ok := keyVersion(k)
		if !ok {
			return &storage.CorruptError{Path: s.path, Session: id, Reason: fmt.Sprintf("a version key is malformed (%x)", k)}
		}
		h, _, err := decodeHeader(raw)
		if err != nil {
			return &storage.CorruptError{Path: s.path, Session: id, Version: v, Reason: err.Error()}
		}
		if h.parent >= v {
			return &storage.CorruptError{Path: s.path, Session: id, Version: v, Reason: fmt.Sprintf("its parent v%d is not older than it", h.parent)}
		}
		if err := fn(v, h, raw); err != nil {
			return err
		}
	}
	return nil
}
