// Package instructions reads what a project tells a coding agent about
// itself: AGENTS.md, the convention Codex, Crush and others read, from the
// repository's root down to the workspace, and the person's own file for
// every project. Claude Code's CLAUDE.md stands in where a directory has
// no AGENTS.md. The text goes into a new session's system prompt, within a
// cap, and the session records which files it came from.
package instructions

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"

	"retrace/state"
)

// The file names read, in order of preference within one directory.
var names = []string{"AGENTS.md", "CLAUDE.md"}

// DefaultCap is the tokens the instructions may take in the system
// prompt, all files together: a few pages, well within any model's window
// beside the conversation.
const DefaultCap = 6000

// maxRead is how much of one file is read at most: far past any cap.
const maxRead = 1 << 20

// maxDirs is how many directories of a repository are looked in at most,
// its root and those nearest the workspace: far deeper than projects nest.
const maxDirs = 32

// File is one file's instructions: its path, and what it takes of the
// prompt, as the session records them, and its text.
type File struct {
	state.InstructionFile
	Text string // as it goes into the prompt: cut to the cap if need be
}

// Instructions are the files found, the most general first: the person's
// own, then the repository's root, down to the workspace.
type Instructions struct {
	Files []File
	// Skipped says why a file that is there was not read (unreadable,
	// not text, a link out of the repository, left out of the cap), or a
	// directory not looked in, one line each.
	Skipped []string
}

// Options says where to look.
type Options struct {
	// Workspace is the directory the agent works in.
	Workspace string
	// UserDir holds the person's own AGENTS.md ($XDG_CONFIG_HOME/retrace);
	// empty reads none.
	UserDir string
	// Cap is the tokens all files may take together; 0 is DefaultCap.
	Cap int
	// Count counts a text's tokens as the model's prompt does.
	Count func(string) int
}

// Read finds and reads the instruction files for a workspace. The
// repository's root is the nearest directory up from the workspace that
// holds .git; without one, only the workspace itself is looked in. A file
// of the repository is read only where it really is inside it: a link out
// of it is refused, since a repository can link its AGENTS.md to any file
// of the person who clones it. When the files take more than the cap, each keeps an equal share of
// it (a file that needs less leaves the rest to the others), and what does
// not fit is cut, saying so.
func Read(opts Options) (Instructions, error) {
	if opts.Cap <= 0 {
		opts.Cap = DefaultCap
	}
	ws, err := filepath.Abs(opts.Workspace)
	if err != nil {
		return Instructions{}, fmt.Errorf("instructions for %s: %w", opts.Workspace, err)
	}
	var in Instructions
	if opts.UserDir != "" {
		// The person's own file is theirs, not a repository's: a link
		// from it into a dotfiles repository is how many keep their
		// configuration, and it is followed wherever it leads.
		in.readTree(string(filepath.Separator), []string{opts.UserDir}, false)
	}
	project, note := projectDirs(ws, homeDir())
	if note != "" {
		in.Skipped = append(in.Skipped, note)
	}
	if len(project) > maxDirs {
		// Each file is held and counted: a hostile repository nested
		// thousands deep would cost gigabytes and minutes. Past the root,
		// the files nearest the workspace say the most.
		skip := project[1 : len(project)-maxDirs+1]
		in.Skipped = append(in.Skipped, fmt.Sprintf("%d directories from %s down to %s not looked in: no more than %d of a repository are",
			len(skip), skip[0], skip[len(skip)-1], maxDirs))
		project = slices.Concat(project[:1], project[len(project)-maxDirs+1:])
	}
	in.readTree(project[0], project, true)
	in.fit(opts.Cap, opts.Count)
	return in, nil
}

// readTree reads the instruction files of dirs, each of which is top or
// below it, refusing any that is not really inside top and, with owned
// set, any that a user other than this one or root controls.
func (in *Instructions) readTree(top string, dirs []string, owned bool) {
	real, err := filepath.EvalSymlinks(top)
	if errors.Is(err, fs.ErrNotExist) {
		return // no UserDir, or no workspace: nothing to read
	}
	var root *os.Root
	if err == nil {
		root, err = os.OpenRoot(real)
	}
	if err != nil {
		in.Skipped = append(in.Skipped, fmt.Sprintf("%s not read: %v", top, err))
		return
	}
	defer root.Close()
	t := tree{top: top, real: real, root: root, owned: owned}
	for _, dir := range dirs {
		f, ok, skipped := t.readDir(dir)
		in.Skipped = append(in.Skipped, skipped...)
		if ok {
			in.Files = append(in.Files, f)
		}
	}
}

// tree is a directory, the repository's root or UserDir, whose files are
// read only from inside it.
type tree struct {
	top  string   // as the caller named it
	real string   // with every link resolved
	root *os.Root // real, opened
	// owned refuses what another user controls: a project's directories
	// and files. The person's own files are read wherever they lead.
	owned bool
}

// readDir reads dir's instruction file, AGENTS.md before CLAUDE.md. An
// AGENTS.md that cannot be read is skipped, saying why, and CLAUDE.md
// stands in for it, as it would if there were none.
func (t tree) readDir(dir string) (f File, ok bool, skipped []string) {
	why := ""
	if t.owned {
		why = distrust(dir)
	}
	for _, name := range names {
		path := filepath.Join(dir, name)
		if why != "" {
			if _, err := os.Lstat(path); err == nil {
				skipped = append(skipped, fmt.Sprintf("%s not read: %s", path, why))
			}
			continue
		}
		text, err := t.read(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s not read: %v", path, err))
			continue
		}
		if strings.TrimSpace(text) == "" {
			return File{}, false, skipped // there, and empty: it says nothing
		}
		return File{InstructionFile: state.InstructionFile{Path: path}, Text: text}, true, skipped
	}
	return File{}, false, skipped
}

