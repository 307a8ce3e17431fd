package tools

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// glob is a compiled list_files or search_text pattern, matched by
// doublestar: "*", "?", "[...]" and "{a,b}" match within a name, and a
// "**" segment matches any number of directories (none included).
type glob struct {
	pattern string   // as given, less "." and empty segments
	segs    []string // pattern split at "/"
	fixed   int      // leading segs that each match one name; see mayMatchBelow
	dirOnly bool     // the pattern ended in "/", as in shells
}

// compileGlob checks a pattern. Patterns are relative: an absolute one or
// one with ".." could only ever match nothing, so the model is told why.
func compileGlob(pattern string) (glob, error) {
	if strings.HasPrefix(pattern, "/") {
		return glob{}, fmt.Errorf("pattern %q must be relative to path, not absolute", shorten(pattern, 200))
	}
	var segs []string
	for _, s := range strings.Split(pattern, "/") {
		switch s {
		case "", ".":
			continue
		case "..":
			return glob{}, fmt.Errorf("pattern %q must not contain ..; use path to choose the directory", shorten(pattern, 200))
		case "**":
			if len(segs) > 0 && segs[len(segs)-1] == "**" {
				continue // doublestar: "a/**/**/**" does not match "a"
			}
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		return glob{}, errors.New("pattern is empty")
	}
	g := glob{pattern: strings.Join(segs, "/"), segs: segs, dirOnly: strings.HasSuffix(pattern, "/")}
	if !doublestar.ValidatePattern(g.pattern) {
		return glob{}, fmt.Errorf("pattern %q: %w", shorten(pattern, 200), doublestar.ErrBadPattern)
	}
	// A segment stops matching one name per level at a "**", or at a
	// "{...}" holding a "/", which the split has cut in two.
	for g.fixed < len(segs) && !strings.Contains(segs[g.fixed], "**") && doublestar.ValidatePattern(segs[g.fixed]) {
		g.fixed++
	}
	return g, nil
}

// match reports whether rel, a slash-separated relative path, matches.
// A trailing "**" matches no directories as well, so "x*/**" matches "x";
// doublestar v4.10.4 misses that when the "*" before it matches nothing,
// though it says yes for "x/**" and for "xy".
func (g glob) match(rel string, isDir bool) bool {
	if !isDir && g.dirOnly {
		return false
	}
	if doublestar.MatchUnvalidated(g.pattern, rel) {
		return true
	}
	head, ok := strings.CutSuffix(g.pattern, "/**")
	return ok && doublestar.MatchUnvalidated(head, rel)
}

// mayMatchBelow reports whether anything inside the directory rel could
// match, so a walk can skip directories the pattern cannot reach. It
// holds rel's names against the pattern's fixed segments; past them, any
// depth may match. A directory no deeper than the pattern is entered even
// when only it matches: one read, for a check that stays simple.
func (g glob) mayMatchBelow(rel string) bool {
	elems := strings.Split(rel, "/")
	for i, e := range elems[:min(len(elems), g.fixed)] {
		if !doublestar.MatchUnvalidated(g.segs[i], e) {
			return false
		}
	}
	return g.fixed < len(g.segs) || len(elems) <= len(g.segs)
}
