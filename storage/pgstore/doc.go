// Package pgstore is the storage.Store on PostgreSQL, for sessions shared
// across machines. It keeps what boltstore keeps, in the same forms, so a
// session reads back as the same states from either.
//
// # Basics
//
// Open takes a postgres:// URL (or libpq's key=value settings); the
// password comes from it, PGPASSWORD or ~/.pgpass, as libpq's do, and is
// never shown: errors and String name the database by a URL without it.
// The store's tables, prefixed retrace_ so a database can hold other
// things too, are made or migrated on Open (schema.go):
//
//	retrace_schema        the schema's version, one row
//	retrace_sessions      one row per session: title, model, head, versions, ...
//	retrace_checkpoints   one row per checkpoint: parent, phase, kind, time,
//	                      and the event as state's binary body
//	retrace_blobs         file contents by digest, shared by every session
//	retrace_claims        who holds each claimed session: host and pid
//
// A checkpoint is one row, the delta: the event that made it, never the
// state. Append and Fork are one transaction each, which locks the
// session's row (SELECT ... FOR UPDATE), checks the parent, and inserts
// the checkpoint and the file contents it brings; when Append returns the
// transaction is committed, as durable as the server's settings make it.
// Every row carries a CRC-32C checked on every read, and every content is
// hashed against its digest on read: damage is a *storage.CorruptError
// naming the session and version, or the content. The version tree is
// listed from the checkpoints' header columns without reading any event.
//
// File contents are stored as they are: boltstore's compression is its
// own (unexported), and PostgreSQL compresses large values itself.
//
// # Claims
//
// A claim is a session-level advisory lock, held on a connection of its
// own for as long as the claim lasts: one connection per claimed session,
// beside the pool the store's operations use. A second claimer, from any
// process on any machine, is refused with a *storage.BusyError naming the
// holder's pid, and its host in the message. PostgreSQL ends the lock
// with the connection, so a killed holder lets go at once, and so does one
// whose connection broke. Every write checks, in its own transaction, that
// its store's claim still holds the lock; one that finds it gone fails
// with storage.ErrClaimLost and writes nothing (claim.go). Release and Close end
// the claims.
//
// # Caveats
//
// Imported sessions keep the gaps gc left in their
// versions. Times are kept as Unix nanoseconds, so times outside the
// years 1678 to 2262 cannot be stored (none retrace makes is).
package pgstore
