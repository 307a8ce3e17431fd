package instructions

import (
	"fmt"
	"os"
	"path/filepath"
)

// ProjectRoot is the repository root of workspace, the nearest directory
// up from it that holds .git, or the workspace itself outside a
// repository: what a project's memories are kept for.
func ProjectRoot(workspace string) string {
	ws, err := filepath.Abs(workspace)
	if err != nil {
		ws = filepath.Clean(workspace)
	}
	dirs, _ := projectDirs(ws, homeDir())
	return dirs[0]
}

// homeDir is the person's home directory, resolved, or "" when unknown.
func homeDir() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(home); err == nil {
		return real
	}
	return home
}

// projectDirs are the directories from the repository's root down to ws.
// The search stops below home: a home directory kept in git (dotfiles) is
// not the project of every folder under it, and taking it for one would
// let a downloaded folder's AGENTS.md link to any file in the home. It
// stops too at a directory others control (distrust): its .git and
// AGENTS.md may be anyone's, and what is above it is no safer to reach
// through it. note says why the search stopped there, when it did.
func projectDirs(ws, home string) (dirs []string, note string) {
	var up []string
	for dir := ws; ; dir = filepath.Dir(dir) {
		if dir == home && dir != ws {
			return []string{ws}, "" // no repository below home: the workspace alone
		}
		if why := distrust(dir); why != "" {
			if dir == ws || !holdsProject(dir) {
				// The workspace's own files say so when they are passed
				// over; a directory with nothing in it to read is not worth
				// a word (/tmp, above every other workspace).
				return []string{ws}, ""
			}
			return []string{ws}, fmt.Sprintf("%s not looked in, nor above it, for the repository and its instructions: %s", dir, why)
		}
		up = append(up, dir)
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			break
		}
		if dir == filepath.Dir(dir) {
			return []string{ws}, "" // no repository: the workspace alone
		}
	}
	for i, j := 0, len(up)-1; i < j; i, j = i+1, j-1 {
		up[i], up[j] = up[j], up[i]
	}
	return up, ""
}

// holdsProject reports whether dir holds what would make it a project's
// root or give it instructions.
func holdsProject(dir string) bool {
	for _, name := range append([]string{".git"}, names...) {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}
