package session

import (
	"context"
	"testing"
	"time"

	"retrace/agent/llm"
	"retrace/state"
)

func TestStreamMergesDeltasAndKeepsEverythingElse(t *testing.T) {
	s := newStream()
	s.publish(Delta{Phase: state.Planning, Kind: llm.Content, Text: "Hel"})
	s.publish(Delta{Phase: state.Planning, Kind: llm.Content, Text: "lo"})
	s.publish(Delta{Phase: state.Planning, Kind: llm.Reasoning, Text: "hmm"})
	s.publish(StateChanged{State: state.State{Version: 1}})
	s.publish(StateChanged{State: state.State{Version: 2}})
	s.publish(Delta{Phase: state.Planning, Kind: llm.Content, Text: ", "})
	s.publish(Delta{Phase: state.Planning, Kind: llm.Content, Text: "world"})
	s.publish(Notice{Text: "n"})
	s.close()
	s.publish(Notice{Text: "after close: dropped"})

	want := []Event{
		Delta{Phase: state.Planning, Kind: llm.Content, Text: "Hello"},
		Delta{Phase: state.Planning, Kind: llm.Reasoning, Text: "hmm"},
		StateChanged{State: state.State{Version: 1}},
		StateChanged{State: state.State{Version: 2}},
		Delta{Phase: state.Planning, Kind: llm.Content, Text: ", world"},
		Notice{Text: "n"},
	}
	for i, w := range want {
		got, ok := s.next(context.Background())
		if !ok {
			t.Fatalf("event %d: the stream ended early", i)
		}
		if g, isState := got.(StateChanged); isState {
			if w, _ := w.(StateChanged); g.State.Version != w.State.Version {
				t.Fatalf("event %d: %+v, want %+v", i, got, w)
			}
			continue
		}
		if got != w {
			t.Fatalf("event %d: %+v, want %+v", i, got, w)
		}
	}
	if ev, ok := s.next(context.Background()); ok {
		t.Fatalf("after the last event and close: %+v", ev)
	}
}

func TestStreamWakesAWaitingReader(t *testing.T) {
	s := newStream()
	got := make(chan Event, 1)
	go func() {
		ev, _ := s.next(context.Background())
		got <- ev
	}()
	s.publish(Notice{Text: "wake up"})
	select {
	case ev := <-got:
		if ev != (Notice{Text: "wake up"}) {
			t.Fatalf("read %+v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a waiting reader was not woken")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok := s.next(ctx); ok {
		t.Fatal("next on an empty stream with an ended context must give up")
	}
}
