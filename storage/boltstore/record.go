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
//	rest    the event: its binary body (state.AppendEventBody) in
//	        format 2, its JSON (state.EncodeEvent) in format 1
//
// Checkpoints are written in format 2 since schema 4, because loading a
// long session is mostly decoding its events and the binary body reads
// back eleven times quicker. Format 1 checkpoints, all a file of schema 3
// or older holds, stay readable. The body leaves out the event's kind and
// time, which the header carries; the JSON repeats them, and they must
// agree. A session's info record and file contents are format 1: info
// records are JSON (infoRecord), contents as blob.go describes.
const (
	recordFormat     = 1
	checkpointFormat = 2
)

const sealSize = 5

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var errShort = errors.New("record is truncated")

func seal(buf []byte) []byte { return sealAs(buf, recordFormat) }

func sealAs(buf []byte, format byte) []byte {
	buf[0] = format
	binary.LittleEndian.PutUint32(buf[1:sealSize], crc32.Checksum(buf[sealSize:], castagnoli))
	return buf
}

// unseal checks a sealed value of format 1 and returns its payload
// (aliasing b).
func unseal(b []byte) ([]byte, error) {
	format, p, err := unsealAny(b)
	if err == nil && format != recordFormat {
		return nil, fmt.Errorf("unknown record format %d", format)
	}
	return p, err
}

// unsealAny checks a sealed value of any format retrace writes.
func unsealAny(b []byte) (byte, []byte, error) {
	if len(b) < sealSize {
		return 0, nil, errShort
	}
	if b[0] != recordFormat && b[0] != checkpointFormat && b[0] != snapshotFormat {
		return 0, nil, fmt.Errorf("unknown record format %d", b[0])
	}
	if want, got := binary.LittleEndian.Uint32(b[1:sealSize]), crc32.Checksum(b[sealSize:], castagnoli); want != got {
		return 0, nil, fmt.Errorf("checksum mismatch (stored %08x, computed %08x)", want, got)
	}
	return b[0], b[sealSize:], nil
}

// header is what the tree needs to know about a checkpoint.
type header struct {
	parent int
	phase  state.Phase
	kind   state.EventKind
	at     time.Time
	format byte // the record's: how the event after the header is written
}

func encodeCheckpoint(parent int, phase state.Phase, ev state.Event) ([]byte, error) {
	ns := ev.At.UnixNano()
	if ev.At.IsZero() || time.Unix(0, ns).UTC() != ev.At.UTC() {
		return nil, fmt.Errorf("event time %v cannot be stored (zero or outside 1678-2262)", ev.At)
	}
	// The event as JSON would have kept it (invalid UTF-8 replaced, times
	// in UTC), so that what is read back is what state.Canonical gives,
	// whichever form a record has.
	canon, err := state.Canonical(ev)
	if err != nil {
		return nil, err
	}
	phaseName, kindName := phase.String(), ev.Kind.String()
	buf := make([]byte, sealSize, sealSize+3*binary.MaxVarintLen64+len(phaseName)+len(kindName)+256)
	buf = binary.AppendUvarint(buf, uint64(parent))
	buf = appendString(buf, phaseName)
	buf = appendString(buf, kindName)
	buf = binary.AppendVarint(buf, ns)
	buf = state.AppendEventBody(buf, canon)
	return sealAs(buf, checkpointFormat), nil
}

// decodeHeader checks a checkpoint record and returns its header and the
// event's bytes (aliasing b), which decodeEvent reads.
func decodeHeader(b []byte) (header, []byte, error) {
	format, p, err := unsealAny(b)
	if err != nil {
		return header{}, nil, err
	}
	if format == snapshotFormat {
		return header{}, nil, errors.New("a snapshot where a checkpoint belongs")
	}
	h := header{format: format}
	parent, n := binary.Uvarint(p)
	if n <= 0 || parent > math.MaxInt32 {
		return header{}, nil, errors.New("bad parent version")
	}
	h.parent, p = int(parent), p[n:]
	phaseName, p, err := readBytes(p)
	if err != nil {
		return header{}, nil, err
	}
	var ok bool
	if h.phase, ok = phaseByName[string(phaseName)]; !ok {
		return header{}, nil, fmt.Errorf("unknown phase %q", phaseName)
	}
	kindName, p, err := readBytes(p)
	if err != nil {
		return header{}, nil, err
	}
	if h.kind, ok = kindByName[string(kindName)]; !ok {
		return header{}, nil, fmt.Errorf("unknown event kind %q", kindName)
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
	h, body, err := decodeHeader(b)
	if err != nil {
		return header{}, state.Event{}, err
	}
	ev, err := decodeEvent(h, body)
	if err != nil {
		return header{}, state.Event{}, err
	}
	return h, ev, nil
}

// decodeEvent reads the event after a checkpoint's header, in the
// record's format.
func decodeEvent(h header, body []byte) (state.Event, error) {
	if h.format == checkpointFormat {
		ev, err := state.DecodeEventBody(h.kind, h.at, body)
		if err != nil {
			return state.Event{}, fmt.Errorf("event: %w", err)
		}
		return ev, nil
	}
	ev, err := state.DecodeEvent(body)
	if err != nil {
		return state.Event{}, fmt.Errorf("event: %w", err)
	}
	if ev.Kind != h.kind || !ev.At.Equal(h.at) {
		return state.Event{}, fmt.Errorf("event (%s at %s) disagrees with its header (%s at %s)", ev.Kind, ev.At, h.kind, h.at)
	}
	return ev, nil
}

func appendString(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

// readBytes reads a length and that many bytes (aliasing p).
func readBytes(p []byte) ([]byte, []byte, error) {
	n, k := binary.Uvarint(p)
	if k <= 0 || n > uint64(len(p)-k) {
		return nil, nil, errShort
	}
	return p[k : k+int(n)], p[k+int(n):], nil
}

// phaseByName and kindByName read a header's names. A lookup by the
// bytes themselves allocates nothing, and a session's load reads two
// names for every checkpoint.
var phaseByName, kindByName = func() (map[string]state.Phase, map[string]state.EventKind) {
	phases, kinds := map[string]state.Phase{}, map[string]state.EventKind{}
	for i := range 256 {
		if p, err := state.ParsePhase(state.Phase(i).String()); err == nil && p == state.Phase(i) {
			phases[p.String()] = p
		}
		if k, err := state.ParseEventKind(state.EventKind(i).String()); err == nil && k == state.EventKind(i) {
			kinds[k.String()] = k
		}
	}
	return phases, kinds
}()

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
