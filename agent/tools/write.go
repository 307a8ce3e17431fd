package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"retrace/state/transcript"
)

// newFileMode is the mode of a file write_file creates; an existing file
// keeps its own.
const newFileMode fs.FileMode = 0o644

// writeArgs are write_file's arguments.
type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// editArgs are edit_file's arguments.
type editArgs struct {
	Path    string `json:"path"`
	OldText string `json:"old_text"`
	NewText string `json:"new_text"`
}

// change is a write or an edit worked out but not yet done: Preview shows
// it, Run applies it. Both go through the same planning, so what a person
// approves is what happens.
type change struct {
	abs    string
	path   string // as the model gave it
	before string // the file's content; empty for a new file
	after  string
	exists bool
	mode   fs.FileMode
}

// writeFile is write_file.
func (r *Registry) writeFile(_ context.Context, a *writeArgs) (string, error) {
	c, err := r.planWrite(a)
	if err != nil {
		return "", err
	}
	if err := c.apply(r.ws); err != nil {
		return "", err
	}
	return fmt.Sprintf("wrote %d bytes to %s", len(a.Content), a.Path), nil
}

// editFile is edit_file.
func (r *Registry) editFile(_ context.Context, a *editArgs) (string, error) {
	c, err := r.planEdit(a)
	if err != nil {
		return "", err
	}
	if err := c.apply(r.ws); err != nil {
		return "", err
	}
	return fmt.Sprintf("edited %s: replaced %s with %d", a.Path, transcript.Count(transcript.CountLines(a.OldText), "line"), transcript.CountLines(a.NewText)), nil
}

// planWrite works out a write_file. It does not read the file it
// replaces: the preview reads it only to diff it (readForDiff), within a
// bound, and a write needs none of it.
func (r *Registry) planWrite(a *writeArgs) (change, error) {
	c, err := r.target(a.Path)
	if err != nil {
		return c, err
	}
	c.after = a.Content
	return c, nil
}

// planEdit works out an edit_file: old_text must occur exactly once. A
// model usually writes "\n" line endings; in a file with "\r\n" ones the
// edit is retried with those, rather than failing on invisible characters.
func (r *Registry) planEdit(a *editArgs) (change, error) {
	if a.OldText == "" {
		return change{}, invalidArgs("edit_file", errors.New("old_text must not be empty; use write_file to create a file"))
	}
	if a.OldText == a.NewText {
		return change{}, invalidArgs("edit_file", errors.New("old_text and new_text are the same; there is nothing to change"))
	}
	c, err := r.target(a.Path)
	if err != nil {
		return c, err
	}
	if !c.exists {
		return c, fmt.Errorf("%s does not exist; use write_file to create it", a.Path)
	}
	if c.before, err = r.ws.readAll(c.abs, a.Path); err != nil {
		return c, err
	}
	old, repl := a.OldText, a.NewText
	n := strings.Count(c.before, old)
	if n == 0 && strings.Contains(c.before, "\r\n") && !strings.Contains(old, "\r") {
		old, repl = crlf(old), crlf(repl)
		n = strings.Count(c.before, old)
	}
	switch {
	case n == 0:
		return c, fmt.Errorf("old_text was not found in %s; read the file again and copy the text exactly, including whitespace and indentation", a.Path)
	case n > 1:
		return c, fmt.Errorf("old_text appears %d times in %s; include more surrounding lines so that it matches exactly once", n, a.Path)
	}
	c.after = strings.Replace(c.before, old, repl, 1)
	return c, nil
}

// crlf turns "\n" line endings into "\r\n".
func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

// target resolves the file a write or an edit changes and finds its mode.
func (r *Registry) target(p string) (change, error) {
	abs, err := r.ws.Resolve(p)
	if err != nil {
		return change{}, err
	}
	c := change{abs: abs, path: p, mode: newFileMode}
	info, err := r.ws.stat(abs, p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return c, nil
	case err != nil:
		return c, err
	case info.IsDir():
		return c, fmt.Errorf("%s is a directory", p)
	case !info.Mode().IsRegular():
		return c, fmt.Errorf("%s is not a regular file (%s)", p, info.Mode().Type())
	}
	c.exists, c.mode = true, info.Mode().Perm()
	return c, nil
}

// apply makes the change on disk.
func (c change) apply(w *Workspace) error {
	return w.writeAtomic(c.abs, c.path, []byte(c.after), c.mode)
}
