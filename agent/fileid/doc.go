// Package fileid says which file a path holds, so that a file replaced by
// another one at the same path (an editor's save: a temporary file
// renamed over it) can be told from the same file written in place.
//
// # Basics
//
// Lstat and Stat return a File: which file it is (device, inode and, where
// the file system keeps one, birth time) and what it was like (size, mode,
// modification and change times). File.Same says two are the same file,
// whatever was written to it between; File.Unchanged says nothing touched
// it between, by the change time, which no one can set.
//
// # Caveats
//
//   - Where the file system keeps no birth time, an inode number it gives
//     again to a new file, once the old one is gone, passes for the old
//     file (ext4 and xfs reuse them at once; their birth times tell).
//   - On overlayfs a file's first write copies it up to the upper layer,
//     which can change its inode number and does change its birth time:
//     there Lstat and Stat return ErrNoIdentity, and so they do off Linux.
//   - A change within the same tick of the kernel's coarse clock as the
//     one before it can leave every time as it was, size too if the write
//     keeps it: Unchanged then says unchanged. From Linux 6.13 the change
//     time has a finer grain once someone has read it, which a stat does.
package fileid
