package boltstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"retrace/state"
)

// The record layout, pinned byte by byte from the comment in record.go.
// The expected bytes are written out here; only the CRC-32C is computed,
// with the standard library's Castagnoli table (itself checked against the
// polynomial's published check value).

var castagnoliSpec = crc32.MakeTable(crc32.Castagnoli)

// sealed builds a record as record.go describes it: format 1, the CRC-32C
// of the payload, little-endian, then the payload.
func sealed(payload []byte) []byte { return sealedAs(1, payload) }

func sealedAs(format byte, payload []byte) []byte {
	out := []byte{format, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(out[1:], crc32.Checksum(payload, castagnoliSpec))
	return append(out, payload...)
}

// hi is a user message at -65 ns (before 1970: the time is a signed
// varint), as EncodeEvent writes it.
const hiJSON = `{"kind":"user_message","at":"1969-12-31T23:59:59.999999935Z","messages":[{"role":"user","content":"hi"}]}`

func hiEvent() state.Event {
	return state.Event{Kind: state.UserMessage, At: time.Unix(0, -65).UTC(),
		Messages: []state.Message{{Role: state.RoleUser, Content: "hi"}}}
}

// hiHeader is the header of hi kept under parent v300, in phase planning.
func hiHeader() []byte {
	p := []byte{0xAC, 0x02}          // uvarint 300
	p = append(p, 8)                 // len("planning")
	p = append(p, "planning"...)     //
	p = append(p, 12)                // len("user_message")
	p = append(p, "user_message"...) //
	return append(p, 0x81, 0x01)     // varint -65: zigzag 129
}

// hiPayload is hi's format-1 payload: the header, then the event as JSON.
func hiPayload() []byte { return append(hiHeader(), hiJSON...) }

// hiBody is hi's binary body (state.AppendEventBody): its messages.
var hiBody = []byte{
	1, 1, // field 1 (messages), a list of one
	10,                       // the message, 10 bytes:
	1, 4, 'u', 's', 'e', 'r', // field 1 (role), 4 bytes
	2, 2, 'h', 'i', // field 2 (content), 2 bytes
}

func TestCastagnoliCheckValue(t *testing.T) {
	// CRC-32C of "123456789" is 0xE3069283 (RFC 3720, B.4).
	if got := crc32.Checksum([]byte("123456789"), castagnoliSpec); got != 0xE3069283 {
		t.Fatalf("CRC-32C check value %08x", got)
	}
}

func TestCheckpointRecordLayout(t *testing.T) {
	want := sealedAs(2, append(hiHeader(), hiBody...))
	got, err := encodeCheckpoint(300, state.Planning, hiEvent())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("record\n got %q\nwant %q", got, want)
	}
	wantH := header{parent: 300, phase: state.Planning, kind: state.UserMessage, at: time.Unix(0, -65).UTC(), format: 2}
	checkHi(t, want, wantH, hiBody)
}

// A format-1 record, the event as JSON, is what every file of schema 3
// or older holds: it reads back as the same event.
func TestFormat1CheckpointRecordLayout(t *testing.T) {
	wantH := header{parent: 300, phase: state.Planning, kind: state.UserMessage, at: time.Unix(0, -65).UTC(), format: 1}
	checkHi(t, sealed(hiPayload()), wantH, []byte(hiJSON))
}

func checkHi(t *testing.T, rec []byte, wantH header, wantBody []byte) {
	t.Helper()
	h, ev, err := decodeCheckpoint(rec)
	if err != nil {
		t.Fatal(err)
	}
	if h != wantH {
		t.Fatalf("header %+v, want %+v", h, wantH)
	}
	if !reflect.DeepEqual(ev, hiEvent()) {
		t.Fatalf("event %+v, want %+v", ev, hiEvent())
	}
	h2, body, err := decodeHeader(rec)
	if err != nil || h2 != wantH || !bytes.Equal(body, wantBody) {
		t.Fatalf("decodeHeader: %+v %q %v", h2, body, err)
	}
}

func TestInfoRecordLayout(t *testing.T) {
	at := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	js := `{"title":"t","model":"m","workspace":"/w","created_at":"2024-01-02T03:04:05Z","updated_at":"2024-01-02T03:04:05Z","head":2,"versions":3,"phase":"done"}`
	got, err := encodeInfo(infoRecord{Title: "t", Model: "m", Workspace: "/w", CreatedAt: at, UpdatedAt: at, Head: 2, Versions: 3, Phase: state.Done})
	if err != nil {
		t.Fatal(err)
	}
	if want := sealed([]byte(js)); !bytes.Equal(got, want) {
		t.Fatalf("info record\n got %q\nwant %q", got, want)
	}
}

