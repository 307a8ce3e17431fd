-- Schema 1: sessions, their checkpoints, file contents, and who claims what.
-- Every table is prefixed retrace_ so the store can share a database.
-- Times are Unix nanoseconds (timestamptz keeps microseconds only, and a
-- state read back must equal the state that was written). Each row carries
-- a CRC-32C (record.go says over what), checked on every read.

CREATE TABLE retrace_sessions (
    id         text    PRIMARY KEY,
    title      text    NOT NULL,
    model      text    NOT NULL,
    workspace  text    NOT NULL,
    created_ns bigint  NOT NULL,
    updated_ns bigint  NOT NULL,
    head       integer NOT NULL,
    versions   integer NOT NULL,
    phase      text    NOT NULL,
    -- runs of versions gc removed before an export, [first, last] pairs
    removed    integer[] NOT NULL DEFAULT '{}',
    crc        bigint  NOT NULL
);

-- One row per checkpoint: the header columns the tree is listed from, and
-- the event as state's binary body. crc covers the header and body_crc,
-- so the tree checks its rows without reading any body.
CREATE TABLE retrace_checkpoints (
    session_id text    NOT NULL REFERENCES retrace_sessions (id) ON DELETE CASCADE,
    version    integer NOT NULL,
    parent     integer NOT NULL,
    phase      text    NOT NULL,
    kind       text    NOT NULL,
    at_ns      bigint  NOT NULL,
    body       bytea   NOT NULL,
    body_crc   bigint  NOT NULL,
    crc        bigint  NOT NULL,
    PRIMARY KEY (session_id, version)
);

-- File contents, shared by every session, by digest. PostgreSQL compresses
-- large values itself (TOAST).
CREATE TABLE retrace_blobs (
    digest text   PRIMARY KEY,
    data   bytea  NOT NULL,
    crc    bigint NOT NULL
);

-- Who holds a session's claim, written by the holder once its advisory
-- lock is granted. The lock is the claim; a row is only believed while its
-- backend still holds the lock (claim.go), so rows a dead holder left are
-- harmless and overwritten by the next claimer.
CREATE TABLE retrace_claims (
    session_id    text        PRIMARY KEY,
    host          text        NOT NULL,
    pid           integer     NOT NULL,
    backend_pid   integer     NOT NULL,
    backend_start timestamptz NOT NULL
);
