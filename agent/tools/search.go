package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"retrace/state/transcript"
)

const (
	// maxSearchLine is how much of one line is searched; what lies past
	// it in a longer line is not.
	maxSearchLine = 1 << 20
	// shownLineBytes is about how much of a matching line is shown.
	shownLineBytes = 200
)

// searchArgs are search_text's arguments.
type searchArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
	Glob    string `json:"glob"`
}

// searcher holds one search_text call's state.
type searcher struct {
	ws      *Workspace
	re      *regexp.Regexp
	out     capped
	max     int // matches
	matches int
	files   int // files searched
	stopped bool
}

// searchText is search_text: every line matching a regular expression in
// the text files under a path, as path:line: text with paths relative to
// the workspace root.
func (r *Registry) searchText(ctx context.Context, a *searchArgs) (string, error) {
	if a.Pattern == "" {
		return "", invalidArgs("search_text", errors.New("pattern must not be empty"))
	}
	re, err := regexp.Compile(a.Pattern)
	if err != nil {
		return "", invalidArgs("search_text", fmt.Errorf("invalid regular expression: %w", err))
	}
	keep, err := fileFilter(a.Glob)
	if err != nil {
		return "", invalidArgs("search_text", err)
	}
	base := a.Path
	if base == "" {
		base = "."
	}
	abs, err := r.ws.Resolve(base)
	if err != nil {
		return "", err
	}
	info, err := r.ws.stat(abs, base)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s does not exist", base)
		}
		return "", err
	}
	s := &searcher{ws: r.ws, re: re, out: capped{max: r.opts.MaxOutputBytes}, max: r.opts.MaxMatches}
	unreadable := 0
	if info.IsDir() {
		unreadable, err = r.ws.walkTree(ctx, abs, func(p, rel string, d fs.DirEntry) error {
			if !d.Type().IsRegular() || !keep(rel) {
				return nil
			}
			return s.file(ctx, p, quotePath(r.ws.rel(p)))
		})
	} else {
		err = s.file(ctx, abs, quotePath(r.ws.rel(abs)))
	}
	if err != nil && !errors.Is(err, fs.SkipAll) {
		return "", fmt.Errorf("search %s: %w", base, err)
	}
	return s.result(a.Pattern, r.opts.MaxOutputBytes) + unreadableNote(unreadable), nil
}

// fileFilter turns search_text's glob into a test on paths relative to the
// searched directory. A glob without a slash matches file names at any
// depth, as it does in grep and ripgrep; an empty glob keeps every file.
func fileFilter(pattern string) (func(rel string) bool, error) {
	if pattern == "" {
		return func(string) bool { return true }, nil
	}
	if !strings.Contains(pattern, "/") {
		if !doublestar.ValidatePattern(pattern) {
			return nil, fmt.Errorf("glob %q: %w", shorten(pattern, 200), doublestar.ErrBadPattern)
		}
		return func(rel string) bool { return doublestar.MatchUnvalidated(pattern, path.Base(rel)) }, nil
	}
	g, err := compileGlob(pattern)
	if err != nil {
		return nil, err
	}
	return func(rel string) bool { return g.match(rel, false) }, nil
}

// file searches one file, skipping binary files and files it cannot open
// (a listing of errors would crowd out the matches). It returns fs.SkipAll
// once the caps are reached.
func (s *searcher) file(ctx context.Context, abs, shown string) error {
	f, _, err := s.ws.openRegular(abs, shown)
	if err != nil {
		return nil
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	if isBinary(br) {
		return nil
	}
	s.files++
	lr := lineReader{br: br, max: maxSearchLine}
	for n := 1; ; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		line, _, err := lr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return nil
		}
		line = bytes.TrimRight(line, "\r\n")
		loc := s.re.FindIndex(line)
		if loc == nil {
			continue
		}
		if s.matches >= s.max || !s.out.add(fmt.Sprintf("%s:%d: %s", shown, n, excerpt(line, loc[0]))) {
			s.stopped = true
			return fs.SkipAll
		}
		s.matches++
	}
}

// result is what the model is told once the search ends.
func (s *searcher) result(pattern string, maxBytes int) string {
	if s.matches == 0 {
		return fmt.Sprintf("no matches for %q (searched %s)", shorten(pattern, 200), transcript.Count(s.files, "file"))
	}
	res := s.out.b.String()
	if s.stopped {
		limit := fmt.Sprintf("%d-match cap", s.max)
		if s.out.full {
			limit = sizeString(maxBytes) + " cap"
		}
		res += fmt.Sprintf("[truncated: stopped after %d matches (%s); narrow the pattern, path or glob]", s.matches, limit)
	}
	return res
}

// excerpt shows a matching line, or for a long line about shownLineBytes
// of it around where the match starts, so a hit deep in minified code is
// still visible.
func excerpt(line []byte, at int) string {
	line = bytes.ToValidUTF8(line, []byte("\uFFFD"))
	if len(line) <= shownLineBytes {
		return string(line)
	}
	at = min(at, len(line))
	start := max(0, at-shownLineBytes/4)
	for start > 0 && start < len(line) && !utf8.RuneStart(line[start]) {
		start--
	}
	end := min(len(line), start+shownLineBytes)
	text := string(cutUTF8(line[start:], end-start))
	if start > 0 {
		text = "…" + text
	}
	if end < len(line) {
		text += "…"
	}
	return text
}
