package state

// Transition is one edge of the phase machine: in phase From, an event of
// kind Event moves the state to phase To.
type Transition struct {
	From  Phase
	Event EventKind
	To    Phase
}

// Transitions is the phase machine, as data. Every legal (phase, event) pair
// appears exactly once; any pair not listed is illegal.
var Transitions = buildTransitions()

func buildTransitions() []Transition {
	var t []Transition
	move := func(to Phase, ev EventKind, from ...Phase) {
		for _, f := range from {
			t = append(t, Transition{From: f, Event: ev, To: to})
		}
	}
	stay := func(ev EventKind, in ...Phase) {
		for _, p := range in {
			t = append(t, Transition{From: p, Event: ev, To: p})
		}
	}
	active := []Phase{Planning, Executing, AwaitingApproval, Reflecting}

	move(Planning, UserMessage, Idle, Done, Error)
	move(Executing, PlanSet, Planning, Executing)
	move(Done, Answered, Planning, Reflecting)
	for _, ev := range []EventKind{ToolStarted, ToolFinished, AssistantMessage, NoteSet, StepStatus} {
		stay(ev, Executing)
	}
	move(AwaitingApproval, ApprovalRequested, Executing)
	move(Executing, ApprovalGiven, AwaitingApproval)
	move(Executing, ApprovalDenied, AwaitingApproval)
	move(Reflecting, StepCompleted, Executing)
	move(Executing, Continue, Reflecting)
	move(Planning, Replan, Reflecting)
	move(Error, Failed, active...)
	move(Idle, Interrupted, active...)
	stay(Summarized, Idle, Planning, Executing, Reflecting, Done, Error)
	move(Reflecting, ToolsDone, Executing)
	move(Reflecting, Resumed, Idle)
	stay(EndpointSet, Idle, Done, Error)
	all := []Phase{Idle, Planning, Executing, AwaitingApproval, Reflecting, Done, Error}
	stay(RestoreStarted, all...)
	stay(FilesRestored, all...)
	move(Idle, Imported, active...)
	stay(Imported, Idle, Done, Error)
	return t
}

type edge struct {
	from Phase
	ev   EventKind
}

var transitionIndex = func() map[edge]Phase {
	m := make(map[edge]Phase, len(Transitions))
	for _, t := range Transitions {
		m[edge{t.From, t.Event}] = t.To
	}
	return m
}()

// Next returns the phase an event of kind ev leads to from phase from, or a
// *TransitionError wrapping ErrIllegalTransition when the table has no such
// edge.
func Next(from Phase, ev EventKind) (Phase, error) {
	to, ok := transitionIndex[edge{from, ev}]
	if !ok {
		return from, &TransitionError{From: from, Event: ev}
	}
	return to, nil
}
