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
	raw := vb.Get(versionKey(v))
	if raw == nil {
		return header{}, nil, &storage.CorruptError{Path: s.path, Session: id, Version: v, Reason: "the version is missing"}
	}
	h, js, err := decodeHeader(raw)
	if err != nil {
		return header{}, nil, &storage.CorruptError{Path: s.path, Session: id, Version: v, Reason: err.Error()}
	}
	if h.parent >= v {
		return header{}, nil, &storage.CorruptError{Path: s.path, Session: id, Version: v, Reason: fmt.Sprintf("its parent v%d is not older than it", h.parent)}
	}
	return h, js, nil
}

// phaseAt is the phase at version v, read from its header.
func (s *Store) phaseAt(vb *bolt.Bucket, id string, v int) (state.Phase, error) {
	if v == 0 {
		return state.Idle, nil
	}
	h, _, err := s.header(vb, id, v)
	return h.phase, err
}

// replay builds the state at version v from the events on the path from
// the root to it. Each record is read once: the walk up collects the
// events' bytes (valid for the transaction), the fold down decodes them.
func (s *Store) replay(vb *bolt.Bucket, id string, v int) (state.State, error) {
	type step struct {
		version int
		header  header
		event   []byte
	}
	var path []step
	for cur := v; cur > 0; {
		h, js, err := s.header(vb, id, cur)
		if err != nil {
			return state.State{}, err
		}
		path = append(path, step{cur, h, js})
		cur = h.parent
	}
	r := state.NewBuilder(state.New(id))
	for i := len(path) - 1; i >= 0; i-- {
		st := path[i]
		damaged := func(reason string) error {
			return &storage.CorruptError{Path: s.path, Session: id, Version: st.version, Reason: reason}
		}
		ev, err := state.DecodeEvent(st.event)
		if err != nil {
			return state.State{}, damaged("event: " + err.Error())
		}
		if ev.Kind != st.header.kind {
			return state.State{}, damaged(fmt.Sprintf("event %s disagrees with its header (%s)", ev.Kind, st.header.kind))
		}
		if err := r.Apply(ev); err != nil {
			return state.State{}, damaged("does not replay: " + err.Error())
		}
		if r.Phase() != st.header.phase {
			return state.State{}, damaged(fmt.Sprintf("replays to phase %s, but was stored as %s", r.Phase(), st.header.phase))
		}
	}
	out := r.State()
	out.Version = v
	if len(path) > 0 {
		out.ParentVersion = path[0].header.parent
	}
	return out, nil
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
