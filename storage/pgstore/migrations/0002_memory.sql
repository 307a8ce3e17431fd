-- Schema 2: the memory log, what the agent remembers of the person across
-- sessions (state.Memories): one row per event, in order, its JSON as body.
-- crc covers the version and the body (record.go).

CREATE TABLE retrace_memory (
    version integer PRIMARY KEY,
    body    bytea   NOT NULL,
    crc     bigint  NOT NULL
);
