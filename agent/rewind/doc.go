// Package rewind puts a session's workspace files back the way they were
// at another version: the files half of a rollback.
//
// Every tool call that changes files records, in its tool_finished event,
// each path's image before and after (by content digest), and the state at
// each version keeps a manifest of every path the session touched on the
// way there (state.State.Files). Moving the head from one version to
// another is then a plan computed from the two manifests alone (Plan): for
// each path either manifest knows, what the workspace should hold now and
// what it must hold at the target. No walk of the workspace is needed, and
// the plan works in both directions along any branch.
//
// A restore refuses to overwrite what it cannot account for: before any
// file is written, each path's current content is compared with what the
// session last recorded, and a file changed outside retrace is a conflict
// (ConflictError) unless the caller forces the restore. A path whose
// content was never kept compares by its stamp (type, size, times, inode),
// and one recorded without a stamp is always a conflict: any doubt is.
// Each file is looked at once more just before it is replaced; one saved
// meanwhile is left as it is and listed, and the restore is partial. The restore itself is
// bracketed by two checkpoints, restore_started (with the plan) and
// files_restored, and each file is replaced atomically; a process stopped
// in between leaves a session whose head says a restore is open, and
// Finish completes it from what each file holds, so the workspace ends at
// the target version's bytes, never a mix inside one file.
//
// What is not restored: anything outside the workspace, anything inside
// a .git directory (the user's history: a plan entry there is refused and
// listed, whatever session it comes from), paths git's ignore rules or
// the configuration exclude (they are recorded as not tracked), files
// over the size cap, and effects that are not files.
package rewind
