-- Schema 3: the memory log's snapshot (storage.MemorySnapshot), derived
-- data each append keeps: the log folded at its version, in one row, so
-- that a task start reads it and the rows after it, not the whole log.
-- crc covers the body (memorysnap.go).

CREATE TABLE retrace_memory_now (
    id   smallint PRIMARY KEY CHECK (id = 1),
    body bytea    NOT NULL,
    crc  bigint   NOT NULL
);
