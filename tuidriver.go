package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"retrace/agent"
	"retrace/agent/llm"
	"retrace/agent/tokens"
	"retrace/agent/tools"
	"retrace/state"
	"retrace/state/transcript"
	"retrace/storage"
	"retrace/storage/boltstore"
	"retrace/tui"
)

// driver is the TUI's view of retrace: it owns the open session (a store
// cursor and an agent on it), runs tasks on a goroutine, and reports to
// the program through messages.
type driver struct {
	ctx   context.Context
	cfg   config
	store *boltstore.Store
	ws    *tools.Workspace
	tools *tools.Registry
	demo  bool
	send  func(tea.Msg)

	mu       sync.Mutex
	info     storage.SessionInfo
	cursor   *storage.Cursor
	agent    *agent.Agent
	readOnly bool
	head     state.State // the head of a read-only session
	cancel   context.CancelFunc
	decided  chan agent.Decision
}

func newDriver(ctx context.Context, cfg config, st *boltstore.Store, ws *tools.Workspace, demo bool) *driver {
	return &driver{ctx: ctx, cfg: cfg, store: st, ws: ws, tools: tools.New(ws, tools.Options{}), demo: demo,
		send: func(tea.Msg) {}, decided: make(chan agent.Decision, 1)}
}

func (d *driver) Attach(send func(tea.Msg)) { d.send = send }

// open makes id the open session: claimed for writing, or read-only when
// another process writes it.
func (d *driver) open(id string) error {
	info, err := d.store.Session(d.ctx, id)
	if err != nil {
		return err
	}
	readOnly := false
	if err := d.store.Claim(d.ctx, id); err != nil {
		if !errors.Is(err, storage.ErrBusy) {
			return err
		}
		readOnly = true
	}
	head, err := d.store.Head(d.ctx, id)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.info.ID != "" && d.info.ID != id && !d.readOnly {
		_ = d.store.Release(d.info.ID)
	}
	d.info, d.readOnly, d.head = info, readOnly, head
	d.cursor = storage.NewCursor(d.store, head)
	d.agent = d.newAgent()
	return nil
}

func (d *driver) newAgent() *agent.Agent {
	model := llm.New(llm.Config{BaseURL: d.cfg.BaseURL, APIKey: d.cfg.apiKey, Model: d.cfg.Model})
	return agent.New(d.cursor, model, d.tools, approver{d}, observer{d}, agent.Options{
		MaxIterations: d.cfg.MaxIterations, ContextWindow: d.cfg.ContextWindow,
		Workspace: d.ws.Root(), Allowed: d.cfg.AllowedTools, RestartOK: true,
	})
}

func (d *driver) Session() tui.SessionInfo {
	d.mu.Lock()
	defer d.mu.Unlock()
	info, _ := d.store.Session(d.ctx, d.info.ID)
	if info.ID == "" {
		info = d.info
	}
	out := tui.SessionInfo{ID: info.ID, Title: info.Title, Model: d.cfg.Model, Workspace: info.Workspace,
		Phase: info.Phase, Head: info.Head, Versions: info.Versions, Updated: info.UpdatedAt,
		Window: tokens.Window(d.cfg.Model, d.cfg.ContextWindow), ReadOnly: d.readOnly, Demo: d.demo}
	if t, err := d.store.Tree(d.ctx, info.ID); err == nil {
		out.Branches = len(t.Branches)
		for _, b := range t.Branches {
			if b.Current {
				out.Branch = b.ID
			}
		}
	}
	return out
}

func (d *driver) Head() state.State {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.readOnly {
		return d.head
	}
	return d.cursor.State()
}

// start runs a task on its own goroutine; one at a time.
func (d *driver) start(task func(ctx context.Context, a *agent.Agent) (state.State, error)) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.readOnly:
		return errors.New("read-only: another retrace process writes this session")
	case d.cancel != nil:
		return errors.New("a task is running")
	}
	ctx, cancel := context.WithCancel(d.ctx)
	d.cancel = cancel
	a := d.agent
	go func() {
		_, err := task(ctx, a)
		d.mu.Lock()
		d.cancel = nil
		d.mu.Unlock()
		cancel()
		d.send(tui.TaskDoneMsg{Err: err, Interrupted: errors.Is(err, agent.ErrInterrupted), Session: d.Session(), Head: d.Head()})
	}()
	return nil
}

func (d *driver) Submit(text string) error {
	d.setTitle(text)
	return d.start(func(ctx context.Context, a *agent.Agent) (state.State, error) {
		if err := a.Interrupt(ctx, "a new message replaced this unfinished task"); err != nil {
			return a.State(), err
		}
		return a.Send(ctx, text)
	})
}

func (d *driver) Resume() error {
	return d.start(func(ctx context.Context, a *agent.Agent) (state.State, error) { return a.Resume(ctx) })
}

func (d *driver) Cancel() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cancel != nil {
		d.cancel()
	}
}

// Decide hands the person's answer to the waiting approver; an answer
// nobody waits for is dropped.
func (d *driver) Decide(dec tui.Decision) {
	select {
	case d.decided <- agent.Decision{Approved: dec.Approve, Always: dec.Always, Reason: "the user said no"}:
	default:
	}
}

