// Package session is the live session: the one controller that both
// `retrace run` and the interface drive. It owns what is alive while a
// session is open — the claim on it, the cursor at its head, the agent on
// that cursor, the running task and its cancellation, the pending
// approval — and the operations that change which state is live: open,
// create, restore, change model, compact, export.
//
// # Basics
//
// New returns a Controller on a store; Create or Open makes a session the
// open one, claimed for writing so no other process writes it meanwhile
// (or read-only, with Config.ReadOnlyWhenBusy, when one does). Draft opens
// a new session in memory only, which its first Submit writes, so that a
// session started and left unused never reaches the store. Submit and
// Resume start a task on a goroutine of the controller's and return at
// once. What happens comes back as one stream of events, read with Next
// or ranged over with Events, in the manner of a runner that yields
// events:
//
//	ctrl := session.New(ctx, store, cfg)
//	defer ctrl.Close()
//	if err := ctrl.Create(storage.NewSession{}); err != nil { ... }
//	if err := ctrl.Submit("what does main.go do?"); err != nil { ... }
//	for ev := range ctrl.Events(ctx) {
//		switch ev := ev.(type) {
//		case session.StateChanged: // a checkpoint was kept
//		case session.Delta: // streamed text
//		case session.ApprovalNeeded: // answer with ctrl.Decide
//		case session.TaskDone: // ev.Err says how it ended
//		}
//	}
//
// # Read-only sessions
//
// A session opened read-only follows its writer: every Config.Follow the
// controller reads the session's summary, off every caller's goroutine
// and without holding its own lock while it reads, and a checkpoint, a
// rollback or a new title there comes as Followed. When the writer lets
// the session go, WriterGone says so once, and TakeOver makes this
// controller the writer (refused with the other process's busy error if
// one claimed it first).
//
// # Delivery
//
// Publishing never blocks the agent. Every StateChanged, ApprovalNeeded,
// TaskDone, Retrying and Notice is delivered, in the order it happened;
// deltas queued next to each other are merged into one, so a reader that
// falls behind gets fewer, longer pieces of the same text. A task's
// TaskDone comes after every event of that task and before any event of
// the next.
//
// # One operation at a time
//
// A task or a compaction has the session to itself: Submit, Resume,
// Compact, Restore, Open, Create and SetModel are refused with ErrRunning
// while one runs, and everything that writes is refused with ErrReadOnly
// on a read-only session. Cancel interrupts what runs; the agent keeps an
// interrupted checkpoint before TaskDone says so. Close cancels, waits for
// that checkpoint, and lets the claim go.
//
// # Caveats
//
// A session opened, or a restored version, that was mid-task is never
// carried on by itself: Resume does that when the person asks (and asks
// again about any call approved before the stop), and a new message
// records the unfinished task as interrupted first. A restore a stopped
// process left open is never finished by Open: the session takes no
// task (RestoreOpenError) until FinishRestore finishes it or a Restore
// with KeepFiles leaves it. The API key in Config lives in
// memory only: the store records the model's name, never the key.
package session
