package boltstore

import (
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"reflect"
	"testing"

	"retrace/state"
	"retrace/state/statetest"
)

func sampleRecords(tb testing.TB) [][]byte {
	tb.Helper()
	events, _ := statetest.Script(rand.New(rand.NewPCG(21, 21)), state.New("f"), 150)
	s := state.New("f")
	var out [][]byte
	for i, ev := range events {
		next, err := state.Apply(s, ev)
		if err != nil {
			tb.Fatal(err)
		}
		b, err := encodeCheckpoint(i, next.Phase, ev)
		if err != nil {
			tb.Fatal(err)
		}
		out, s = append(out, b), next
	}
	return out
}

func TestCheckpointRecordRoundTrip(t *testing.T) {
	for i, b := range sampleRecords(t) {
		h, ev, err := decodeCheckpoint(b)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		again, err := encodeCheckpoint(h.parent, h.phase, ev)
		if err != nil || !reflect.DeepEqual(again, b) {
			t.Fatalf("record %d does not re-encode to the same bytes: %v", i, err)
		}
	}
}

// Every single flipped bit in a record is caught by its checksum.
func TestEveryFlippedBitIsDetected(t *testing.T) {
	for i, b := range sampleRecords(t)[:20] {
		for bit := 0; bit < len(b)*8; bit++ {
			c := append([]byte(nil), b...)
			c[bit/8] ^= 1 << (bit % 8)
			if _, _, err := decodeCheckpoint(c); err == nil {
				t.Fatalf("record %d: flipping bit %d went unnoticed", i, bit)
			}
		}
	}
}

// FuzzDecodeCheckpoint feeds arbitrary bytes to the record decoder: it
// must never panic, and what it accepts must re-encode to the same bytes.
func FuzzDecodeCheckpoint(f *testing.F) {
	for _, b := range sampleRecords(f)[:40] {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecode(t, b)
	})
}

// FuzzCheckpointPayload seals arbitrary payloads with a valid checksum, so
// the fuzzer gets past the CRC and into the header and event decoding.
func FuzzCheckpointPayload(f *testing.F) {
	for _, b := range sampleRecords(f)[:40] {
		f.Add(b[sealSize:])
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		b := make([]byte, sealSize+len(payload))
		copy(b[sealSize:], payload)
		b[0] = recordFormat
		binary.LittleEndian.PutUint32(b[1:], crc32.Checksum(payload, castagnoli))
		checkDecode(t, b)
	})
}

func checkDecode(t *testing.T, b []byte) {
	h, ev, err := decodeCheckpoint(b)
	if err != nil {
		return
	}
	again, err := encodeCheckpoint(h.parent, h.phase, ev)
	if err != nil {
		t.Fatalf("accepted record does not encode: %v", err)
	}
	h2, ev2, err := decodeCheckpoint(again)
	if err != nil || h2 != h || !reflect.DeepEqual(ev2, ev) {
		t.Fatalf("round trip: %v\n%+v %+v\n%+v %+v", err, h, ev, h2, ev2)
	}
}
