// Package powercut tests that what a process promised is on disk when
// the power fails: SIGKILL cannot show that, because the kernel keeps a
// killed process's unsynced writes, and a power cut does not.
//
// A test runs a writer (its own test binary again) under strace, which
// records every call that changes a file's bytes, its size or a
// directory's entries, every fsync and fdatasync, and what the writer
// printed on stdout (its promises), in the order they completed. Replay
// then plays that record on a model of a disk that loses power: a file
// keeps only what was written before its last sync, and a name in a
// directory (a file's, or a directory's made with mkdir) exists only if
// the directory was synced after the name was made. At many cut points
// (just after every promise, and at random) the test gets the files as
// the cut leaves them, with the promises made before it, and checks each.
//
// Why strace: bbolt and os.Root write through files of their own, so
// there is no seam in Go to count or drop their syncs; a layer under the
// file system (FUSE, dm-flakey) needs privileges CI does not have. strace
// sees the real system calls of the real code and changes nothing in it.
//
// It needs strace; .ci/run installs it and sets RETRACE_POWERCUT=1, which
// makes its absence a failure instead of a skip.
//
// Only tests import this package.
package powercut
