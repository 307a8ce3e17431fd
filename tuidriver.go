package main

import (
	"context"
	"errors"

	tea "charm.land/bubbletea/v2"

	"retrace/agent"
	"retrace/agent/llm"
	"retrace/agent/rewind"
	"retrace/agent/session"
	"retrace/state"
	"retrace/storage"
	"retrace/tui"
)

// tuiDriver lets the interface drive a session controller. It only
// translates: the interface may not import the agent or the store, so it
// declares its own small types, and these methods convert to and from
// them. Every decision is the controller's.
type tuiDriver struct {
	ctrl     *session.Controller
	settings func() []tui.Setting // the preferences in force, from the command line and the config
}

func (d tuiDriver) Next() tea.Msg {
	for {
		ev, err := d.ctrl.Next(context.Background())
		if err != nil {
			return nil
		}
		if msg := d.message(ev); msg != nil {
			return msg
		}
	}
}

func (d tuiDriver) message(ev session.Event) tea.Msg {
	switch ev := ev.(type) {
	case session.StateChanged:
		return tui.StateMsg{State: ev.State}
	case session.Delta:
		return tui.DeltaMsg{Phase: ev.Phase, Reasoning: ev.Kind == llm.Reasoning, Text: ev.Text}
	case session.Retrying:
		return tui.RetryMsg{Wait: ev.Wait, Attempt: ev.Attempt, Of: ev.Of, Reason: ev.Reason, Restart: ev.Restart}
	case session.Notice:
		return tui.NoticeMsg{Text: ev.Text, Passing: ev.Passing}
	case session.ApprovalNeeded:
		return approvalMsg(ev)
	case session.TaskDone:
		return tui.TaskDoneMsg{Err: ev.Err, Interrupted: ev.Interrupted(), Session: d.info(ev.Info), Head: ev.State}
	case session.Followed:
		return tui.FollowedMsg{Session: d.info(ev.Info), Head: ev.State}
	case session.WriterGone:
		return tui.WriterGoneMsg{}
	}
	return nil
}

func approvalMsg(ev session.ApprovalNeeded) tui.ApprovalMsg {
	msg := tui.ApprovalMsg{Tool: ev.Call.Name, Args: ev.Call.Arguments}
	if ev.PreviewErr != nil {
		msg.Summary = "the arguments do not make sense to retrace: " + ev.PreviewErr.Error()
		return msg
	}
	p := ev.Preview
	msg.Summary, msg.Command, msg.Path, msg.Diff = p.Summary, p.Command, p.Path, p.Diff
	return msg
}

func (d tuiDriver) info(i session.Info) tui.SessionInfo {
	s := i.Session
	return tui.SessionInfo{ID: s.ID, Title: s.Title, Model: i.Model, Workspace: s.Workspace, Phase: s.Phase,
		Head: s.Head, Versions: s.Versions, Branch: i.Branch, Branches: i.Branches, Updated: s.UpdatedAt,
		Window: i.Window, ReadOnly: i.ReadOnly, Looking: i.Looking, Demo: i.Endpoint.BaseURL == demoEndpoint,
		Commands: i.Commands.String(), CommandsWarn: i.Commands.Warning() != "", Project: d.ctrl.Project()}
}

func (d tuiDriver) Memories() ([]state.Memory, error) {
	m, err := d.ctrl.Memories()
	return m.List, err
}

func (d tuiDriver) Remember(text string, everywhere bool) (state.Memory, bool, error) {
	return d.ctrl.Remember(text, everywhere)
}

func (d tuiDriver) Forget(id string) error {
	_, err := d.ctrl.Forget(id)
	return err
}

func (d tuiDriver) Settings() []tui.Setting {
	if d.settings == nil {
		return nil
	}
	out := d.settings()
	// The model is the session's: what it recorded, unless a flag or
	// the environment names another.
	for i, s := range out {
		if s.Name == "model" {
			out[i].Value = d.ctrl.Info().Model
		}
	}
	return out
}

func (d tuiDriver) Current() (tui.SessionInfo, state.State) {
	return d.info(d.ctrl.Info()), d.ctrl.Head()
}

func (d tuiDriver) Submit(text string) error { return d.ctrl.Submit(text) }
func (d tuiDriver) Resume() error            { return d.ctrl.Resume() }
func (d tuiDriver) Cancel()                  { d.ctrl.Cancel() }

