package session

import (
	"context"
	"strings"
	"sync"
)

// stream is the controller's mailbox of events: publishing never blocks
// the agent, every event but a delta is kept until it is read, and a run
// of deltas waiting to be read is merged into one, so a slow reader costs
// memory in proportion to the text, not to the number of tokens.
type stream struct {
	mu     sync.Mutex
	queue  []queued
	wake   chan struct{} // holds a token while the queue may be non-empty
	done   chan struct{} // closed by close, for every waiting reader
	closed bool
}

// queued is an event waiting to be read; a delta grows in place.
type queued struct {
	ev   Event
	text *strings.Builder // for a Delta: its text so far
}

func newStream() *stream { return &stream{wake: make(chan struct{}, 1), done: make(chan struct{})} }

// publish queues ev. After close it is dropped: nobody is left to read it.
func (s *stream) publish(ev Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if d, ok := ev.(Delta); ok {
		if n := len(s.queue); n > 0 {
			if last, ok := s.queue[n-1].ev.(Delta); ok && last.Phase == d.Phase && last.Kind == d.Kind {
				s.queue[n-1].text.WriteString(d.Text)
				return
			}
		}
		b := &strings.Builder{}
		b.WriteString(d.Text)
		s.queue = append(s.queue, queued{ev: d, text: b})
	} else {
		s.queue = append(s.queue, queued{ev: ev})
	}
	s.signal()
}

// signal leaves a token for a waiting reader; one is enough.
func (s *stream) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// next waits for the next event. It returns false when ctx ends, or when
// the stream is closed and everything queued has been read.
func (s *stream) next(ctx context.Context) (Event, bool) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			q := s.queue[0]
			s.queue[0] = queued{}
			s.queue = s.queue[1:]
			if len(s.queue) > 0 {
				s.signal() // more for the next reader
			}
			s.mu.Unlock()
			if d, ok := q.ev.(Delta); ok {
				d.Text = q.text.String()
				return d, true
			}
			return q.ev, true
		}
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return nil, false
		}
		select {
		case <-s.wake:
		case <-s.done:
		case <-ctx.Done():
			return nil, false
		}
	}
}

// close ends the stream: readers get what is queued, then false.
func (s *stream) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
}
