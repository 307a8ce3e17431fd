package tools

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// glob is a compiled list_files or search_text pattern: slash-separated
// segments, each matched against one path element with path.Match, except
// "**", which matches any number of elements (none included).
type glob struct {
	segs    []string
	dirOnly bool // the pattern ended in "/", as in shells
}

// compileGlob checks a pattern. Patterns are relative: an absolute one or
// one with ".." could only ever match nothing, so the model is told why.
func compileGlob(pattern string) (glob, error) {
	if strings.HasPrefix(pattern, "/") {
		return glob{}, fmt.Errorf("pattern %q must be relative to path, not absolute", shorten(pattern, 200))
	}
	var segs []string
	for _, s := range strings.Split(pattern, "/") {
		switch {
		case s == "" || s == ".":
			continue
		case s == "..":
			return glob{}, fmt.Errorf("pattern %q must not contain ..; use path to choose the directory", shorten(pattern, 200))
		case s == "**":
			if len(segs) > 0 && segs[len(segs)-1] == "**" {
				continue
			}
		default:
			if _, err := path.Match(s, ""); err != nil {
				return glob{}, fmt.Errorf("pattern %q: %w", shorten(pattern, 200), err)
			}
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		return glob{}, errors.New("pattern is empty")
	}
	return glob{segs: segs, dirOnly: strings.HasSuffix(pattern, "/")}, nil
}

// match reports whether rel, a slash-separated relative path, matches.
func (g glob) match(rel string, isDir bool) bool {
	return (isDir || !g.dirOnly) && matchSegs(g.segs, strings.Split(rel, "/"), false)
}

// mayMatchBelow reports whether anything inside the directory rel could
// match, so a walk can skip directories the pattern cannot reach.
func (g glob) mayMatchBelow(rel string) bool {
	return matchSegs(g.segs, strings.Split(rel, "/"), true)
}

// matchSegs matches pattern segments against path elements by dynamic
// programming over (segment, element) pairs, so a pattern with many "**"
// costs len(pat)*len(elems) matches, never an exponential backtrack. With
// prefix set, running out of elements counts as a match: the elements are
// a directory and the rest of the pattern could match below it.
func matchSegs(pat, elems []string, prefix bool) bool {
	// next[j] is whether pat[i+1:] matches elems[j:]; cur is the row for i.
	next := make([]bool, len(elems)+1)
	next[len(elems)] = true
	for i := len(pat) - 1; i >= 0; i-- {
		cur := make([]bool, len(elems)+1)
		cur[len(elems)] = prefix || (pat[i] == "**" && next[len(elems)])
		for j := len(elems) - 1; j >= 0; j-- {
			if pat[i] == "**" {
				cur[j] = next[j] || cur[j+1]
				continue
			}
			ok, _ := path.Match(pat[i], elems[j])
			cur[j] = ok && next[j+1]
		}
		next = cur
	}
	return next[0]
}
