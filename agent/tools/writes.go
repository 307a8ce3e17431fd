package tools

import (
	"context"
	"sync"

	"retrace/agent/sandbox"
)

// writesKey finds a call's writes record in its context.
type writesKey struct{}

// writesRecord is where run_command leaves what its command's processes
// wrote. Until a command has run it says nothing was written.
type writesRecord struct {
	mu sync.Mutex
	w  sandbox.Writes
}

// WithWrites returns a context in which run_command records what its
// command's processes wrote, for CommandWrites to read once the call is
// over: what tells the command's changes from the user's, made while it
// ran. Give each call a context of its own.
func WithWrites(ctx context.Context) context.Context {
	return context.WithValue(ctx, writesKey{}, &writesRecord{w: sandbox.Writes{Watched: true}})
}

// CommandWrites is what the command of the call run with ctx wrote, as
// the sandbox saw it: when no command ran, nothing. ok is false when ctx
// did not come from WithWrites.
func CommandWrites(ctx context.Context) (w sandbox.Writes, ok bool) {
	r, ok := ctx.Value(writesKey{}).(*writesRecord)
	if !ok {
		return sandbox.Writes{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.w, true
}

// recordWrites keeps what proc's processes wrote in ctx's record, if it
// has one.
func recordWrites(ctx context.Context, proc *sandbox.Process) {
	if r, ok := ctx.Value(writesKey{}).(*writesRecord); ok {
		w := proc.Writes()
		r.mu.Lock()
		r.w = w
		r.mu.Unlock()
	}
}
