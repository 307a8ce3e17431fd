package snapshot

import "sync"

// readBudget bounds the bytes a scan's goroutines hold at once while they
// read and keep files: sixteen goroutines each on a file just under the
// size cap would otherwise hold hundreds of MiB. Small files never wait;
// large ones are read a few at a time. A file larger than the budget is
// read alone.
const readBudget = 32 << 20

// budget is a count of bytes that goroutines take before they use them
// and give back after, waiting while the rest is taken.
type budget struct {
	mu    sync.Mutex
	cond  sync.Cond
	limit int64
	used  int64
	// waiting counts the goroutines waiting in take, for tests.
	waiting int
}

func newBudget(limit int64) *budget {
	b := &budget{limit: limit}
	b.cond.L = &b.mu
	return b
}

// take waits until n bytes are free, or nothing is taken (so that one
// file larger than the whole budget still goes through), and takes them.
func (b *budget) take(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.used > 0 && b.used+n > b.limit {
		b.waiting++
		b.cond.Wait()
		b.waiting--
	}
	b.used += n
}

// give hands back n bytes that take took.
func (b *budget) give(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
	b.cond.Broadcast()
}
