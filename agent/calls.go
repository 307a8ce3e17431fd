package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"syscall"
	"time"

	"retrace/agent/tools"
	"retrace/state"
)

// interruptedByCrash is what the model is told about a call that was
// running when retrace stopped: it may or may not have had its effect, and
// it is not run again behind anyone's back.
const interruptedByCrash = "interrupted: retrace stopped while this call was running, so it did not finish and was not run again; check its effect before repeating it"

// allowedWithoutAsking reports whether a gated tool runs without a
// question: the configuration allows it, or the person approved it for the
// rest of the session (which the state remembers across a resume).
func (a *Agent) allowedWithoutAsking(s state.State, name string) bool {
	return a.allowed[name] || slices.Contains(s.Memory.AllowedTools, name)
}

// consent is what this process knows of the user's word on the calls of
// the task it runs. A decision recorded before the task was taken up
// again was given to another process (before a crash, or on another
// machine, in a session imported since), and is not this user's word
// now: only approvals given here let a call run.
type consent struct {
	approved  map[string]bool // calls approved by a decision asked here
	inherited map[string]bool // calls already open when the task was taken up
}

// inheriting is the consent of a task taken up again at s: none given
// yet, and every open call inherited.
func inheriting(s state.State) consent {
	c := consent{inherited: map[string]bool{}}
	for _, req := range s.OpenCalls() {
		c.inherited[req.ID] = true
	}
	return c
}

// askAgain reports a remember call that asks although memories for the
// project are kept without a question when the model makes them in front
// of the user: one left open by another process, which nobody here saw
// made, or any in a session that arrived from elsewhere (Options.Foreign).
func (a *Agent) askAgain(call state.ToolRequest) bool {
	if call.Name != "remember" {
		return false
	}
	return a.here.inherited[call.ID] || (a.opts.Foreign != nil && a.opts.Foreign())
}

// runCalls settles the first open tool call; the loop comes back for the
// next. One checkpoint per step, so a crash anywhere leaves a state that
// says exactly how far each call got.
func (a *Agent) runCalls(ctx context.Context, open []state.ToolRequest) error {
	call := open[0]
	s := a.cp.State()
	entry, logged := s.OpenCallEntry(call.ID)
	finish := func(result, errText string, d time.Duration) error {
		_, err := a.commit(ctx, a.finished(call, result, errText, d, nil, nil))
		return err
	}
	if logged && !entry.StartedAt.IsZero() {
		return finish("", interruptedByCrash, 0)
	}
	if !json.Valid([]byte(call.Arguments)) {
		return finish("", fmt.Sprintf("the arguments are not valid JSON, so the call was not run: %s", oneLine(call.Arguments, 200)), 0)
	}
	switch call.Name {
	case "set_plan":
		return a.revisePlan(ctx, call)
	case "note":
		return a.note(ctx, call)
	}
	def, known := a.tools.Def(call.Name)
	approved := logged && entry.Approval == state.Approved && a.here.approved[call.ID]
	ask := known && (tools.Asks(def, call.Arguments) || a.askAgain(call)) && !a.allowedWithoutAsking(s, call.Name)
	if known && call.Name == "remember" && !ask && !approved {
		// Past a cap, a memory asks even where remember is allowed: the
		// allowance is for a few facts, not for a flood.
		ask = a.rememberCap(ctx, s) != ""
	}
	if ask && !approved {
		_, err := a.commit(ctx, state.Event{Kind: state.ApprovalRequested, Tool: &state.ToolCall{ID: call.ID}})
		return err
	}
	if call.Name == "remember" {
		return a.remember(ctx, call)
	}
	if _, err := a.commit(ctx, state.Event{Kind: state.ToolStarted, Tool: &state.ToolCall{ID: call.ID}}); err != nil {
		return err
	}
	start := time.Now()
	changed := noChanges
	// The call's own context carries what its command writes, which
	// tells its changes from the user's.
	ctx = tools.WithWrites(ctx)
	if a.opts.Files != nil {
		var err error
		if changed, err = a.opts.Files.Start(ctx, call.Name, call.Arguments); err != nil {
			// A change nobody recorded could never be rolled back: the
			// call does not run.
			return finish("", fmt.Sprintf("retrace could not read the workspace before this call, so it was not run: %v", err), time.Since(start))
		}
	}
	result, err := a.tools.Run(ctx, call.Name, call.Arguments)
	if ctx.Err() != nil {
		a.keepInterruptedChanges(ctx, call, changed, result, err, time.Since(start))
		return ctx.Err() // the interrupted event answers the call
	}
	errText := ""
	if err != nil {
		errText = err.Error()
	}
	files, blobs, ferr := changed(ctx)
	if ferr != nil {
		note := fmt.Sprintf("(retrace could not record which files this call changed, so a rollback will not restore them: %v)", ferr)
		if errors.Is(ferr, ErrContentsNotKept) {
			note = "(" + ferr.Error() + ")"
			a.obs.Notice(ferr.Error())
		}
		if errText != "" {
			errText += " " + note
		} else {
			result += "\n" + note
		}
	}
	fin := a.finished(call, result, errText, time.Since(start), files, blobs)
	_, err = a.commit(ctx, fin)
	if err != nil && len(fin.Blobs) > 0 && errors.Is(err, syscall.ENOSPC) {
		// The contents did not fit on the disk. The changes must be
		// recorded all the same: unrecorded, a rollback would leave
		// them behind without a word. Listed without their contents,
		// a rollback says it cannot put them back, and asks before it
		// touches a file the call left.
		a.obs.Notice(diskFullNote)
		_, err = a.commit(ctx, withoutContents(fin))
	}
	return err
}

