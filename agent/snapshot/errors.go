package snapshot

import "errors"

// ErrInvalidPath is wrapped by the error for a path that is not relative,
// slash-separated and clean (state.ValidPath): the watcher names files the
// way a checkpoint does, and refuses anything that could climb out.
var ErrInvalidPath = errors.New("not a clean path inside the workspace")

// ErrNotRestorable is wrapped by Put's error for an image whose content was
// not kept (Untracked): there is nothing to write back.
var ErrNotRestorable = errors.New("the image's content was not kept")

// ErrDigestMismatch is wrapped by Put's error when the data is not the
// content the image names: writing it would put back the wrong file.
var ErrDigestMismatch = errors.New("data does not match the image's digest")

// ErrForeignMark is wrapped by Changes' error for a Mark another Watcher
// took, or the zero Mark: its paths and digests mean nothing here.
var ErrForeignMark = errors.New("the mark was not taken by this watcher")

// ErrGitPath is wrapped by the error of a Put, Remove or Sweep of a path
// inside a .git directory: a restore never writes there. .git is the
// user's history, not the agent's work, and a hook planted in it would run
// unconfined at the user's next commit.
var ErrGitPath = errors.New("a path inside .git, which a restore never writes")

// ErrLinkedPath is a path whose directories include a symbolic link: a
// restore never writes through one, since a link may lead into .git.
var ErrLinkedPath = errors.New("a path through a symbolic link, which a restore never writes through")

// ErrChangedMeanwhile is wrapped by PutIf's error when the path, looked at
// once more just before it was to be replaced, held something it must
// not overwrite: nothing was replaced.
var ErrChangedMeanwhile = errors.New("the file changed while the restore ran")
