package snapshot

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// Why a path's content is not kept. They end up in FileImage.Untracked,
// where a person reads them.
const (
	reasonSymlink    = "a symlink"
	reasonNotRegular = "not a regular file"
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
	// key fingerprints the patterns: rules with equal keys decide every
	// path alike, so a scan may take the last scan's decisions for a
	// directory whose rules have not changed instead of matching again.
	key string
}

// newIgnoreRules starts the rules at the root, with the exclude list.
func newIgnoreRules(exclude []string) ignoreRules {
	joined := []byte(strings.Join(exclude, "\n"))
	return ignoreRules{exclude: parsePatterns(joined, nil), key: fingerprint("exclude", joined)}
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

// with returns the rules plus those of the .gitignore in dir (components
// domain), whose content is data, leaving r as it was for the directory's
// siblings.
func (r ignoreRules) with(dir string, domain []string, data []byte) ignoreRules {
	r.gitignore = append(slices.Clip(r.gitignore), parsePatterns(data, domain)...)
	r.key += fingerprint(dir, data)
	return r
}

func fingerprint(name string, data []byte) string {
	sum := sha256.Sum256(data)
	return "|" + name + ":" + hex.EncodeToString(sum[:8])
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