func TestUnseal(t *testing.T) {
	for _, c := range []struct {
		name    string
		b       []byte
		payload string
		err     string
	}{
		{"nothing", nil, "", "truncated"},
		{"four bytes", []byte{1, 0, 0, 0}, "", "truncated"},
		// CRC-32C of nothing is 0: a seal with an empty payload is whole.
		{"an empty payload", []byte{1, 0, 0, 0, 0}, "", ""},
		{"format 0", []byte{0, 0, 0, 0, 0}, "", "unknown record format 0"},
		{"format 2", append([]byte{2}, sealed([]byte("x"))[1:]...), "", "unknown record format 2"},
		{"a payload", sealed([]byte("abc")), "abc", ""},
		{"a payload byte changed", append(sealed([]byte("abc"))[:7], 'd'), "", "checksum mismatch"},
		{"the checksum changed", func() []byte { b := sealed([]byte("abc")); b[4] ^= 0x80; return b }(), "", "checksum mismatch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := unseal(c.b)
			if c.err == "" {
				if err != nil || string(p) != c.payload {
					t.Fatalf("got %q, %v; want %q", p, err, c.payload)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("got %q, %v; want an error saying %q", p, err, c.err)
			}
		})
	}
}

// payload builds a checkpoint payload from its parts, uvarint parent,
// strings with their lengths, and raw bytes for the rest.
func payload(parent uint64, phase, kind string, rest ...[]byte) []byte {
	p := binary.AppendUvarint(nil, parent)
	p = append(append(p, byte(len(phase))), phase...)
	p = append(append(p, byte(len(kind))), kind...)
	for _, r := range rest {
		p = append(p, r...)
	}
	return p
}

func TestDecodeHeaderEdges(t *testing.T) {
	ev := []byte(hiJSON)
	minus65 := []byte{0x81, 0x01}
	for _, c := range []struct {
		name   string
		p      []byte
		parent int
		err    string
	}{
		{"parent 0", payload(0, "planning", "user_message", minus65, ev), 0, ""},
		{"the largest parent, 2^31-1", payload(math.MaxInt32, "planning", "user_message", minus65, ev), math.MaxInt32, ""},
		{"parent 2^31", payload(math.MaxInt32+1, "planning", "user_message", minus65, ev), 0, "bad parent version"},
		{"an empty payload", nil, 0, "bad parent version"},
		{"a parent cut short", []byte{0x80}, 0, "bad parent version"},
		{"no phase", []byte{0x03}, 0, "truncated"},
		{"a phase longer than the rest", append([]byte{0x03, 9}, "planning"...), 0, "truncated"},
		{"an unknown phase", payload(3, "sleeping", "user_message", minus65, ev), 0, "sleeping"},
		{"no kind", payload(3, "planning", "")[:10], 0, "truncated"},
		{"an unknown kind", payload(3, "planning", "yawned", minus65, ev), 0, "yawned"},
		{"no time", payload(3, "planning", "user_message"), 0, "bad event time"},
		{"a time cut short", payload(3, "planning", "user_message", []byte{0x81}), 0, "bad event time"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, js, err := decodeHeader(sealed(c.p))
			if c.err == "" {
				if err != nil || h.parent != c.parent || h.phase != state.Planning || h.kind != state.UserMessage ||
					!h.at.Equal(time.Unix(0, -65)) || string(js) != hiJSON {
					t.Fatalf("got %+v %q, %v", h, js, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("got %+v, %v; want an error saying %q", h, err, c.err)
			}
		})
	}
}

func TestReadBytes(t *testing.T) {
	for _, c := range []struct {
		name      string
		p         []byte
		s, rest   string
		truncated bool
	}{
		{"nothing", nil, "", "", true},
		{"empty string, nothing after", []byte{0}, "", "", false},
		{"the string fills the rest", []byte{3, 'a', 'b', 'c'}, "abc", "", false},
		{"bytes after it", []byte{2, 'a', 'b', 'c'}, "ab", "c", false},
		{"one byte short", []byte{4, 'a', 'b', 'c'}, "", "", true},
		{"a length cut short", []byte{0x80}, "", "", true},
		{"a length past 2^63", []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 'a'}, "", "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, rest, err := readBytes(c.p)
			if c.truncated {
				if !errors.Is(err, errShort) {
					t.Fatalf("got %q %q, %v; want errShort", s, rest, err)
				}
				return
			}
			if err != nil || string(s) != c.s || string(rest) != c.rest {
				t.Fatalf("got %q %q, %v; want %q %q", s, rest, err, c.s, c.rest)
			}
		})
	}
}

