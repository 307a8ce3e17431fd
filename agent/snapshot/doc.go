// Package snapshot sees what the agent's tools do to the workspace's
// files, so that rolling back a version can put them back (issue 12).
//
// # Basics
//
// A Watcher is bound to one workspace directory. A tool that writes one
// known path (write_file, edit_file) asks Image before and after; a tool
// that may touch anything (run_command) takes a Mark before and asks
// Changes after. Both give state.FileChange values (path, before and after
// images) and the state.Blob contents the images name by digest, ready for
// a tool_finished checkpoint. A rollback writes images back with Put.
//
// # How changes are found
//
// Mark and Changes walk the whole workspace and lstat every path, like
// git status: a file is read and hashed only when its stamp (size, mtime,
// ctime, inode, mode) differs from the stat cache, which is kept on disk
// between processes as an index per workspace. A changed file's before
// content must outlive the command that overwrote it, so every file a scan
// hashes is also kept, zstd-compressed, in a content cache shared by all
// workspaces under Options.CacheDir: in packs, one per scan that read
// something new, each with an index of the digests it holds.
//
// Both caches are only caches: written without fsync, read back with
// their digests and checksums verified. A damaged index is ignored and
// rebuilt; a damaged or missing content object makes the image Untracked
// ("no longer in the content cache"), never wrong bytes.
//
// # Whose change it is
//
// Changes finds everything that changed while a command ran, whoever
// changed it. Attribute keeps what the command's own processes wrote, as
// the sandbox saw them; a file the user saved meanwhile is left out of
// the command's record. At a path where the command wrote a file that
// was there already, the file there now tells (see package fileid): one
// saved by rename over it, or removed, is the user's, and so is one
// nothing touched after the command opened it. Where nobody could watch
// the command, each change keeps its before, and its after is recorded
// without content, so a rollback over it is a conflict rather than a
// silent undo.
//
// # What is not tracked
//
// .git is never entered. Paths ignored by the workspace's .gitignore files
// (at the root and below) or by Options.Exclude are not read, and ignored
// directories are not entered; they are still listed, so a change to one
// (its size or mtime, or for a directory its own entries) is reported with
// Untracked images that say why. Symlinks, other non-regular files and
// files over Options.MaxFileSize are reported with Untracked images too:
// the change is known, a restore cannot bring it back. An untracked image
// carries the path's stamp, by which a restore tells whether anyone
// changed the path since.
//
// A restore writes through Put and PutIf, which never write inside .git
// and, for PutIf, look at the file once more just before replacing it.
// Every open of a workspace file is non-blocking and checks what it got,
// so a FIFO swapped in for a file cannot hang a scan.
//
// # Caveats
//
//   - A stamp vouches for content only once it is older than the scan by
//     a clock tick or so (two seconds where timestamps keep whole seconds);
//     a younger one is read again by the next scan, as git does with
//     "racily clean" entries. An edit that keeps size, mtime, ctime and
//     inode would still go unseen: that takes a clock set backwards.
//   - Off Linux and macOS the ctime and inode are not read, so an edit
//     that keeps the size and puts the mtime back goes unseen there.
//   - Only the workspace's .gitignore files count, not .git/info/exclude
//     nor the user's global excludes file.
//   - The content cache is kept under Options.CacheBytes by eviction (see
//     Evict), which drops only what no workspace's stat index names: a
//     workspace whose files alone are larger keeps them all.
//   - A command's changes keep at most Options.MaxCallFiles contents and
//     Options.MaxCallBytes bytes; past that they are recorded without
//     content (OverBudget tells them), and a rollback cannot put them back.
//   - A file changed while a scan reads it is seen on the next scan.
//   - The sandbox sees a command open a file for writing, not each
//     write: when the same file changed after the command opened it, the
//     whole change counts as the command's, edits the user made in place
//     while it ran (an editor saving in place, an append) included, and
//     a rollback takes them back.
package snapshot
