package state_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"retrace/state"
	"retrace/state/statetest"
)

// Random sessions, and at every step of them events that must be refused:
// one that breaks a rule of what events carry (statetest.Invalid says
// which, and the reason Apply must give), and one of a kind the
// specification does not allow in the phase. Each is refused with the
// right error and changes nothing; then the session goes on with a valid
// event.
func TestRandomInvalidEventsAreRefused(t *testing.T) {
	type pair struct {
		p state.Phase
		k state.EventKind
	}
	legal := map[pair]bool{}
	for _, tr := range state.SpecMachine {
		legal[pair{tr.From, tr.Event}] = true
	}
	rules := map[string]int{}
	illegal := 0
	for seed := range uint64(12) {
		rng := rand.New(rand.NewPCG(seed, 11))
		s := state.New("r")
		for step := range 150 {
			// Whether refusing changed the given state's memory is checked
			// every few steps: printing it is most of this test's cost.
			var before string
			if step%10 == 0 {
				before = fmt.Sprintf("%#v", s)
			}
			where := fmt.Sprintf("seed %d step %d (%s)", seed, step, s.Phase)

			ev, want := statetest.Invalid(rng, s)
			rules[want.Rule]++
			next, err := state.Apply(s, ev)
			var ee *state.EventError
			switch {
			case !errors.As(err, &ee) || !errors.Is(err, state.ErrInvalidEvent):
				t.Fatalf("%s: %s: got %v, want an *EventError", where, want.Rule, err)
			case ee.Event != want.Kind || ee.Reason != want.Reason:
				t.Fatalf("%s: %s: got %q for %v, want %q for %v", where, want.Rule, ee.Reason, ee.Event, want.Reason, want.Kind)
			case !reflect.DeepEqual(next, s):
				t.Fatalf("%s: %s: refused, but Apply returned a changed state", where, want.Rule)
			}
			b := state.NewBuilder(s)
			if err := b.Apply(ev); !errors.As(err, &ee) || ee.Reason != want.Reason || !reflect.DeepEqual(b.State(), s) {
				t.Fatalf("%s: %s: the builder answered %v or changed", where, want.Rule, err)
			}

			bad := statetest.NextEvent(rng, s)
			bad.Kind = state.EventKind(rng.IntN(len(state.SpecEventKinds) + 2))
			if !legal[pair{s.Phase, bad.Kind}] {
				illegal++
				next, err := state.Apply(s, bad)
				var te *state.TransitionError
				if !errors.As(err, &te) || !errors.Is(err, state.ErrIllegalTransition) || te.From != s.Phase || te.Event != bad.Kind {
					t.Fatalf("%s: a %v event: got %v, want a *TransitionError naming both", where, bad.Kind, err)
				}
				if !reflect.DeepEqual(next, s) {
					t.Fatalf("%s: an illegal %v changed the state", where, bad.Kind)
				}
			}
			if step%10 == 0 && fmt.Sprintf("%#v", s) != before {
				t.Fatalf("%s: refusing events changed the state they were given", where)
			}

			s = apply(t, s, statetest.NextEvent(rng, s))
		}
	}
	// The generator must reach the rules, or this test proves little.
	if len(rules) < 40 || illegal < 800 {
		t.Errorf("only %d rules broken and %d illegal events tried: %v", len(rules), illegal, rules)
	}
	t.Logf("%d illegal events; rules broken: %v", illegal, rules)
}