// read reads the file at path if, with every link resolved, it is inside
// the tree.
func (t tree) read(path string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(t.real, real)
	if err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("it links to %s, outside %s", real, t.top)
	}
	// The file may be swapped for a link out between the check and the
	// open: opening it within the root refuses such a link, where a plain
	// open would follow it.
	return readText(t.root, rel, t.owned)
}

// readText reads a regular file's text, up to maxRead bytes, and with
// owned set only from a file of this user or root. It opens without
// blocking, so that a FIFO in a file's place is refused rather than
// waited on for a writer that never comes.
func readText(root *os.Root, name string, owned bool) (string, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	if uid, ok := ownerOf(fi); owned && ok && !ours(uid) {
		return "", fmt.Errorf("it belongs to user %d, and instructions are read only from this user's files or root's", uid)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxRead))
	if err != nil {
		return "", err
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return "", errors.New("not text")
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), nil
}

// fit cuts the files to the cap: each has an equal share of it, and one
// that needs less leaves the rest to the others, so that no long file
// takes the room of a short one. It counts what each keeps.
//
// It goes round: the files within their share are kept whole, which
// leaves more for each of the rest; when none is, the shortest is cut to
// its share. A file is counted only as far as its share, so a long one
// costs the counter about its share, not its length.
func (in *Instructions) fit(limit int, count func(string) int) {
	// need is a file's tokens, or where whole is false, those of a prefix
	// that is already over the share it was counted for.
	need := make([]int, len(in.Files))
	whole := make([]bool, len(in.Files))
	pending := make([]int, len(in.Files))
	for i := range pending {
		pending[i] = i
	}
	// By length, which orders them as their tokens would, near enough,
	// without counting a long file whole.
	slices.SortStableFunc(pending, func(a, b int) int { return len(in.Files[a].Text) - len(in.Files[b].Text) })
	left := limit
	for len(pending) > 0 {
		share := left / len(pending)
		over := make([]int, 0, len(pending))
		for _, i := range pending {
			f := &in.Files[i]
			if !whole[i] && need[i] <= share {
				var p string
				p, need[i] = head(f.Text, share, count)
				whole[i] = len(p) == len(f.Text)
			}
			if need[i] > share {
				over = append(over, i)
				continue
			}
			f.Tokens, left = need[i], left-need[i]
		}
		if len(over) == len(pending) {
			// What the cut leaves of its share goes to the others.
			f := &in.Files[over[0]]
			f.Text, f.Tokens, f.Truncated = cut(f.Text, share, count), 0, true
			if f.Text != "" {
				f.Tokens = count(f.Text)
			}
			left -= f.Tokens
			over = over[1:]
		}
		pending = over
	}
	kept := in.Files[:0]
	for _, f := range in.Files {
		if f.Text != "" {
			kept = append(kept, f)
			continue
		}
		in.Skipped = append(in.Skipped, fmt.Sprintf("%s left out: its share of the cap of %d tokens was too small for any of it", f.Path, limit))
	}
	in.Files = kept
}

// head returns text and its tokens, or when text counts more than limit,
// a prefix of it, cut at a rune, that does already, and the prefix's
// tokens: all a caller needs to know of a long text, at the cost of
// counting about limit tokens of it rather than all. The tokenizer takes
// about a microsecond a byte, so a megabyte counted whole takes a second.
func head(text string, limit int, count func(string) int) (string, int) {
	// Prose and code run about four bytes a token, so twice that is
	// enough at the first count; text of longer tokens doubles it.
	for size := max(min(limit, len(text)), 1) * 8; size < len(text); size *= 2 {
		n := size
		for n > 0 && !utf8.RuneStart(text[n]) {
			n--
		}
		if c := count(text[:n]); c > limit {
			return text[:n], c
		}
	}
	return text, count(text)
}

// cut returns the longest prefix of text, ending at a line where it can,
// that counts at most limit tokens once a note that it was cut is added.
func cut(text string, limit int, count func(string) int) string {
	note := "\n[… cut here: the rest did not fit the cap on instructions]"
	limit -= count(note)
	if limit <= 0 {
		return ""
	}
	p, _ := head(text, limit, count)
	lo, hi := 0, len(text) // the longest prefix within the limit is in [lo, hi]
	for lo < hi {
		mid := (lo + hi + 1) / 2
		// Past p every prefix is over the limit too: the search takes the
		// path it would over the whole text, without counting it.
		if mid <= len(p) && count(text[:mid]) <= limit {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	for lo > 0 && lo < len(text) && !utf8.RuneStart(text[lo]) {
		lo--
	}
	kept := text[:lo]
	if nl := strings.LastIndexByte(kept, '\n'); nl > len(kept)/2 {
		kept = kept[:nl]
	}
	if kept == "" {
		return ""
	}
	return kept + note
}

// Prompt is the instructions as the system prompt holds them: each file
// under its path, the most general first, so that what comes later is
// taken to refine what came before. It is empty when there are none.
func (in Instructions) Prompt() string {
	if len(in.Files) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Instructions for this project, from its files (a later file is more specific and wins over an earlier one):")
	for _, f := range in.Files {
		fmt.Fprintf(&b, "\n\n--- %s ---\n%s", f.Path, strings.TrimRight(f.Text, "\n"))
	}
	return b.String()
}

// Recorded is what the session records of the files: paths, tokens, and
// whether each was cut.
func (in Instructions) Recorded() []state.InstructionFile {
	out := make([]state.InstructionFile, len(in.Files))
	for i, f := range in.Files {
		out[i] = f.InstructionFile
	}
	return out
}
