package storage

import (
	"errors"
	"testing"
	"time"

	"retrace/state"
)

// sent is an export of three versions whose last is an imported event
// the sender numbered n, as a sender who guessed the receiver's number
// would.
func sent(t *testing.T, n int) Export {
	t.Helper()
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	ev := state.Event{Kind: state.Imported, At: at, Arrival: n}
	return Export{
		Session: SessionInfo{ID: "a", Workspace: t.TempDir(), Head: 3, Versions: 3, Phase: state.Idle},
		Checkpoints: []Record{
			{Checkpoint: Checkpoint{Version: 3, Parent: 2, Event: state.Imported, Phase: state.Idle, At: at}, Data: ev},
		},
	}
}

// An arrival's number is past every version and every arrival the export
// holds: none of the sender's versions can hold it, whatever they wrote.
func TestArrivalNumberIsNoneTheSenderHolds(t *testing.T) {
	for _, theirs := range []int{0, 3, 4, 5, 1000} {
		ex, err := Arrive(sent(t, theirs), Arrival{})
		if err != nil {
			t.Fatal(err)
		}
		got := ex.Checkpoints[len(ex.Checkpoints)-1].Data.Arrival
		if got <= theirs || got <= 3 {
			t.Errorf("with the sender's arrival %d, the arrival here is numbered %d", theirs, got)
		}
	}
}

// A number near the top of int is refused, not wrapped round.
func TestArrivalNumberPastTheBoundIsRefused(t *testing.T) {
	_, err := Arrive(sent(t, maxArrival), Arrival{})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("an arrival numbered %d: %v", maxArrival, err)
	}
	ex := sent(t, 0)
	ex.Session.Versions = 1<<63 - 11
	if _, err := Arrive(ex, Arrival{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a session of 2^63-11 versions: %v", err)
	}
}
