package snapshot

import (
	"testing"
	"time"
)

// A goroutine that asks for more than is left waits until it is given
// back; one that asks for more than the whole budget goes through when
// nothing else is held.
func TestBudgetWaitsForWhatIsHeld(t *testing.T) {
	b := newBudget(100)
	b.take(60)
	took := make(chan struct{})
	go func() {
		b.take(60)
		close(took)
	}()
	for deadline := time.Now().Add(10 * time.Second); ; {
		b.mu.Lock()
		waiting := b.waiting
		b.mu.Unlock()
		select {
		case <-took:
			t.Fatal("a second take of 60 went through while 60 of 100 were held")
		default:
		}
		if waiting == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second take neither waited nor went through")
		}
		time.Sleep(time.Millisecond)
	}
	b.give(60)
	<-took
	b.give(60)
	b.take(250) // more than the whole budget, alone: no wait
	b.give(250)
}
