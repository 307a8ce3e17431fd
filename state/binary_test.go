package state_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"retrace/state"
	"retrace/state/statetest"
)

// roundTrip writes ev's binary body and reads it back under ev's kind
// and time.
func roundTrip(t *testing.T, ev state.Event) state.Event {
	t.Helper()
	back, err := state.DecodeEventBody(ev.Kind, ev.At, state.AppendEventBody(nil, ev))
	if err != nil {
		t.Fatalf("%s: %v", ev.Kind, err)
	}
	return back
}

// The binary body of a canonical event reads back as that event, for
// every event the scripts make.
func TestEventBodyRoundTrip(t *testing.T) {
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 7))
		s := state.New("abc")
		for range 200 {
			ev := statetest.NextEvent(rng, s)
			ev.At = time.Date(2026, 11, 25, 10, 0, 0, rng.IntN(1e9), time.UTC)
			canon, err := state.Canonical(ev)
			if err != nil {
				t.Fatal(err)
			}
			if back := roundTrip(t, canon); !reflect.DeepEqual(back, canon) {
				t.Fatalf("seed %d, %s: read back\n%+v\nwant\n%+v", seed, ev.Kind, back, canon)
			}
			if s, err = state.Apply(s, canon); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Every field an event can hold survives the binary body: a field added
// to Event, or to any struct inside it, without a tag of its own fails
// here, because this fills every field there is.
func TestEventBodyCarriesEveryField(t *testing.T) {
	var ev state.Event
	fill(reflect.ValueOf(&ev).Elem(), "ev")
	ev.Kind = state.ToolFinished
	ev.Plan[0].Status, ev.Plan[1].Status, ev.Status = state.StepDone, state.StepActive, state.StepFailed
	canon, err := state.Canonical(ev)
	if err != nil {
		t.Fatal(err)
	}
	if canon.Blobs != nil {
		t.Fatal("Blobs reached the canonical event")
	}
	if back := roundTrip(t, canon); !reflect.DeepEqual(back, canon) {
		t.Fatalf("read back\n%+v\nwant\n%+v", back, canon)
	}
}

// fill sets every field under v to a value other than its zero, each
// string naming its path so that two fields swapped show.
func fill(v reflect.Value, path string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(path)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(len(path)) * 1000)
	case reflect.Uint8, reflect.Uint32:
		v.SetUint(uint64(len(path)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), path)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte(path))
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, len(path), time.UTC)))
			return
		}
		for i := range v.NumField() {
			fill(v.Field(i), path+"."+v.Type().Field(i).Name)
		}
	default:
		panic(fmt.Sprintf("fill: %s is a %s", path, v.Kind()))
	}
}

// A damaged body is an error, never a panic, and one that decodes is
// exactly a canonical event: what JSON would have kept.
func FuzzEventBody(f *testing.F) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := state.New("abc")
	for range 40 {
		ev := statetest.NextEvent(rng, s)
		ev.At = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
		canon, err := state.Canonical(ev)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(canon.Kind), state.AppendEventBody(nil, canon))
		s, _ = state.Apply(s, canon)
	}
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	f.Add(uint8(state.Imported), state.AppendEventBody(nil, state.Event{Kind: state.Imported, At: at, Text: "copied from theirs.db"}))
	f.Fuzz(func(t *testing.T, kind uint8, body []byte) {
		ev, err := state.DecodeEventBody(state.EventKind(kind), at, body)
		if err != nil {
			return
		}
		canon, err := state.Canonical(ev)
		if err != nil {
			t.Fatalf("decoded %+v, which JSON cannot write: %v", ev, err)
		}
		if !reflect.DeepEqual(canon, ev) {
			t.Fatalf("decoded %+v, not canonical: %+v", ev, canon)
		}
		if again := roundTrip(t, ev); !reflect.DeepEqual(again, ev) {
			t.Fatalf("decoded %+v, written again and read back as %+v", ev, again)
		}
	})
}

