package instructions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// A project's instructions go into the system prompt, and its root is
// what memories are kept for, so both come only from directories this
// user controls: their own or root's, and not writable by every user.
//
// A directory every user can write in is refused with the sticky bit too
// (/tmp and its like): the bit stops others removing or renaming what is
// there, not creating a .git or an AGENTS.md beside the workspace. A
// directory its group can write in is trusted: many systems give each
// user a group of their own and make their directories group-writable,
// and a team's shared checkout is written by the team anyway.

// distrust says why dir may not be a project's root or hold its
// instructions, or "" when it may. A directory that is not there holds
// nothing to distrust; one that cannot be looked at is no project.
func distrust(dir string) string {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	if err != nil {
		return fmt.Sprintf("it cannot be read (%v)", err)
	}
	if uid, ok := ownerOf(fi); ok && !ours(uid) {
		return fmt.Sprintf("it belongs to user %d, and only this user's directories or root's are trusted", uid)
	}
	if fi.Mode().Perm()&0o002 != 0 {
		return "every user can write in it, so anyone could have put a .git or an AGENTS.md there"
	}
	return ""
}

// ownerOf is the user id that owns a file, where the system says.
func ownerOf(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// ours reports whether uid is this process's user or root.
func ours(uid int) bool { return uid == 0 || uid == os.Geteuid() }
