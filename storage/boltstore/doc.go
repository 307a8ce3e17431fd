// Package boltstore is the embedded storage.Store: one bbolt file,
// retrace.db by default, that any number of retrace processes share.
//
// # Basics
//
// Each operation opens the file, runs one transaction and closes it again,
// so the file is held only for the few milliseconds a transaction takes and
// several processes can work in it at once, each on its own sessions. An
// append is one read-write transaction, committed (and fsynced) before
// Append returns. Opening and closing costs about 60 µs on a 50 MB file,
// next to roughly 1 ms for the commit's two fdatasyncs.
//
// # Caveats
//
// bbolt trusts its file. retrace does not: before bbolt opens the file its
// meta pages and size are checked; before bbolt follows a pointer, a walk
// of ours has checked the page it leads to, so that none leads outside the
// file or round in a loop; every stored value carries a CRC-32C that is
// verified on read, and every file content is also hashed against its
// digest on read; and bbolt's panics (and faults on a truncated mapping,
// by debug.SetPanicOnFault) are turned into errors that name the file.
//
// An operation walks and checks only the part of the file it reads: one
// session's pages, not the file's (reach.go), so its cost follows the
// session. The whole file is checked by `retrace verify`, by gc and
// compact, and before the first write after a writer crashed. Damage found
// is never written over: whoever finds it marks the file, and no process
// writes to it until verify passes or another file is put in its place
// (crash.go).
//
// When one of bbolt's two meta pages is damaged, bbolt silently reads the
// file as of the other's commit, which is one commit back if the damaged
// page was the newest. A damaged page cannot say whether it was (its txid
// is damaged too), so retrace refuses every such file, since the commit
// bbolt would drop may be an acknowledged checkpoint (see oneMetaDamaged).
//
// File contents live in one bucket shared by every session, keyed by
// digest and zstd-compressed when that makes them smaller; one past 1 MiB
// is kept in chunks of 1 MiB beside it (chunk.go). Deleting a
// session leaves them (another may share them) until a garbage collection
// (GC) finds nothing refers to them.
//
// The file shrinks only by Compact; deleted sessions and GC leave free
// pages that later writes reuse.
package boltstore
