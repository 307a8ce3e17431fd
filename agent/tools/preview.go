package tools

import (
	"bytes"
	"fmt"
	"strings"

	"retrace/state/transcript"
)

// maxDiffBytes is the largest existing file a preview reads to diff.
const maxDiffBytes = 8 << 20

// Preview is what a call will do, for the approval dialog, worked out
// without doing it. For write_file and edit_file it comes from the same
// planning Run uses, so the diff shown is the change made (unless the
// file changes in between).
type Preview struct {
	Tool    string
	Summary string // one line: "run: go test ./...", "write 120 lines to cmd/main.go (new file)", "edit internal/x.go: replace 3 lines with 5"
	Command string // run_command only
	Path    string // write_file/edit_file: the path as the model gave it
	Diff    string // write_file/edit_file: a unified diff (---/+++/@@ hunks with 3 lines of context) of the file before and after; for a new file every line is +
}

// Preview says what running the tool called name with args would do. It
// fails, with the error Run would give, when the call would fail before
// doing anything: an unknown tool, bad arguments, a path outside the
// workspace, old_text not found. Every tool has a preview, so the tool log
// can show a one-line summary of any call; only the gated ones need it
// for approval.
func (r *Registry) Preview(name, args string) (p Preview, err error) {
	t, err := r.lookup(name)
	if err != nil {
		return Preview{}, err
	}
	defer func() {
		if v := recover(); v != nil {
			p, err = Preview{}, fmt.Errorf("%s: %w: %v", name, ErrToolPanic, v)
		}
	}()
	return t.preview(args)
}

// previewWrite shows a write_file call.
func (r *Registry) previewWrite(a *writeArgs) (Preview, error) {
	c, err := r.planWrite(a)
	if err != nil {
		return Preview{}, err
	}
	p := Preview{Path: a.Path}
	lines := transcript.Count(transcript.CountLines(a.Content), "line")
	if !c.exists {
		p.Summary = fmt.Sprintf("write %s to %s (new file)", lines, oneLine(a.Path))
		p.Diff = unifiedDiff("/dev/null", "b/"+r.ws.rel(c.abs), "", a.Content)
		return p, nil
	}
	before, diffable, err := r.readForDiff(c.abs, a.Path)
	if err != nil {
		return Preview{}, err
	}
	p.Summary = fmt.Sprintf("write %s to %s (replacing %s)", lines, oneLine(a.Path), transcript.Count(transcript.CountLines(before), "line"))
	p.Diff = before
	if diffable {
		p.Diff = r.fileDiff(c.abs, before, a.Content)
		if before == a.Content {
			p.Summary += "; no change"
		}
	}
	return p, nil
}

// previewEdit shows an edit_file call.
func (r *Registry) previewEdit(a *editArgs) (Preview, error) {
	c, err := r.planEdit(a)
	if err != nil {
		return Preview{}, err
	}
	return Preview{
		Path: a.Path,
		Summary: fmt.Sprintf("edit %s: replace %s with %d",
			oneLine(a.Path), transcript.Count(transcript.CountLines(a.OldText), "line"), transcript.CountLines(a.NewText)),
		Diff: r.fileDiff(c.abs, c.before, c.after),
	}, nil
}

// fileDiff diffs a file of the workspace, named as git names it.
func (r *Registry) fileDiff(abs, before, after string) string {
	name := r.ws.rel(abs)
	return unifiedDiff("a/"+name, "b/"+name, before, after)
}

// readForDiff reads the file a write replaces. A file too large or binary
// is not diffed; the text returned then says so in its place.
func (r *Registry) readForDiff(abs, shown string) (text string, diffable bool, err error) {
	f, info, err := r.ws.openRegular(abs, shown)
	if err != nil {
		return "", false, err
	}
	f.Close()
	if info.Size() > maxDiffBytes {
		return fmt.Sprintf("file too large to diff: %d bytes", info.Size()), false, nil
	}
	before, err := r.ws.readAll(abs, shown)
	if err != nil {
		return "", false, err
	}
	if bytes.IndexByte([]byte(before[:min(len(before), sniffBytes)]), 0) >= 0 {
		return fmt.Sprintf("binary file, %d bytes; replaced with text", len(before)), false, nil
	}
	return before, true, nil
}

