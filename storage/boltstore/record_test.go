package boltstore

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"

	"retrace/state"
	"retrace/state/statetest"
)

func sampleRecords(tb testing.TB) [][]byte {
	tb.Helper()
	var out [][]byte
	for _, r := range sampleScript(tb) {
		b, err := encodeCheckpoint(r.parent, r.phase, r.event)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// sample is one step of a scripted session: the event, the phase
// state.Apply says it leads to, and the parent it is kept under.
type sample struct {
	parent int
	phase  state.Phase
	event  state.Event
}

func sampleScript(tb testing.TB) []sample {
	tb.Helper()
	events, _ := statetest.Script(rand.New(rand.NewPCG(21, 21)), state.New("f"), 150)
	s := state.New("f")
	var out []sample
	for i, ev := range events {
		next, err := state.Apply(s, ev)
		if err != nil {
			tb.Fatal(err)
		}
		canon, err := state.Canonical(ev)
		if err != nil {
			tb.Fatal(err)
		}
		out, s = append(out, sample{parent: i, phase: next.Phase, event: canon}), next
	}
	return out
}

// Every record of a scripted session decodes to the parent, phase, kind,
// time and event it was made from (as the script and state.Apply give
// them, not as the codec does), and encodes again to the same bytes.
func TestCheckpointRecordRoundTrip(t *testing.T) {
	samples := sampleScript(t)
	for i, b := range sampleRecords(t) {
		h, ev, err := decodeCheckpoint(b)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		want := samples[i]
		if h.parent != want.parent || h.phase != want.phase || h.kind != want.event.Kind || !h.at.Equal(want.event.At) {
			t.Fatalf("record %d: header %+v; want parent %d, %s, %s at %v", i, h, want.parent, want.phase, want.event.Kind, want.event.At)
		}
		if !reflect.DeepEqual(ev, want.event) {
			t.Fatalf("record %d: event\n got %+v\nwant %+v", i, ev, want.event)
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
// the fuzzer gets past the CRC and into the header and event decoding, in
// either record format: the event's binary body or its JSON.
func FuzzCheckpointPayload(f *testing.F) {
	for _, b := range sampleRecords(f)[:40] {
		f.Add(false, b[sealSize:])
		if js, err := jsonPayload(b); err == nil {
			f.Add(true, js)
		}
	}
	f.Fuzz(func(t *testing.T, json bool, payload []byte) {
		b := make([]byte, sealSize+len(payload))
		copy(b[sealSize:], payload)
		format := byte(checkpointFormat)
		if json {
			format = recordFormat
		}
		checkDecode(t, sealAs(b, format))
	})
}

// jsonPayload is a format-2 record's payload as format 1 has it: the
// same header, then the event as JSON.
func jsonPayload(b []byte) ([]byte, error) {
	_, ev, err := decodeCheckpoint(b)
	if err != nil {
		return nil, err
	}
	_, body, err := decodeHeader(b)
	if err != nil {
		return nil, err
	}
	js, err := state.EncodeEvent(ev)
	if err != nil {
		return nil, err
	}
	return append(bytes.Clone(b[sealSize:len(b)-len(body)]), js...), nil
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
	if err != nil {
		t.Fatalf("an accepted record, written again, does not decode: %v", err)
	}
	if h2.format != checkpointFormat {
		t.Fatalf("a record was written in format %d", h2.format)
	}
	h2.format = h.format // a record of format 1 is written again in format 2
	if h2 != h || !reflect.DeepEqual(ev2, ev) {
		t.Fatalf("round trip: %v\n%+v %+v\n%+v %+v", err, h, ev, h2, ev2)
	}
}
