package state_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
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
