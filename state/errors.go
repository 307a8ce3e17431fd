package state

import (
	"errors"
	"fmt"
)

// ErrIllegalTransition is wrapped by every error for an event the phase
// machine does not allow in the current phase.
var ErrIllegalTransition = errors.New("illegal transition")

// ErrInvalidEvent is wrapped by every error for an event whose contents do
// not fit its kind or the state it is applied to (a tool result for a call
// nobody made, a plan step that does not exist).
var ErrInvalidEvent = errors.New("invalid event")

// TransitionError names the phase and the event of an illegal transition.
type TransitionError struct {
	From  Phase
	Event EventKind
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("illegal transition: %s event in phase %s", e.Event, e.From)
}

// Unwrap lets errors.Is match ErrIllegalTransition.
func (e *TransitionError) Unwrap() error { return ErrIllegalTransition }

// EventError says why an event's contents were rejected.
type EventError struct {
	Event  EventKind
	Reason string
}

func (e *EventError) Error() string {
	if e.Event == 0 {
		return "invalid event: " + e.Reason
	}
	return fmt.Sprintf("invalid %s event: %s", e.Event, e.Reason)
}

// Unwrap lets errors.Is match ErrInvalidEvent.
func (e *EventError) Unwrap() error { return ErrInvalidEvent }

func invalid(kind EventKind, format string, args ...any) error {
	return &EventError{Event: kind, Reason: fmt.Sprintf(format, args...)}
}
