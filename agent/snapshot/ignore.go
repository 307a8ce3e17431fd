package snapshot

import (
	"bytes"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// Why a path's content is not kept. They end up in FileImage.Untracked,
// where a person reads them.
const (
	reasonSymlink    = "a symlink"
	reasonNotRegular = "not a regular file"
	reasonDirectory  = "a directory"
	reasonGitDir     = "git's own directory"
	reasonGitignore  = "ignored by .gitignore"
	reasonExclude    = "ignored by the config's exclude list"
	reasonViaSymlink = "inside a symlinked directory"
	reasonReplaced   = "replaced while it was being read"
	reasonUncached   = "its content was no longer in the content cache"
	reasonUnreadable = "could not be read: "
)

// notCompared marks an ignored directory: its own entries were looked at
// (its mtime), the files inside it were not.
func notCompared(reason string) string {
	return reason + " (a directory; its files were not compared)"
}

// gitDirName is never descended into nor kept: its contents are git's
// business, and restoring half of them would corrupt the repository.
const gitDirName = ".git"

// ignoreRules decides which paths are not tracked: the .gitignore files
// met on the way down (root first, deeper ones after, so they take
// precedence) and, above them all, the config's exclude list. A path under
// an ignored directory is never asked about: the walk does not go there,
// which is also git's rule that a file cannot be re-included when its
// directory is excluded.
type ignoreRules struct {
	gitignore []gitignore.Pattern
	exclude   []gitignore.Pattern
}

// parsePatterns reads gitignore-syntax lines; domain is the directory the
// patterns are relative to, as path components.
func parsePatterns(data []byte, domain []string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	for line := range bytes.Lines(data) {
		s := strings.TrimRight(string(line), "\r\n")
		if strings.HasPrefix(s, "#") || strings.TrimSpace(s) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(s, domain))
	}
	return ps
}

// with returns the rules plus a directory's own .gitignore patterns,
// leaving r as it was for the directory's siblings.
func (r ignoreRules) with(ps []gitignore.Pattern) ignoreRules {
	if len(ps) == 0 {
		return r
	}
	r.gitignore = append(slices.Clip(r.gitignore), ps...)
	return r
}

// reason says why the path (as components) is ignored, or "" when it is
// tracked. The last matching pattern decides, as in git; a "!" pattern
// that matches means tracked.
func (r ignoreRules) reason(path []string, isDir bool) string {
	if res := lastMatch(r.exclude, path, isDir); res != gitignore.NoMatch {
		if res == gitignore.Exclude {
			return reasonExclude
		}
		return ""
	}
	if lastMatch(r.gitignore, path, isDir) == gitignore.Exclude {
		return reasonGitignore
	}
	return ""
}

func lastMatch(ps []gitignore.Pattern, path []string, isDir bool) gitignore.MatchResult {
	for i := len(ps) - 1; i >= 0; i-- {
		if res := ps[i].Match(path, isDir); res != gitignore.NoMatch {
			return res
		}
	}
	return gitignore.NoMatch
}
