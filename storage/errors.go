package storage

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Backends wrap them with the session, version or file they
// concern; match them with errors.Is.
var (
	// ErrSessionNotFound: no session has that id (or prefix).
	ErrSessionNotFound = errors.New("session not found")
	// ErrAmbiguousID: a prefix matches several sessions (see AmbiguousError).
	ErrAmbiguousID = errors.New("ambiguous session id")
	// ErrVersionNotFound: the session has no such version (see VersionError).
	ErrVersionNotFound = errors.New("version not found")
	// ErrConflict: an append named a parent that is no longer the head.
	ErrConflict = errors.New("session moved on")
	// ErrBusy: another process writes the session (see BusyError).
	ErrBusy = errors.New("session in use")
	// ErrClaimLost: a write found this store's claim on the session gone
	// (its connection to a database server ended), so another process
	// may write the session now; nothing was written.
	ErrClaimLost = errors.New("the claim on the session was lost")
	// ErrCorrupt: stored data is damaged (see CorruptError).
	ErrCorrupt = errors.New("damaged data")
	// ErrNotDatabase: the file is not a retrace database.
	ErrNotDatabase = errors.New("not a retrace database")
	// ErrTooNew: the file was written by a newer retrace.
	ErrTooNew = errors.New("database written by a newer retrace")
	// ErrLocked: the database file stayed locked by another process.
	ErrLocked = errors.New("database locked")
	// ErrBlobNotFound: the store holds no file content with that digest.
	ErrBlobNotFound = errors.New("file content not found")
	// ErrInvalid: what was handed to the store breaks its rules (file
	// content that does not match its digest, say); nothing was kept.
	ErrInvalid = errors.New("invalid data")
	// ErrSessionExists: an import names a session the store holds already.
	ErrSessionExists = errors.New("session exists")
	// ErrWorkspace: a session arriving from elsewhere records a workspace
	// that is no directory of this machine (see Arrive).
	ErrWorkspace = errors.New("not a directory of this machine")
)

// AmbiguousError lists the sessions a prefix matches.
type AmbiguousError struct {
	Prefix     string
	Candidates []SessionInfo
}

func (e *AmbiguousError) Error() string {
	ids := make([]string, len(e.Candidates))
	for i, c := range e.Candidates {
		ids[i] = c.ID
		if c.Title != "" {
			ids[i] += " (" + c.Title + ")"
		}
	}
	return fmt.Sprintf("session id %q is ambiguous: it matches %s; type more characters", e.Prefix, strings.Join(ids, ", "))
}

// Unwrap lets errors.Is match ErrAmbiguousID.
func (e *AmbiguousError) Unwrap() error { return ErrAmbiguousID }

// VersionError names a version a session does not have.
type VersionError struct {
	Session  string
	Version  int
	Versions int
	// Removed: the version existed, on a branch `retrace gc --branches`
	// removed. Its number is never given to another version.
	Removed bool
}

func (e *VersionError) Error() string {
	if e.Removed {
		return fmt.Sprintf("session %s has no version %d any more: retrace gc --branches removed the branch it was on", e.Session, e.Version)
	}
	return fmt.Sprintf("session %s has no version %d (it has versions 0 to %d)", e.Session, e.Version, e.Versions)
}

// Unwrap lets errors.Is match ErrVersionNotFound.
func (e *VersionError) Unwrap() error { return ErrVersionNotFound }

// ConflictError says an append named a parent that is not the head.
type ConflictError struct {
	Session string
	Parent  int
	Head    int
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("session %s moved on: the checkpoint names v%d as its parent but the head is v%d; reload the session", e.Session, e.Parent, e.Head)
}

// Unwrap lets errors.Is match ErrConflict.
func (e *ConflictError) Unwrap() error { return ErrConflict }

// BusyError says another process writes a session.
type BusyError struct {
	Session string
	PID     int // 0 when the holder could not be told
	// Host is the holder's machine, where the store is shared across
	// machines (pgstore); empty for a file on this one.
	Host string
}

func (e *BusyError) Error() string {
	holder := "another retrace process"
	switch {
	case e.PID > 0 && e.Host != "":
		holder = fmt.Sprintf("another retrace process (pid %d on %s)", e.PID, e.Host)
	case e.PID > 0:
		holder = fmt.Sprintf("another retrace process (pid %d)", e.PID)
	}
	return fmt.Sprintf("session %s is in use by %s; open it read-only or close it there first", e.Session, holder)
}

// Unwrap lets errors.Is match ErrBusy.
func (e *BusyError) Unwrap() error { return ErrBusy }

// CorruptError names damaged data: the file, and where known the session
// and version, or the file content (blob) by its digest.
type CorruptError struct {
	Path    string
	Session string
	Version int // 0 with a Session: the session's own record
	Blob    string
	Reason  string
	// Derived is set when the damage is in data made from the events (a
	// snapshot): reads pass over it and writes go on; a recovered copy
	// makes it again.
	Derived bool
}

func (e *CorruptError) Error() string {
	where := e.Path
	if e.Session != "" {
		where += ": session " + e.Session
		if e.Version > 0 {
			where += fmt.Sprintf(" version %d", e.Version)
		}
	}
	if e.Blob != "" {
		where += ": file content " + e.Blob
	}
	return fmt.Sprintf("%s: damaged: %s", where, e.Reason)
}

// Unwrap lets errors.Is match ErrCorrupt.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// NotFoundError names a session id (or prefix) that matches nothing.
type NotFoundError struct {
	ID    string
	Where string // the database
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no session %q in %s", e.ID, e.Where)
}

// Unwrap lets errors.Is match ErrSessionNotFound.
func (e *NotFoundError) Unwrap() error { return ErrSessionNotFound }
