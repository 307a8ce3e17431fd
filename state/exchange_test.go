package state_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"retrace/state"
)

// The open calls a state finds at once are those its history says, in
// whatever order the answers come (the agent's, in the order asked, or
// any other), through a Builder and through Apply; and the states a
// Builder handed out stay as they were while its tool log grows in place.
func TestOpenCallsInAnyOrderOfAnswers(t *testing.T) {
	ids := callIDs("x", 6)
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 5))
		order := rng.Perm(len(ids))
		if seed == 0 {
			order = []int{0, 1, 2, 3, 4, 5} // the agent's order
		}
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			base := apply(t, state.New("s1"), userMsg("read"),
				state.Event{Kind: state.PlanSet, At: t0, Plan: []state.Step{{Text: "read"}}})
			bd := state.NewBuilder(base)
			pure := base
			inOrder := true // the answers so far came in the order asked
			var handed []state.State
			var printed []string
			step := func(ev state.Event) {
				t.Helper()
				if err := bd.Apply(ev); err != nil {
					t.Fatal(err)
				}
				pure = apply(t, pure, ev)
				s := bd.State()
				if !reflect.DeepEqual(s, pure) {
					t.Fatalf("after %s the Builder's state is not Apply's", ev.Kind)
				}
				if recorded, read := state.Exchange(s); recorded != read {
					t.Fatalf("after %s the state records its open calls at %v, its history says %v", ev.Kind, recorded, read)
				}
				if recorded, _ := state.Exchange(s); (recorded == [2]int{}) != (!inOrder || len(s.OpenCalls()) == 0) {
					t.Fatalf("after %s the record is %v with the answers in order %v", ev.Kind, recorded, inOrder)
				}
				want := state.ReadOpenCalls(s.History)
				if got := s.OpenCalls(); !reflect.DeepEqual(got, want) {
					t.Fatalf("after %s: open calls %v, the history says %v", ev.Kind, got, want)
				}
				again := state.State{SessionID: s.SessionID, Phase: s.Phase, History: s.History, Memory: s.Memory}
				if got := again.OpenCalls(); !reflect.DeepEqual(got, want) {
					t.Fatalf("after %s, a state put together by hand: open calls %v, want %v", ev.Kind, got, want)
				}
				handed = append(handed, s)
				printed = append(printed, fmt.Sprintf("%#v", s.Memory.ToolCalls))
			}
			step(assistantCalls(ids...))
			for i, k := range order {
				step(tool(state.ToolStarted, ids[k], t0))
				fin := tool(state.ToolFinished, ids[k], t0)
				fin.Tool.Result = "result of " + ids[k]
				inOrder = inOrder && k == i
				step(fin)
			}
			s := bd.State()
			if len(s.OpenCalls()) != 0 || len(s.Memory.ToolCalls) != len(ids) {
				t.Fatalf("open %v, %d calls in the log", s.OpenCalls(), len(s.Memory.ToolCalls))
			}
			for i, c := range s.Memory.ToolCalls {
				if want := ids[order[i]]; c.ID != want || c.Result != "result of "+want || !c.Finished() || c.StartedAt.IsZero() {
					t.Fatalf("log entry %d: %+v, want %s started and finished with its result", i, c, want)
				}
			}
			for i, h := range handed {
				if got := fmt.Sprintf("%#v", h.Memory.ToolCalls); got != printed[i] {
					t.Fatalf("the state handed out at step %d changed: %s, was %s", i, got, printed[i])
				}
			}
		})
	}
}

// OpenCallEntry is the entry of the open call, never an earlier reply's
// call of the same id (servers that number their calls per reply send
// call_0 every time), and none before the call asked or started.
func TestOpenCallEntryIsTheOpenCallsOwn(t *testing.T) {
	s := apply(t, state.New("s1"), userMsg("read"),
		state.Event{Kind: state.PlanSet, At: t0, Plan: []state.Step{{Text: "read"}}},
		assistantCalls("call_0"), tool(state.ToolStarted, "call_0", t0), assistantFinish("call_0"),
		assistantCalls("call_0", "call_1"))
	if c, ok := s.OpenCallEntry("call_0"); ok {
		t.Fatalf("before it started, the open call_0 has the entry %+v", c)
	}
	s = apply(t, s, tool(state.ToolStarted, "call_0", t0.Add(time.Second)))
	if c, ok := s.OpenCallEntry("call_0"); !ok || c.Finished() || !c.StartedAt.Equal(t0.Add(time.Second)) {
		t.Fatalf("the open call_0's entry: %+v, %v", c, ok)
	}
	if _, ok := s.OpenCallEntry("call_1"); ok {
		t.Fatal("call_1 has an entry before it started")
	}
	s = apply(t, s, assistantFinish("call_0"))
	if c, ok := s.OpenCallEntry("call_0"); ok {
		t.Fatalf("answered, call_0 still has the open entry %+v", c)
	}
}