func (d tuiDriver) Decide(dec tui.Decision) {
	d.ctrl.Decide(agent.Decision{Approved: dec.Approve, Always: dec.Always, Reason: "the user said no"})
}

func (d tuiDriver) History(version int) (tui.Tree, []tui.Version, error) {
	tree, path, err := d.ctrl.History(version)
	if err != nil {
		return tui.Tree{}, nil, err
	}
	return treeOf(tree), versionsOf(path), nil
}

func treeOf(t storage.Tree) tui.Tree {
	out := tui.Tree{Head: t.Head}
	for _, b := range t.Branches {
		out.Branches = append(out.Branches, tui.Branch{ID: b.ID, Fork: b.Fork, First: b.First, Tip: b.Tip, Versions: b.Versions, Current: b.Current, Opening: b.Opening})
	}
	return out
}

func versionsOf(path []storage.Record) []tui.Version {
	out := make([]tui.Version, len(path))
	for i, r := range path {
		out[i] = tui.Version{Version: r.Version, Parent: r.Parent, Event: r.Data, Phase: r.Phase}
	}
	return out
}

func (d tuiDriver) Whole(session string, version int) (state.State, error) {
	return d.ctrl.At(session, version)
}

func (d tuiDriver) Restore(version int, how tui.RestoreHow) (tui.Restored, error) {
	res, err := d.ctrl.Restore(version, session.Rollback{Force: how.Force, KeepFiles: how.KeepFiles})
	if changed, ok := errors.AsType[*rewind.ConflictError](err); ok {
		return tui.Restored{}, &tui.FilesChangedError{Version: changed.Version, Paths: conflictPaths(changed.Conflicts)}
	}
	if err != nil {
		return tui.Restored{}, err
	}
	return restoredOf(res), nil
}

func (d tuiDriver) FinishRestore() (tui.Restored, error) {
	res, err := d.ctrl.FinishRestore()
	if err != nil {
		return tui.Restored{}, err
	}
	return restoredOf(res), nil
}

// restoredOf is what a restore did, as the interface shows it.
func restoredOf(res rewind.Result) tui.Restored {
	failed := make([]string, len(res.Failed))
	for i, f := range res.Failed {
		failed[i] = f.Path
	}
	return tui.Restored{Files: res.Restored, NotRestorable: changePaths(res.NotRestorable), Left: changePaths(res.Left), Failed: failed}
}

func (d tuiDriver) FileDiffs(changes []state.FileChange) ([]tui.FileDiff, error) {
	diffs, err := d.ctrl.FileDiffs(changes)
	if err != nil {
		return nil, err
	}
	out := make([]tui.FileDiff, len(diffs))
	for i, f := range diffs {
		out[i] = tui.FileDiff{Stat: f.Stat(), Unified: f.Unified}
	}
	return out, nil
}

func conflictPaths(cs []rewind.Conflict) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Path
	}
	return out
}

func changePaths(cs []state.FileChange) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Path
	}
	return out
}

func (d tuiDriver) Sessions() ([]tui.SessionInfo, error) {
	list, err := d.ctrl.Sessions()
	if err != nil {
		return nil, err
	}
	out := make([]tui.SessionInfo, len(list))
	for i, s := range list {
		out[i] = tui.SessionInfo{ID: s.ID, Title: s.Title, Model: s.Model, Workspace: s.Workspace, Phase: s.Phase,
			Head: s.Head, Versions: s.Versions, Updated: s.UpdatedAt, Busy: s.Busy, NoWorkspace: s.NoWorkspace}
	}
	return out, nil
}

func (d tuiDriver) Open(id string) error         { return d.ctrl.Open(id) }
func (d tuiDriver) OpenReadOnly(id string) error { return d.ctrl.OpenReadOnly(id) }
func (d tuiDriver) TakeOver() error              { return d.ctrl.TakeOver() }
func (d tuiDriver) New() error                   { return d.ctrl.Draft(storage.NewSession{}) }
func (d tuiDriver) Delete(id string) error       { return d.ctrl.Delete(id) }
func (d tuiDriver) SetModel(name string) error   { return d.ctrl.SetModel(name) }
func (d tuiDriver) Compact() error               { return d.ctrl.Compact() }

func (d tuiDriver) Export(format, path string) (string, error) {
	return d.ctrl.WriteExport(format, path)
}
