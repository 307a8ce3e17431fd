package boltstore

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"time"

	"retrace/state"
)

// Every value retrace stores is sealed: one format byte, a CRC-32C of the
// rest, then the payload. bbolt checksums only its meta pages, so without
// this a flipped byte inside a value would read back as wrong data with no
// error at all.
//
//	[0]    format (1)
//	[1:5]  CRC-32C (Castagnoli) of bytes [5:], little-endian
//	[5:]   payload
//
// A checkpoint's payload starts with a small binary header, so the version
// tree can be listed without decoding any event:
//
//	uvarint parent version
//	uvarint len, phase after the event (wire name)
//	uvarint len, event kind (wire name)
//	varint  event time, Unix nanoseconds
//	rest    the event as JSON (state.EncodeEvent)
//
// A session's info record's payload is JSON (infoRecord).
const recordFormat = 1

const sealSize = 5

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var errShort = errors.New("record is truncated")

func seal(buf []byte) []byte {
	buf[0] = recordFormat
	binary.LittleEndian.PutUint32(buf[1:sealSize], crc32.Checksum(buf[sealSize:], castagnoli))
	return buf
}

// unseal checks a sealed value and returns its payload (aliasing b).
func unseal(b []byte) ([]byte, error) {
	if len(b) < sealSize {
		return nil, errShort
	}
	if b[0] != recordFormat {
		return nil, fmt.Errorf("unknown record format %d", b[0])
	}
	if want, got := binary.LittleEndian.Uint32(b[1:sealSize]), crc32.Checksum(b[sealSize:], castagnoli); want != got {
		return nil, fmt.Errorf("checksum mismatch (stored %08x, computed %08x)", want, got)
	}
	return b[sealSize:], nil
}

// header is what the tree needs to know about a checkpoint.
type header struct {
	parent int
	phase  state.Phase
	kind   state.EventKind
	at     time.Time
}

func encodeCheckpoint(parent int, phase state.Phase, ev state.Event) ([]byte, error) {
	ns := ev.At.UnixNano()
	if ev.At.IsZero() || time.Unix(0, ns).UTC() != ev.At.UTC() {
		return nil, fmt.Errorf("event time %v cannot be stored (zero or outside 1678-2262)", ev.At)
	}
	js, err := state.EncodeEvent(ev)
	if err != nil {
		return nil, err
	}
	phaseName, kindName := phase.String(), ev.Kind.String()
	buf := make([]byte, sealSize, sealSize+3*binary.MaxVarintLen64+len(phaseName)+len(kindName)+len(js))
	buf = binary.AppendUvarint(buf, uint64(parent))
	buf = appendString(buf, phaseName)
	buf = appendString(buf, kindName)
	buf = binary.AppendVarint(buf, ns)
	buf = append(buf, js...)
	return seal(buf), nil
}

// decodeHeader checks a checkpoint record and returns its header and the
// event's JSON (aliasing b).
func decodeHeader(b []byte) (header, []byte, error) {
	p, err := unseal(b)
	if err != nil {
		return header{}, nil, err
	}
	var h header
	parent, n := binary.Uvarint(p)
	if n <= 0 || parent > math.MaxInt32 {
		return header{}, nil, errors.New("bad parent version")
	}
	h.parent, p = int(parent), p[n:]
	phaseName, p, err := readString(p)
	if err != nil {
		return header{}, nil, err
	}
	if h.phase, err = state.ParsePhase(phaseName); err != nil {
		return header{}, nil, err
	}
	kindName, p, err := readString(p)
	if err != nil {
		return header{}, nil, err
	}
	if h.kind, err = state.ParseEventKind(kindName); err != nil {
		return header{}, nil, err
	}
	ns, n := binary.Varint(p)
	if n <= 0 {
		return header{}, nil, errors.New("bad event time")
	}
	h.at, p = time.Unix(0, ns).UTC(), p[n:]
	return h, p, nil
}

// decodeCheckpoint checks a checkpoint record and decodes its event, which
// must agree with the header.
func decodeCheckpoint(b []byte) (header, state.Event, error) {
	h, js, err := decodeHeader(b)
	if err != nil {
		return header{}, state.Event{}, err
	}
	ev, err := state.DecodeEvent(js)
	if err != nil {
		return header{}, state.Event{}, fmt.Errorf("event: %w", err)
	}
	if ev.Kind != h.kind || !ev.At.Equal(h.at) {
		return header{}, state.Event{}, fmt.Errorf("event (%s at %s) disagrees with its header (%s at %s)", ev.Kind, ev.At, h.kind, h.at)
	}
	return h, ev, nil
}

func appendString(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

func readString(p []byte) (string, []byte, error) {
	n, k := binary.Uvarint(p)
	if k <= 0 || n > uint64(len(p)-k) {
		return "", nil, errShort
	}
	return string(p[k : k+int(n)]), p[k+int(n):], nil
}

// infoRecord is a session's summary as stored.
type infoRecord struct {
	Title     string      `json:"title"`
	Model     string      `json:"model"`
	Workspace string      `json:"workspace"`
	CreatedAt time.Time   `json:"created_at"`
	UpdatedAt time.Time   `json:"updated_at"`
	Head      int         `json:"head"`
	Versions  int         `json:"versions"`
	Phase     state.Phase `json:"phase"`
	// Removed lists the runs of versions gc removed, [first, last] each,
	// ascending (see gaps.go). Absent in every session gc never pruned, so
	// their records stay as they were.
	Removed [][2]int `json:"removed,omitempty"`
}

func encodeInfo(r infoRecord) ([]byte, error) {
	js, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return seal(append(make([]byte, sealSize, sealSize+len(js)), js...)), nil
}

func decodeInfo(b []byte) (infoRecord, error) {
	p, err := unseal(b)
	if err != nil {
		return infoRecord{}, err
	}
	var r infoRecord
	if err := json.Unmarshal(p, &r); err != nil {
		return infoRecord{}, err
	}
	if r.Head < 0 || r.Versions < 0 || r.Head > r.Versions {
		return infoRecord{}, fmt.Errorf("head v%d outside versions 0 to %d", r.Head, r.Versions)
	}
	if err := r.checkRemoved(); err != nil {
		return infoRecord{}, err
	}
	return r, nil
}

// versionKey is a version as a bucket key: big-endian, so keys sort by
// version and appends always go to the end of the bucket.
func versionKey(v int) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(v))
}

func keyVersion(k []byte) (int, bool) {
	if len(k) != 8 {
		return 0, false
	}
	v := binary.BigEndian.Uint64(k)
	return int(v), v > 0 && v <= math.MaxInt32
}
