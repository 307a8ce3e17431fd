package state

import (
	"fmt"
	"maps"
	"path"
	"strings"
)

// FileImage is what one workspace path held at one moment: a file's
// content (by digest), its absence, or a note that its content was not
// kept. The content itself lives in the store as a blob, shared by every
// version and session that refers to the same digest.
type FileImage struct {
	// Blob is the content's digest, "sha256:" and 64 hex digits; empty
	// when the path is absent or its content was not kept.
	Blob string `json:"blob,omitempty"`
	Size int64  `json:"size,omitempty"`
	// Mode holds the permission bits (fs.FileMode.Perm) a restore gives
	// the file back.
	Mode   uint32 `json:"mode,omitempty"`
	Absent bool   `json:"absent,omitempty"`
	// Untracked says why the content was not kept (a file over the size
	// cap, a path .gitignore ignores, a symlink): the path is known to
	// have changed, but a restore cannot bring it back.
	Untracked string `json:"untracked,omitempty"`
	// Stamp is what an lstat said of the path when its content was not
	// kept: its type, size, times and inode, as one opaque string. It
	// is only ever compared whole: a path whose stamp is still the
	// recorded one has not changed since, and one whose stamp differs,
	// or was never recorded, may have. Only an Untracked image has one.
	Stamp string `json:"stamp,omitempty"`
}

// Tracked reports whether a restore can bring the image back: the path
// was absent, or its content was kept.
func (f FileImage) Tracked() bool { return f.Untracked == "" }

// Same reports whether two images hold the same thing: both absent, or
// the same content with the same permissions. Sizes follow from contents.
func (f FileImage) Same(g FileImage) bool {
	return f.Absent == g.Absent && f.Blob == g.Blob && f.Mode == g.Mode && f.Untracked == g.Untracked
}

// String is a short description for messages: "absent", "12 bytes
// sha256:0a1b2c3d mode 0644" (the mode, so that a chmod by hand shows),
// or why the content was not kept.
func (f FileImage) String() string {
	if f.Absent {
		return "absent"
	}
	if f.Untracked != "" {
		return "not tracked: " + f.Untracked
	}
	// "sha256:" and the first eight hex digits name a content well
	// enough for a person.
	short := f.Blob[:min(len(f.Blob), len(digestPrefix)+8)]
	return fmt.Sprintf("%d bytes %s mode %04o", f.Size, short, f.Mode)
}

// FileChange is one workspace path that an event changed: what it held
// before and after.
type FileChange struct {
	// Path is relative to the workspace root, slash-separated and clean.
	Path   string    `json:"path"`
	Before FileImage `json:"before"`
	After  FileImage `json:"after"`
}

// FileEntry is the manifest's record of one path the session touched on
// the way to a version: what it holds there (Now), and what it held
// before the session first touched it (Was). A restore to a version that
// never touched the path gives it back Was.
type FileEntry struct {
	Now FileImage `json:"now"`
	Was FileImage `json:"was"`
}

// Blob is file content an event refers to by digest. It travels with the
// event to the store, which keeps it in the same transaction as the
// checkpoint; it is never part of the event's JSON.
type Blob struct {
	Digest string
	Data   []byte
}

const digestPrefix = "sha256:"

