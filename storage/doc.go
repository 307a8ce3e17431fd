// Package storage keeps sessions as versioned checkpoints.
//
// # Basics
//
// A session is an append-only log of checkpoints. A checkpoint is one
// state.Event with its version, its parent version and its time; the state
// at a version is the replay of the events on the path from the root to it.
// Versions are small integers per session (1, 2, 3, ...), parents form a
// tree, and the session's head names the version the next checkpoint hangs
// under. Version 0 is the empty session before anything happened.
//
// Rollback (SetHead) moves the head. The next checkpoint then starts a new
// branch; the old branch stays in the tree. Nothing is ever removed but by
// deleting the whole session, or by a garbage collection a person runs
// (retrace gc), which may remove abandoned branches: their numbers are
// never given again.
//
// A checkpoint writes the delta, never the whole state: each message is
// stored once, in the event that added it, so a checkpoint costs the same at
// the ten-thousandth message as at the first.
//
// # File contents
//
// Events that change workspace files name the contents by digest
// (state.FileImage.Blob) and carry them to the store in state.Event.Blobs.
// The store keeps each content once, however many versions and sessions
// refer to it, in the transaction of the first checkpoint that needs it,
// and checks it against its digest on the way in and on every read (Blob).
// A checkpoint never refers to a content the store does not hold. Deleting
// a session leaves its contents, which another session may share; the
// garbage collection (retrace gc) removes those nothing refers to.
//
// # Writers
//
// One process at a time writes a session. The first write claims it (Claim
// does so explicitly); a second process that tries gets a *BusyError naming
// the session and the holder's pid, and may still read. Claims end with
// Release, Close or the process: a killed holder releases at once.
//
// # Backends
//
// Store is the interface every backend implements; storetest holds the
// conformance suite they all must pass. boltstore is the embedded default.
package storage
