package boltstore

import (
	"context"
	"time"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
)

// StoredCheckpoint is one version as the file keeps it: the header fields
// and the event's JSON, after the record's checksum passed. A format-1
// record's JSON is its own bytes; a format-2 record's is its binary body
// read and written as JSON, which is the JSON the event was written from.
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
			h, js, err := decodeHeader(raw)
			if err != nil {
				return err
			}
			if h.format == checkpointFormat {
				ev, err := decodeEvent(h, js)
				if err != nil {
					return err
				}
				if js, err = state.EncodeEvent(ev); err != nil {
					return err
				}
			}
			out = append(out, StoredCheckpoint{Version: v, Parent: h.parent, Phase: h.phase, Kind: h.kind, At: h.at, Event: append([]byte(nil), js...)})
			return nil
		})
	})
	return out, err
}

// SchemaVersion is the schema this build writes.
const SchemaVersion = schemaVersion

// ChunkSize is the largest content a record holds whole.
const ChunkSize = chunkSize
