package tools

import "golang.org/x/sys/unix"

// exchange swaps the names a and b in one step (renameat2 with
// RENAME_EXCHANGE), so at every instant each name exists: a race against
// the tools never sees a gap, only one side or the other.
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
