package boltstore

import (
	"context"
	"time"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
)

// StoredCheckpoint is one version exactly as the file keeps it: the header
// fields and the event's JSON bytes, after the record's checksum passed.
type StoredCheckpoint struct {
	Version int
	Parent  int
	Phase   state.Phase
	Kind    state.EventKind
	At      time.Time
	Event   []byte
}

// StoredCheckpoints returns every version of a session as stored, without
// decoding any event: tests compare the bytes themselves.
func (s *Store) StoredCheckpoints(ctx context.Context, id string) ([]StoredCheckpoint, error) {
	var out []StoredCheckpoint
	err := s.viewSession(ctx, id, true, func(tx *bolt.Tx) error {
		b, rec, err := s.session(tx, id)
		if err != nil {
			return err
		}
		out = make([]StoredCheckpoint, 0, rec.Versions)
		return s.eachCheckpoint(b.Bucket(versionsBucket), id, func(v int, h header, raw []byte) error {
			_, js, err := decodeHeader(raw)
			if err != nil {
				return err
			}
			out = append(out, StoredCheckpoint{Version: v, Parent: h.parent, Phase: h.phase, Kind: h.kind, At: h.at, Event: append([]byte(nil), js...)})
			return nil
		})
	})
	return out, err
}

// SchemaVersion is the schema this build writes.
const SchemaVersion = schemaVersion