func (d *driver) Path(version int) ([]tui.Version, error) {
	ex, err := d.store.Export(d.ctx, d.info.ID)
	if err != nil {
		return nil, err
	}
	byVersion := make(map[int]storage.Record, len(ex.Checkpoints))
	for _, r := range ex.Checkpoints {
		byVersion[r.Version] = r
	}
	var path []tui.Version
	for v := version; v > 0; {
		r, ok := byVersion[v]
		if !ok {
			return nil, fmt.Errorf("version %d is missing from session %s", v, d.info.ID)
		}
		path = append(path, tui.Version{Version: r.Version, Parent: r.Parent, Event: r.Data, Phase: r.Phase})
		v = r.Parent
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path, nil
}

func (d *driver) Tree() (tui.Tree, error) {
	t, err := d.store.Tree(d.ctx, d.info.ID)
	if err != nil {
		return tui.Tree{}, err
	}
	out := tui.Tree{Head: t.Head}
	for _, b := range t.Branches {
		out.Branches = append(out.Branches, tui.Branch{ID: b.ID, Fork: b.Fork, First: b.First, Tip: b.Tip, Versions: b.Versions, Current: b.Current})
	}
	return out, nil
}

func (d *driver) Restore(version int) error {
	if err := d.idle(); err != nil {
		return err
	}
	if err := d.store.SetHead(d.ctx, d.info.ID, version); err != nil {
		return err
	}
	return d.open(d.info.ID)
}

// idle refuses to change the session under a running task.
func (d *driver) idle() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.readOnly {
		return errors.New("read-only: another retrace process writes this session")
	}
	if d.cancel != nil {
		return errors.New("a task is running; Esc cancels it")
	}
	return nil
}

func (d *driver) Sessions() ([]tui.SessionInfo, error) {
	list, err := d.store.Sessions(d.ctx)
	if err != nil {
		return nil, err
	}
	out := make([]tui.SessionInfo, len(list))
	for i, s := range list {
		_, busy := d.store.Holder(s.ID)
		out[i] = tui.SessionInfo{ID: s.ID, Title: s.Title, Model: s.Model, Workspace: s.Workspace, Phase: s.Phase,
			Head: s.Head, Versions: s.Versions, Updated: s.UpdatedAt, Busy: busy}
	}
	return out, nil
}

func (d *driver) Open(id string) error {
	d.mu.Lock()
	running := d.cancel != nil
	d.mu.Unlock()
	if running {
		return errors.New("a task is running; Esc cancels it")
	}
	return d.open(id)
}

func (d *driver) New() error {
	d.mu.Lock()
	running := d.cancel != nil
	d.mu.Unlock()
	if running {
		return errors.New("a task is running; Esc cancels it")
	}
	info, err := d.store.Create(d.ctx, storage.NewSession{Model: d.cfg.Model, Workspace: d.ws.Root()})
	if err != nil {
		return err
	}
	return d.open(info.ID)
}

func (d *driver) Delete(id string) error {
	if id == d.info.ID {
		return errors.New("this session is open; open another one first")
	}
	return d.store.Delete(d.ctx, id)
}

func (d *driver) SetModel(name string) error {
	if err := d.idle(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cfg.Model = name
	d.agent = d.newAgent()
	return nil
}

func (d *driver) SaveTheme(name string) error { return saveTheme(d.cfg, name) }

func (d *driver) Export(format, path string) (string, error) {
	id := d.info.ID
	if path == "" {
		path = fmt.Sprintf("retrace-%s.%s", short(id), format)
	}
	var data []byte
	if format == "json" {
		ex, err := d.store.Export(d.ctx, id)
		if err != nil {
			return "", err
		}
		data, err = jsonIndent(exportFormat{Format: "retrace-export/1", Export: ex})
		if err != nil {
			return "", err
		}
	} else {
		info := d.Session()
		data = []byte(transcript.Markdown(transcript.Header{Title: info.Title, SessionID: id, Model: info.Model,
			Workspace: info.Workspace, Version: info.Head, Versions: info.Versions, Head: info.Head, Exported: time.Now()}, d.Head()))
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return abs, os.WriteFile(abs, data, 0o600)
}

func (d *driver) Compact() error {
	if err := d.idle(); err != nil {
		return err
	}
	return d.agent.Compact(d.ctx)
}

// setTitle names an untitled session after its first message.
func (d *driver) setTitle(text string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.info.Title != "" {
		return
	}
	d.info.Title = oneLineTitle(text)
	if err := d.store.Rename(d.ctx, d.info.ID, d.info.Title); err != nil {
		d.send(tui.NoticeMsg{Text: "could not set the title: " + err.Error()})
	}
}

// approver asks the person through the TUI and waits for the answer.
type approver struct{ d *driver }

func (a approver) Approve(ctx context.Context, req agent.ApprovalRequest) (agent.Decision, error) {
	msg := tui.ApprovalMsg{Tool: req.Call.Name, Args: req.Call.Arguments}
	if p, err := a.d.tools.Preview(req.Call.Name, req.Call.Arguments); err == nil {
		msg.Summary, msg.Command, msg.Path, msg.Diff = p.Summary, p.Command, p.Path, p.Diff
	} else {
		msg.Summary = "the arguments do not make sense to retrace: " + err.Error()
	}
	select { // an answer left over from an earlier question is void
	case <-a.d.decided:
	default:
	}
	a.d.send(msg)
	select {
	case dec := <-a.d.decided:
		return dec, nil
	case <-ctx.Done():
		return agent.Decision{}, ctx.Err()
	}
}

// observer forwards the agent's reports to the program.
type observer struct{ d *driver }

func (o observer) State(s state.State) { o.d.send(tui.StateMsg{State: s}) }
func (o observer) Delta(p state.Phase, k llm.DeltaKind, text string) {
	o.d.send(tui.DeltaMsg{Phase: p, Reasoning: k == llm.Reasoning, Text: text})
}
func (o observer) Retry(r llm.Retry) {
	o.d.send(tui.RetryMsg{Text: fmt.Sprintf("retrying in %s (%d of %d): %s", r.Wait.Round(100*time.Millisecond), r.Attempt, r.Of, r.Reason), Restart: r.Restart})
}
func (o observer) Notice(text string) { o.d.send(tui.NoticeMsg{Text: text}) }