// diskFullNote is what the person and the model are told of a call whose
// changes were recorded without contents; diskFullImage is why each
// image was not kept.
const (
	diskFullNote  = "the disk was full when this call ended: the files it changed are recorded without their contents, and a rollback cannot put them back"
	diskFullImage = "the disk was full when the call that made it ended"
)

// withoutContents is fin with every content it carries to the store left
// out: each image whose content only fin carries is recorded as not
// kept. Contents the store holds already stay kept.
func withoutContents(fin state.Event) state.Event {
	carried := make(map[string]bool, len(fin.Blobs))
	for _, b := range fin.Blobs {
		carried[b.Digest] = true
	}
	lean := func(img state.FileImage) state.FileImage {
		if img.Blob == "" || !carried[img.Blob] {
			return img
		}
		return state.FileImage{Size: img.Size, Mode: img.Mode, Untracked: diskFullImage}
	}
	files := make([]state.FileChange, len(fin.Files))
	for i, c := range fin.Files {
		c.Before, c.After = lean(c.Before), lean(c.After)
		files[i] = c
	}
	tool := *fin.Tool
	if tool.Error != "" {
		tool.Error += " (" + diskFullNote + ")"
	} else {
		tool.Result += "\n(" + diskFullNote + ")"
	}
	fin.Files, fin.Blobs, fin.Tool = files, nil, &tool
	return fin
}

// finished is the event that answers call: its result and error with the
// API key replaced (a tool may have read it from a file or the
// environment), and the workspace changes it made.
func (a *Agent) finished(call state.ToolRequest, result, errText string, d time.Duration, files []state.FileChange, blobs []state.Blob) state.Event {
	return state.Event{Kind: state.ToolFinished, Files: files, Blobs: blobs,
		Tool: &state.ToolCall{ID: call.ID, Result: a.opts.Secret.Text(result), Error: a.opts.Secret.Text(errText), DurationMS: d.Milliseconds()}}
}

// keepInterruptedChanges records what a call changed in the workspace
// before it was stopped, so that a rollback can undo it: the call is
// finished with what it printed and why it stopped. A call that changed
// nothing is left for the interrupted event to answer, as any other.
func (a *Agent) keepInterruptedChanges(ctx context.Context, call state.ToolRequest, changed func(context.Context) ([]state.FileChange, []state.Blob, error), result string, err error, d time.Duration) {
	keep := context.WithoutCancel(ctx)
	files, blobs, ferr := changed(keep)
	if ferr != nil && !errors.Is(ferr, ErrContentsNotKept) || len(files) == 0 {
		return
	}
	errText := "interrupted"
	if err != nil {
		errText = err.Error()
	}
	// If this checkpoint cannot be kept, the interrupted event that
	// follows cannot either, and that failure is the one reported.
	_, _ = a.commit(keep, a.finished(call, result, errText, d, files, blobs))
}

func noChanges(context.Context) ([]state.FileChange, []state.Blob, error) { return nil, nil, nil }

func (a *Agent) revisePlan(ctx context.Context, call state.ToolRequest) error {
	p, err := tools.ParsePlan(call.Arguments)
	fin := state.Event{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: call.ID}}
	if err != nil {
		fin.Tool.Error = "invalid plan: " + err.Error()
	} else {
		steps := planSteps(p)
		if _, err := a.commit(ctx, state.Event{Kind: state.PlanSet, Plan: steps, Goal: p.Goal}); err != nil {
			return err
		}
		fin.Tool.Result = planRecorded(steps)
	}
	_, err = a.commit(ctx, fin)
	return err
}

func (a *Agent) note(ctx context.Context, call state.ToolRequest) error {
	key, value, err := tools.ParseNote(call.Arguments)
	fin := state.Event{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: call.ID}}
	if err != nil {
		fin.Tool.Error = "invalid note: " + err.Error()
	} else {
		if _, err := a.commit(ctx, state.Event{Kind: state.NoteSet, NoteKey: key, NoteValue: value}); err != nil {
			return err
		}
		fin.Tool.Result = "noted " + key
		if value == "" {
			fin.Tool.Result = "removed note " + key
		}
	}
	_, err = a.commit(ctx, fin)
	return err
}

// planRecorded is what the model is told of a plan it set: how far it
// stands, and what to work on now.
func planRecorded(steps []state.Step) string {
	done, now := 0, ""
	for _, st := range steps {
		if st.Status == state.StepDone {
			done++
		}
		if st.Status == state.StepActive && now == "" {
			now = st.Text
		}
	}
	if now == "" {
		return fmt.Sprintf("plan recorded: all %d steps done; answer the developer", len(steps))
	}
	return fmt.Sprintf("plan recorded: %d of %d steps done; now: %s", done, len(steps), now)
}