// BenchmarkDecodeEvent reads a chat message's event from its JSON and
// from its binary body: a session's load is one of these per checkpoint.
//
//	go test ./state -run '^$' -bench DecodeEvent
func BenchmarkDecodeEvent(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	text := make([]byte, 300)
	for i := range text {
		text[i] = "abcdefghij klmnopqrst "[rng.IntN(22)]
	}
	ev := state.Event{Kind: state.Answered, At: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC),
		Messages: []state.Message{{Role: state.RoleAssistant, Content: string(text)}}, Usage: state.Usage{PromptTokens: 1200, CompletionTokens: 80}}
	js, err := state.EncodeEvent(ev)
	if err != nil {
		b.Fatal(err)
	}
	body := state.AppendEventBody(nil, ev)
	b.Run("json", func(b *testing.B) {
		for b.Loop() {
			if _, err := state.DecodeEvent(js); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("binary", func(b *testing.B) {
		for b.Loop() {
			if _, err := state.DecodeEventBody(ev.Kind, ev.At, body); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Every refusal of a damaged body, and the edges that are still accepted.
func TestEventBodyRefuses(t *testing.T) {
	uv := func(n uint64) []byte { return binary.AppendUvarint(nil, n) }
	sv := func(n int64) []byte { return binary.AppendVarint(nil, n) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	str := func(tag byte, s string) []byte { return cat([]byte{tag}, uv(uint64(len(s))), []byte(s)) }
	sub := func(tag byte, body []byte) []byte { return cat([]byte{tag}, uv(uint64(len(body))), body) }
	// A message list of one message with the given body (field 1 of an event).
	message := func(body []byte) []byte { return cat([]byte{1, 1}, uv(uint64(len(body))), body) }
	// A tool call (field 6 of an event) with the given body.
	tool := func(body []byte) []byte { return sub(6, body) }
	// A file change list of one change whose after image has the given body
	// (field 13 of an event; field 3 of a change).
	after := func(img []byte) []byte {
		change := sub(3, img)
		return cat([]byte{13, 1}, uv(uint64(len(change))), change)
	}
	at := func(sec int64, ns uint64) []byte { return cat([]byte{7}, sv(sec), uv(ns)) } // StartedAt
	for _, c := range []struct {
		name string
		kind state.EventKind
		body []byte
		says string // empty: accepted
	}{
		{"nothing", state.UserMessage, nil, ""},
		{"kind 0", 0, nil, "unknown kind 0"},
		{"a kind past the last", 200, nil, "unknown kind 200"},
		{"the kind after the last", afterLastKind(), nil, fmt.Sprintf("unknown kind %d", afterLastKind())},
		{"the last kind", afterLastKind() - 1, nil, ""},
		{"fields out of order", state.NoteSet, cat(str(8, "value"), str(7, "key")), "field 7 after field 8"},
		{"a field twice", state.PlanSet, cat(str(2, "a"), str(2, "b")), "field 2 after field 2"},
		{"field 0", state.PlanSet, []byte{0}, "field 0 after field 0"},
		{"an unknown field", state.PlanSet, []byte{200}, "unknown field 200"},
		{"a length cut short", state.PlanSet, []byte{2, 0x80}, "truncated"},
		{"a string past the end", state.PlanSet, []byte{2, 5, 'a'}, "truncated"},
		{"a string not UTF-8", state.PlanSet, str(2, "\xff"), "not valid UTF-8"},
		{"a role not UTF-8", state.UserMessage, message(str(1, "\xff")), "not valid UTF-8"},
		{"a role of our own", state.UserMessage, message(str(1, "critic")), ""},
		{"an empty list", state.UserMessage, []byte{1, 0}, "list of 0 elements in 0 bytes"},
		{"a list longer than its bytes", state.UserMessage, []byte{1, 5, 0}, "list of 5 elements in 1 bytes"},
		{"a list of one empty message", state.UserMessage, []byte{1, 1, 0}, ""},
		{"an unknown field in a message", state.UserMessage, message([]byte{9}), "unknown field 9"},
		{"an int cut short", state.StepStatus, []byte{4, 0x80}, "truncated"},
		{"an unknown step status", state.StepStatus, str(5, "paused"), "unknown step status"},
		{"a time cut short", state.ToolStarted, tool([]byte{7, 0x80}), "truncated"},
		{"nanoseconds cut short", state.ToolStarted, tool(cat([]byte{7}, sv(1))), "truncated"},
		{"a billion nanoseconds", state.ToolStarted, tool(at(1, 1e9)), "nanoseconds 1000000000 out of range"},
		{"the last nanosecond", state.ToolStarted, tool(at(1, 1e9-1)), ""},
		{"a time in year 10000", state.ToolStarted, tool(at(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), 0)), "time in year 10000"},
		{"the last second of 9999", state.ToolStarted, tool(at(time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix(), 0)), ""},
		{"a time before year 0", state.ToolStarted, tool(at(time.Date(-1, 12, 31, 23, 59, 59, 0, time.UTC).Unix(), 0)), "time in year -1"},
		{"year 0", state.ToolStarted, tool(at(time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), 0)), ""},
		{"a mode past 32 bits", state.ToolFinished, after(cat([]byte{3}, sv(1<<32))), "mode 4294967296 out of range"},
		{"the largest mode", state.ToolFinished, after(cat([]byte{3}, sv(1<<32-1))), ""},
		{"a negative mode", state.ToolFinished, after(cat([]byte{3}, sv(-1))), "mode -1 out of range"},
		{"a mode of 0 written out", state.ToolFinished, after(cat([]byte{3}, sv(0))), ""},
		{"an image field unknown", state.ToolFinished, after([]byte{9}), "unknown field 9"},
		{"a struct past the end", state.ToolStarted, []byte{6, 9, 1}, "truncated"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev, err := state.DecodeEventBody(c.kind, time.Unix(0, 0), c.body)
			if c.says == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if again := roundTrip(t, ev); !reflect.DeepEqual(again, ev) {
					t.Fatalf("read back %+v, then %+v", ev, again)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("got %+v, %v; want an error saying %q", ev, err, c.says)
			}
			var ee *state.EventError
			if !errors.As(err, &ee) {
				t.Fatalf("%v is not an *EventError", err)
			}
		})
	}
}

// afterLastKind is the first kind past the ones there are.
func afterLastKind() state.EventKind {
	k := state.EventKind(1)
	for ; k < 255; k++ {
		if _, err := state.ParseEventKind(k.String()); err != nil {
			break
		}
	}
	return k
}