// A checkpoint's event must agree with its header on kind and time.
func TestDecodeCheckpointDisagreement(t *testing.T) {
	minus65, minus64 := []byte{0x81, 0x01}, []byte{0x7F}
	for _, c := range []struct {
		name string
		p    []byte
		ok   bool
	}{
		{"agreeing", payload(0, "planning", "user_message", minus65, []byte(hiJSON)), true},
		{"another kind", payload(0, "done", "answered", minus65, []byte(hiJSON)), false},
		{"another time", payload(0, "planning", "user_message", minus64, []byte(hiJSON)), false},
		{"no event", payload(0, "planning", "user_message", minus65), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := decodeCheckpoint(sealed(c.p))
			if c.ok != (err == nil) {
				t.Fatalf("got %v", err)
			}
		})
	}
}

// Event times are kept as Unix nanoseconds in an int64: 1677-09-21 to
// 2262-04-11, both ends included; outside, and the zero time, are refused.
func TestEventTimeRange(t *testing.T) {
	oldest := time.Date(1677, 9, 21, 0, 12, 43, 145224192, time.UTC)  // -2^63 ns
	newest := time.Date(2262, 4, 11, 23, 47, 16, 854775807, time.UTC) // 2^63-1 ns
	for _, c := range []struct {
		at time.Time
		ok bool
	}{
		{oldest, true},
		{newest, true},
		{oldest.Add(-1), false},
		{newest.Add(1), false},
		{time.Time{}, false},
		{time.Unix(0, 0), true},
	} {
		ev := hiEvent()
		ev.At = c.at
		b, err := encodeCheckpoint(0, state.Planning, ev)
		if c.ok != (err == nil) {
			t.Fatalf("%v: %v", c.at, err)
		}
		if err != nil {
			continue
		}
		h, _, err := decodeCheckpoint(b)
		if err != nil || !h.at.Equal(c.at) {
			t.Fatalf("%v reads back as %v, %v", c.at, h.at, err)
		}
	}
}

func TestDecodeInfoBounds(t *testing.T) {
	for _, c := range []struct {
		head, versions int
		ok             bool
	}{
		{0, 0, true},
		{3, 3, true},
		{0, 3, true},
		{4, 3, false},
		{-1, 3, false},
		{-1, -1, false},
		{0, -1, false},
	} {
		b, err := encodeInfo(infoRecord{Head: c.head, Versions: c.versions})
		if err != nil {
			t.Fatal(err)
		}
		r, err := decodeInfo(b)
		if c.ok != (err == nil) {
			t.Fatalf("head %d of %d versions: %v", c.head, c.versions, err)
		}
		if err == nil && (r.Head != c.head || r.Versions != c.versions) {
			t.Fatalf("head %d of %d read back as %d of %d", c.head, c.versions, r.Head, r.Versions)
		}
	}
	if _, err := decodeInfo(sealed([]byte("{"))); err == nil {
		t.Fatal("broken JSON accepted")
	}
}

func TestVersionKeys(t *testing.T) {
	if got := versionKey(258); !bytes.Equal(got, []byte{0, 0, 0, 0, 0, 0, 1, 2}) {
		t.Fatalf("versionKey(258) = %x", got)
	}
	for _, c := range []struct {
		k  []byte
		v  int
		ok bool
	}{
		{[]byte{0, 0, 0, 0, 0, 0, 0, 0}, 0, false},
		{[]byte{0, 0, 0, 0, 0, 0, 0, 1}, 1, true},
		{[]byte{0, 0, 0, 0, 0x7F, 0xFF, 0xFF, 0xFF}, math.MaxInt32, true},
		{[]byte{0, 0, 0, 0, 0x80, 0, 0, 0}, 0, false},
		{[]byte{0, 0, 0, 0, 0, 0, 1}, 0, false},
		{[]byte{0, 0, 0, 0, 0, 0, 0, 0, 1}, 0, false},
	} {
		v, ok := keyVersion(c.k)
		if ok != c.ok || (ok && v != c.v) {
			t.Errorf("keyVersion(%x) = %d, %v; want %d, %v", c.k, v, ok, c.v, c.ok)
		}
	}
}
