package state

import "fmt"

// Phase is where the agent is in a task.
type Phase uint8

// The phases of the machine. The zero value is Idle, so a new State starts
// idle.
const (
	Idle Phase = iota
	Planning
	Executing
	AwaitingApproval
	Reflecting
	Done
	Error
)

// Phases lists every phase in display order.
var Phases = []Phase{Idle, Planning, Executing, AwaitingApproval, Reflecting, Done, Error}

var phaseNames = [...]string{
	Idle:             "idle",
	Planning:         "planning",
	Executing:        "executing",
	AwaitingApproval: "awaiting_approval",
	Reflecting:       "reflecting",
	Done:             "done",
	Error:            "error",
}

// String returns the phase's wire name, as stored and shown.
func (p Phase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return fmt.Sprintf("phase(%d)", uint8(p))
}

// Active reports whether a task is under way in this phase: the agent, not
// the person, is expected to act next.
func (p Phase) Active() bool {
	switch p {
	case Planning, Executing, AwaitingApproval, Reflecting:
		return true
	}
	return false
}

// ParsePhase returns the phase with the given wire name.
func ParsePhase(name string) (Phase, error) {
	for i, n := range phaseNames {
		if n == name {
			return Phase(i), nil
		}
	}
	return 0, fmt.Errorf("unknown phase %q", name)
}

// MarshalText encodes the phase as its wire name.
func (p Phase) MarshalText() ([]byte, error) {
	if int(p) >= len(phaseNames) {
		return nil, fmt.Errorf("unknown phase %d", uint8(p))
	}
	return []byte(p.String()), nil
}

// UnmarshalText decodes a wire name; unknown names are an error, never a
// silent idle.
func (p *Phase) UnmarshalText(b []byte) error {
	v, err := ParsePhase(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}