// previewCommand shows a run_command call.
func (r *Registry) previewCommand(a *commandArgs) (Preview, error) {
	if a.Command == "" {
		return Preview{}, invalidArgs("run_command", fmt.Errorf("command must not be empty"))
	}
	if _, _, err := r.commandTimeout(a.TimeoutSeconds); err != nil {
		return Preview{}, invalidArgs("run_command", err)
	}
	return Preview{Summary: "run: " + oneLine(a.Command), Command: a.Command}, nil
}

// previewRead summarises a read_file call. Like the other tools that need
// no approval, its preview is only a line for the tool log.
func (r *Registry) previewRead(a *readArgs) (Preview, error) {
	s := "read " + oneLine(a.Path)
	if a.StartLine != nil || a.EndLine != nil {
		start, end, err := a.lineRange()
		if err != nil {
			return Preview{}, invalidArgs("read_file", err)
		}
		if a.EndLine == nil {
			s += fmt.Sprintf(" from line %d", start)
		} else {
			s += fmt.Sprintf(" lines %d-%d", start, end)
		}
	}
	return Preview{Summary: s}, nil
}

// previewList summarises a list_files call.
func (r *Registry) previewList(a *listArgs) (Preview, error) {
	pattern, dir := a.Pattern, a.Path
	if pattern == "" {
		pattern = "**"
	}
	if dir == "" {
		dir = "."
	}
	return Preview{Summary: fmt.Sprintf("list %s in %s", oneLine(pattern), oneLine(dir))}, nil
}

// previewSearch summarises a search_text call.
func (r *Registry) previewSearch(a *searchArgs) (Preview, error) {
	s := fmt.Sprintf("search /%s/", oneLine(a.Pattern))
	if a.Path != "" {
		s += " in " + oneLine(a.Path)
	}
	if a.Glob != "" {
		s += " (" + oneLine(a.Glob) + ")"
	}
	return Preview{Summary: s}, nil
}

// previewNote summarises a note call, refusing what ParseNote refuses.
func previewNote(a *noteArgs) (Preview, error) {
	key, value, err := a.clean()
	if err != nil {
		return Preview{}, err
	}
	if value == "" {
		return Preview{Summary: "forget note " + oneLine(key)}, nil
	}
	return Preview{Summary: fmt.Sprintf("note %s: %s", oneLine(key), oneLine(value))}, nil
}

// previewRemember summarises a remember call, refusing what
// ParseRemember refuses.
func previewRemember(a *rememberArgs) (Preview, error) {
	text, everywhere, err := a.clean()
	if err != nil {
		return Preview{}, err
	}
	scope := "for this project"
	if everywhere {
		scope = "for every project"
	}
	return Preview{Summary: fmt.Sprintf("remember %s: %s", scope, oneLine(text))}, nil
}

// previewPlan summarises a set_plan call, refusing what ParsePlan refuses.
func previewPlan(a *planArgs) (Preview, error) {
	p, err := a.clean()
	if err != nil {
		return Preview{}, err
	}
	s := "plan: " + transcript.Count(len(p.Steps), "step")
	if p.Goal != "" {
		s += " to " + oneLine(p.Goal)
	}
	if p.Done > 0 {
		s += fmt.Sprintf(", %d done", p.Done)
	}
	return Preview{Summary: s}, nil
}

// oneLine fits a value the model sent into a one-line summary: its first
// line, at most 120 bytes, marked when anything was left out.
func oneLine(s string) string {
	first, rest, multi := strings.Cut(strings.TrimSpace(s), "\n")
	first = strings.TrimRight(first, "\r")
	if multi {
		return shorten(first, 120) + fmt.Sprintf(" … (+%s)", transcript.Count(transcript.CountLines(rest), "line"))
	}
	return shorten(first, 120)
}
