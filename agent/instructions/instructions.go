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
	// not text), one line each.
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
// holds .git; without one, only the workspace itself is looked in. When
// the files take more than the cap, each keeps an equal share of it (a
// file that needs less leaves the rest to the others), and what does not
// fit is cut, saying so.
func Read(opts Options) (Instructions, error) {
	if opts.Cap <= 0 {
		opts.Cap = DefaultCap
	}
	ws, err := filepath.Abs(opts.Workspace)
	if err != nil {
		return Instructions{}, fmt.Errorf("instructions for %s: %w", opts.Workspace, err)
	}
	var dirs []string
	if opts.UserDir != "" {
		dirs = append(dirs, opts.UserDir)
	}
	dirs = append(dirs, projectDirs(ws)...)

	var in Instructions
	for _, dir := range dirs {
		f, ok, err := readDir(dir)
		switch {
		case err != nil:
			in.Skipped = append(in.Skipped, err.Error())
		case ok:
			in.Files = append(in.Files, f)
		}
	}
	in.fit(opts.Cap, opts.Count)
	return in, nil
}

// ProjectRoot is the repository root of workspace, the nearest directory
// up from it that holds .git, or the workspace itself outside a
// repository: what a project's memories are kept for.
func ProjectRoot(workspace string) string {
	ws, err := filepath.Abs(workspace)
	if err != nil {
		ws = filepath.Clean(workspace)
	}
	return projectDirs(ws)[0]
}

// projectDirs are the directories from the repository's root down to ws.
func projectDirs(ws string) []string {
	var up []string
	for dir := ws; ; dir = filepath.Dir(dir) {
		up = append(up, dir)
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			break
		}
		if dir == filepath.Dir(dir) {
			return []string{ws} // no repository: the workspace alone
		}
	}
	for i, j := 0, len(up)-1; i < j; i, j = i+1, j-1 {
		up[i], up[j] = up[j], up[i]
	}
	return up
}

// readDir reads dir's instruction file, AGENTS.md before CLAUDE.md.
func readDir(dir string) (File, bool, error) {
	for _, name := range names {
		path := filepath.Join(dir, name)
		text, err := readText(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return File{}, false, fmt.Errorf("%s not read: %v", path, err)
		}
		if strings.TrimSpace(text) == "" {
			return File{}, false, nil // there, and empty: it says nothing
		}
		return File{InstructionFile: state.InstructionFile{Path: path}, Text: text}, true, nil
	}
	return File{}, false, nil
}

// readText reads a regular file's text, up to maxRead bytes. It opens
// without blocking, so that a FIFO in a file's place is refused rather
// than waited on for a writer that never comes.
func readText(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
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
func (in *Instructions) fit(limit int, count func(string) int) {
	need := make([]int, len(in.Files))
	order := make([]int, len(in.Files))
	for i, f := range in.Files {
		need[i], order[i] = count(f.Text), i
	}
	slices.SortStableFunc(order, func(a, b int) int { return need[a] - need[b] })
	left := limit
	for k, i := range order {
		f := &in.Files[i]
		share := left / (len(order) - k)
		n := need[i]
		if n > share {
			f.Text, n, f.Truncated = cut(f.Text, share, count), 0, true
			if f.Text != "" {
				n = count(f.Text)
			}
		}
		f.Tokens, left = n, left-n
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

// cut returns the longest prefix of text, ending at a line where it can,
// that counts at most limit tokens once a note that it was cut is added.
func cut(text string, limit int, count func(string) int) string {
	note := "\n[… cut here: the rest did not fit the cap on instructions]"
	limit -= count(note)
	if limit <= 0 {
		return ""
	}
	lo, hi := 0, len(text) // the longest prefix within the limit is in [lo, hi]
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if count(text[:mid]) <= limit {
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
