package state_test

import (
	"fmt"
	"testing"
	"time"

	"retrace/state"
)

// BenchmarkCallsInOneReply folds what a reply of n tool calls brings, the
// way an agent moves a session on: each call started and finished by an
// event of its own, the state taken after every event (as a store's
// cursor hands it out) and asked for its open calls before each call (as
// the agent does). The session's tool log already holds earlier calls.
// It reports the time per call (ns/call), which stays the same whatever n
// and however many calls came before, when a call costs what it brings.
//
//	go test ./state -run '^$' -bench CallsInOneReply
func BenchmarkCallsInOneReply(b *testing.B) {
	for _, c := range []struct{ earlier, n int }{{0, 100}, {0, 1000}, {0, 4000}, {10000, 100}} {
		b.Run(fmt.Sprintf("earlier=%d/calls=%d", c.earlier, c.n), func(b *testing.B) {
			base := withEarlierCalls(b, c.earlier)
			reply := assistantCalls(callIDs("now", c.n)...)
			for b.Loop() {
				bd := state.NewBuilder(base)
				step(b, bd, reply)
				s := bd.State()
				for range c.n {
					id := s.OpenCalls()[0].ID
					step(b, bd, tool(state.ToolStarted, id, t0))
					step(b, bd, finishedOK(id))
					s = bd.State()
				}
				if len(s.OpenCalls()) != 0 {
					b.Fatal("calls left open")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*c.n), "ns/call")
		})
	}
}

// withEarlierCalls is a session executing a plan, whose tool log holds n
// finished calls, made a hundred to a reply.
func withEarlierCalls(b *testing.B, n int) state.State {
	bd := state.NewBuilder(state.New("s1"))
	step(b, bd, userMsg("fix the build"))
	step(b, bd, state.Event{Kind: state.PlanSet, At: t0, Plan: []state.Step{{Text: "read everything"}}})
	for r := 0; r*100 < n; r++ {
		ids := callIDs(fmt.Sprintf("r%d", r), min(100, n-r*100))
		step(b, bd, assistantCalls(ids...))
		for _, id := range ids {
			step(b, bd, tool(state.ToolStarted, id, t0))
			step(b, bd, finishedOK(id))
		}
	}
	return bd.State()
}

func step(b *testing.B, bd *state.Builder, ev state.Event) {
	if err := bd.Apply(ev); err != nil {
		b.Fatalf("%s: %v", ev.Kind, err)
	}
	_ = bd.State()
}

func finishedOK(id string) state.Event {
	ev := tool(state.ToolFinished, id, t0.Add(time.Millisecond))
	ev.Tool.Result = "package main\n"
	return ev
}

func callIDs(prefix string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("call_%s_%d", prefix, i)
	}
	return ids
}