// ValidDigest reports whether d is "sha256:" followed by 64 lowercase hex
// digits.
func ValidDigest(d string) bool {
	hex, ok := strings.CutPrefix(d, digestPrefix)
	if !ok || len(hex) != 64 {
		return false
	}
	for _, c := range hex {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// ValidPath reports whether p names a path inside a workspace the way
// FileChange.Path must: relative, slash-separated, clean, and not
// climbing out.
func ValidPath(p string) bool {
	return p != "" && p != "." && !strings.ContainsRune(p, 0) &&
		path.Clean(p) == p && !path.IsAbs(p) && p != ".." && !strings.HasPrefix(p, "../")
}

// checkImage refuses an image that says two things at once. (A chain of
// ifs rather than a switch: gremlins runs the mutants of these
// conditions only outside a tagless switch.)
func checkImage(f FileImage) error {
	if f.Absent && (f.Blob != "" || f.Size != 0 || f.Mode != 0 || f.Untracked != "") {
		return fmt.Errorf("an absent file has no content")
	}
	if f.Blob != "" && f.Untracked != "" {
		return fmt.Errorf("content is kept or it is not")
	}
	if f.Stamp != "" && f.Untracked == "" {
		return fmt.Errorf("only a file whose content was not kept has a stamp")
	}
	if f.Blob != "" && !ValidDigest(f.Blob) {
		return fmt.Errorf("blob %q is not a sha256 digest", f.Blob)
	}
	if !f.Absent && f.Blob == "" && f.Untracked == "" {
		return fmt.Errorf("a file needs its content's digest, or why it was not kept")
	}
	if f.Size < 0 {
		return fmt.Errorf("size %d is negative", f.Size)
	}
	if f.Mode&^0o7777 != 0 {
		return fmt.Errorf("mode %#o has more than permission bits", f.Mode)
	}
	return nil
}

// checkFiles validates an event's file changes: each path once, each
// image consistent.
func checkFiles(kind EventKind, changes []FileChange) error {
	seen := make(map[string]bool, len(changes))
	for _, c := range changes {
		if !ValidPath(c.Path) {
			return invalid(kind, "file path %q is not a clean path inside the workspace", c.Path)
		}
		if seen[c.Path] {
			return invalid(kind, "file %s is listed twice", c.Path)
		}
		seen[c.Path] = true
		if err := checkImage(c.Before); err != nil {
			return invalid(kind, "file %s before: %v", c.Path, err)
		}
		if err := checkImage(c.After); err != nil {
			return invalid(kind, "file %s after: %v", c.Path, err)
		}
	}
	return nil
}

// BlobDigests lists the digests an event's file changes refer to, each
// once, in order of first mention: what a store must hold for the event.
func (ev Event) BlobDigests() []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range ev.Files {
		for _, d := range []string{c.Before.Blob, c.After.Blob} {
			if d != "" && !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	return out
}

// checkRestore keeps a restore's events in order: one restore at a time,
// nothing else while it is open, and file changes only on the events that
// make them.
func (a *applier) checkRestore(ev Event) error {
	open := a.s.Restoring != nil
	// An import closes an open restore without finishing it: the files
	// it names are another machine's.
	if open && ev.Kind != FilesRestored && ev.Kind != Imported {
		return invalid(ev.Kind, "a restore of the workspace is under way; only files_restored may follow")
	}
	if !open && ev.Kind == FilesRestored {
		return invalid(ev.Kind, "no restore of the workspace is under way")
	}
	if ev.Kind == RestoreStarted && len(ev.Files) == 0 {
		return invalid(ev.Kind, "names no file to restore")
	}
	// An imported event that carries files is a rollback to a version
	// recorded elsewhere, which starts the restore as it closes it.
	restores := ev.Kind == RestoreStarted || ev.Kind == Imported
	if restores && ev.From < 0 {
		return invalid(ev.Kind, "restores from version %d", ev.From)
	}
	if ev.From != 0 && !restores {
		return invalid(ev.Kind, "only restore_started and imported name the version they restore from")
	}
	if len(ev.Files) > 0 && ev.Kind != ToolFinished && !restores && ev.Kind != FilesRestored {
		return invalid(ev.Kind, "only tool_finished and restores change workspace files")
	}
	return checkFiles(ev.Kind, ev.Files)
}

// recordFiles folds a tool call's file changes into the manifest: each
// path now holds its After, and a path seen for the first time keeps its
// Before as what it held before the session touched it.
func (a *applier) recordFiles(changes []FileChange) {
	if len(changes) == 0 {
		return
	}
	if a.own&ownFiles == 0 {
		// Sized for the changes too: a command that made a hundred
		// thousand files would otherwise grow the copy a dozen times.
		files := make(map[string]FileEntry, len(a.s.Files)+len(changes))
		maps.Copy(files, a.s.Files)
		a.s.Files = files
		a.own |= ownFiles
	}
	if a.s.Files == nil {
		a.s.Files = make(map[string]FileEntry, len(changes))
	}
	for _, c := range changes {
		e, seen := a.s.Files[c.Path]
		if !seen {
			e.Was = c.Before
		}
		e.Now = c.After
		a.s.Files[c.Path] = e
	}
}

// InGitDir reports whether the slash-separated path p is a .git
// directory or inside one, at any depth. The name is compared without
// regard to case, as git itself does on the file systems that ignore it.
// What is there is git's own (hooks it runs outside any sandbox among
// it), never a session's to write.
func InGitDir(p string) bool {
	for comp := range strings.SplitSeq(p, "/") {
		if strings.EqualFold(comp, ".git") {
			return true
		}
	}
	return false
}
