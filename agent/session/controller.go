package session

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"time"

	"retrace/agent"
	"retrace/agent/llm"
	"retrace/agent/sandbox"
	"retrace/agent/snapshot"
	"retrace/agent/tokens"
	"retrace/agent/tools"
	"retrace/state"
	"retrace/storage"
)

// Config is how a controller reaches its model and its workspace.
type Config struct {
	// Resolve picks the endpoint for a session from the one it recorded
	// (zero for a session that never sent anything): flags and the
	// environment override what was recorded. Without it, every session
	// uses Model at BaseURL with APIKey.
	Resolve func(recorded state.Endpoint) (Endpoint, error)
	BaseURL string
	APIKey  string // kept in memory only: never stored, never reported
	Model   string
	KeyEnv  string // the name of the key's variable, recorded with the session
	// ContextWindow is the model's window in tokens; 0 asks tokens.Window.
	ContextWindow int
	// MaxIterations bounds the model replies of one task; 0 is the agent's
	// default.
	MaxIterations int
	// Workspace is where a new session begins. A session opened works in
	// the workspace it recorded (workspace.go).
	Workspace *tools.Workspace
	// Allowed lists gated tools that run without asking.
	Allowed []string
	// AllowedIn, when set, lists the gated tools that run without asking
	// in the sessions of a project (Project of their workspace), in
	// place of Allowed: a tool allowed in one project must not run
	// unasked in a session of another, which a session resumed from
	// there works in.
	AllowedIn func(project string) []string
	// RestartOK lets a model call that failed after its reply began start
	// over: right for a screen that can take back the text it showed,
	// wrong for text already written to a pipe.
	RestartOK bool
	// ReadOnlyWhenBusy opens a session another process writes read-only,
	// to look at, instead of refusing it.
	ReadOnlyWhenBusy bool
	// Follow is how often a read-only session looks for its writer's
	// new checkpoints, and whether the writer let it go; 0 is every half
	// second.
	Follow time.Duration
	// Sandbox is how run_command's commands are confined, and Reach
	// what the configuration adds to it.
	Sandbox sandbox.Mode
	Reach   sandbox.Reach
	// Files says which workspace files are tracked and how large a file's
	// content may be to be kept for a rollback.
	Files snapshot.Options
	// MaxReply is the most one model reply may carry, in bytes (its text,
	// thinking and tool calls together); 0 is llm.DefaultMaxReply.
	MaxReply int
	// Instructions says where the project's instructions and the
	// person's own come from, for a new session's system prompt.
	Instructions Instructions
}

// Info describes the open session.
type Info struct {
	Session  storage.SessionInfo // as stored
	Model    string              // the model the next request goes to
	Commands sandbox.Status      // how run_command's commands are confined here
	Endpoint state.Endpoint      // and where it is served
	Window   int                 // its context window, in tokens
	Branch   int                 // the head's branch
	Branches int                 // how many branches the session has
	ReadOnly bool                // another process writes it, or Looking
	Looking  bool                // opened read-only by choice (OpenReadOnly)
}

// Listed is a session in the list of all of them.
type Listed struct {
	storage.SessionInfo
	Busy bool // another process has it open: it would open read-only
	// NoWorkspace: its recorded workspace is not a directory here, so it
	// opens only read-only (OpenReadOnly).
	NoWorkspace bool
}

// holder is what a store may tell about other processes' claims;
// boltstore's does.
type holder interface {
	Holder(id string) (pid int, held bool)
}

// Controller is one live session: see the package documentation.
type Controller struct {
	store  storage.Store
	tools  *tools.Registry
	events *stream
	base   context.Context // every task's parent; Close ends it
	end    context.CancelFunc

	// decided carries the person's answer to the one pending approval.
	decided chan agent.Decision

	mu sync.Mutex
	// ws is where the open session works, and files watches it for what
	// tool calls change and what a restore writes back; filesErr is why
	// there is no watcher. home is where new sessions begin.
	ws       *tools.Workspace
	files    *snapshot.Watcher
	filesErr error
	home     place
	// allowed are the tools Allow let run in a project's sessions, by
	// project, with Config.AllowedIn.
	allowed  map[string][]string
	cfg      Config
	ep       Endpoint // the open session's
	model    string   // set by SetModel: the model for every session from then on
	info     storage.SessionInfo
	readOnly bool
	looking  bool                // readOnly by choice: nothing follows the session
	draft    *storage.NewSession // the open session, while it is in memory only
	follower *follower           // watches the open session while it is read-only
	head     state.State
	cursor   *storage.Cursor
	agent    *agent.Agent
	task     *task // the operation under way, if any
	closed   bool
}

// task is an operation that has the session to itself: a task of the
// agent, or a compaction.
type task struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// New returns a controller on st with no session open yet. Tasks run
// under ctx: when it ends, a running task is interrupted.
func New(ctx context.Context, st storage.Store, cfg Config) *Controller {
	base, end := context.WithCancel(ctx)
	c := &Controller{
		store: st, tools: tools.New(cfg.Workspace, toolOptions(cfg, "")), events: newStream(),
		base: base, end: end, decided: make(chan agent.Decision, 1), cfg: cfg,
	}
	c.home = newPlace(cfg.Workspace, cfg.Files)
	c.moveLocked(c.home)
	return c
}

// Create starts a new session and opens it.
func (c *Controller) Create(ns storage.NewSession) error {
	c.mu.Lock()
	ns = c.completeLocked(ns)
	c.mu.Unlock()
	info, err := c.store.Create(c.base, ns)
	if err != nil {
		return err
	}
	return c.Open(info.ID)
}

// completeLocked fills in what a new session leaves out: the model and
// the workspace of this controller.
func (c *Controller) completeLocked(ns storage.NewSession) storage.NewSession {
	if ns.Model == "" {
		ns.Model = c.defaultModelLocked()
	}
	if ns.Workspace == "" {
		ns.Workspace = c.cfg.Workspace.Root()
	}
	return ns
}

// At returns session id's state at version, with every message. The
// session is named rather than taken to be the open one: a read asked
// for one session may run after another was opened.
func (c *Controller) At(id string, version int) (state.State, error) {
	if id == "" {
		return state.New(""), nil // a draft holds nothing yet
	}
	return c.store.At(c.base, id, version)
}

// Open makes id the open session, claimed for writing. A session another
// process writes is refused, or opened read-only with ReadOnlyWhenBusy.
// The session open before is let go.
func (c *Controller) Open(id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.idleLocked(false); err != nil {
		return err
	}
	return c.openLocked(id, c.cfg.ReadOnlyWhenBusy)
}

// openLocked opens id; readOnlyOK says what a session another process
// writes does: open read-only, or refuse with its *storage.BusyError.
func (c *Controller) openLocked(id string, readOnlyOK bool) error {
	info, err := c.store.Session(c.base, id)
	if err != nil {
		return err
	}
	next, err := c.placeForLocked(info.Workspace)
	if err != nil {
		return err
	}
	readOnly := false
	if err := c.store.Claim(c.base, id); err != nil {
		if !errors.Is(err, storage.ErrBusy) || !readOnlyOK {
			c.dropLocked(next)
			return err
		}
		readOnly = true
	}
	// The session's tools and files are its workspace's from here on:
	// a restore left open is finished there, never where retrace runs.
	was := c.moveLocked(next)
	// The recent part is all going on needs (state.State.Window): a long
	// session opens in the time its last turns take, not its length.
	head, err := storage.Latest(c.base, c.store, id, storage.KeepRecent)
	// A restore a stopped process left open stays so: opening writes no
	// file (FinishRestore does, when the user says so).
	if err == nil {
		err = c.setHeadLocked(head)
	}
	if err != nil {
		if !readOnly && (id != c.info.ID || c.readOnly) { // claimed here, just now
			_ = c.store.Release(id)
		}
		c.dropLocked(c.moveLocked(was))
		return err
	}
	c.dropLocked(was)
	c.letGoLocked(id)
	c.unfollowLocked()
	c.info, c.readOnly, c.looking, c.draft = info, readOnly, false, nil
	if readOnly {
		c.followLocked()
	}
	return nil
}

// letGoLocked releases the claim on the open session, unless it is next,
// the one to keep.
func (c *Controller) letGoLocked(next string) {
	if c.info.ID != "" && c.info.ID != next && !c.readOnly {
		_ = c.store.Release(c.info.ID)
	}
}

// setHeadLocked starts the agent afresh at head, with the endpoint the
// session recorded there (or the one that overrides it).
func (c *Controller) setHeadLocked(head state.State) error {
	ep, err := c.endpointFor(head.Endpoint)
	if err != nil {
		return err
	}
	if c.model != "" {
		ep.Model = c.model
	}
	c.head, c.ep = head, ep
	c.cursor = storage.NewCursor(c.store, head)
	c.agent = c.newAgentLocked()
	return nil
}

// toolOptions are the tools' options for a session whose key is read from
// keyEnv: commands see neither that variable nor OPENAI_API_KEY, so a
// command that prints its environment cannot put the key into a tool
// result, and so into the session.
func toolOptions(cfg Config, keyEnv string) tools.Options {
	hide := []string{"OPENAI_API_KEY"}
	if keyEnv != "" && keyEnv != hide[0] {
		hide = append(hide, keyEnv)
	}
	return tools.Options{Sandbox: cfg.Sandbox, Reach: cfg.Reach, HideEnv: hide}
}

func (c *Controller) newAgentLocked() *agent.Agent {
	c.tools = tools.New(c.ws, toolOptions(c.cfg, c.ep.KeyEnv))
	model := llm.New(llm.Config{BaseURL: c.ep.URL, APIKey: c.ep.APIKey, Model: c.ep.Model, MaxReply: c.cfg.MaxReply})
	secret := llm.NewScrub(c.ep.APIKey)
	opts := agent.Options{
		MaxIterations: c.cfg.MaxIterations, ContextWindow: c.cfg.ContextWindow,
		Workspace: c.ws.Root(), Allowed: c.allowedLocked(), RestartOK: c.cfg.RestartOK,
		Endpoint: c.ep.Endpoint, Files: recorder{tools: c.tools, files: c.files, err: c.filesErr, key: secret}, Secret: secret,
		Foreign: foreignOf(c.base, c.store, c.head.SessionID),
	}
	if !c.cfg.Instructions.Off {
		opts.Briefer = briefer{store: c.store, workspace: c.ws.Root(), cfg: c.cfg.Instructions, model: c.ep.Model, secret: secret}
	}
	return agent.New(c.cursor, model, c.tools, approver{c}, observer{c}, opts)
}

// Head is the open session's state at its head, as of the last
// checkpoint.
func (c *Controller) Head() state.State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.head
}

// Info describes the open session.
func (c *Controller) Info() Info {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.infoLocked()
}

func (c *Controller) infoLocked() Info {
	if c.info.ID == "" {
		return c.infoWithLocked(c.info, storage.Tree{}) // a draft: the store has nothing of it
	}
	fresh, err := c.store.Session(c.base, c.info.ID)
	if err != nil {
		fresh = c.info
	}
	t, _ := c.store.Tree(c.base, c.info.ID)
	return c.infoWithLocked(fresh, t)
}

// infoWithLocked is Info from a session's summary and version tree read
// already (the follower reads them before it takes the lock).
func (c *Controller) infoWithLocked(s storage.SessionInfo, t storage.Tree) Info {
	out := Info{Session: s, Model: c.ep.Model, Endpoint: c.ep.Endpoint, Window: tokens.Window(c.ep.Model, c.cfg.ContextWindow), ReadOnly: c.readOnly, Looking: c.looking, Commands: c.tools.Sandbox()}
	out.Branches = len(t.Branches)
	for _, b := range t.Branches {
		if b.Current {
			out.Branch = b.ID
		}
	}
	return out
}

func (c *Controller) defaultModelLocked() string {
	if c.model != "" {
		return c.model
	}
	if ep, err := c.endpointFor(state.Endpoint{}); err == nil {
		return ep.Model
	}
	return c.cfg.Model
}

// Next waits for the next event. It returns ErrClosed once the controller
// is closed and every event has been read, and ctx's error when ctx ends
// first.
func (c *Controller) Next(ctx context.Context) (Event, error) {
	if ev, ok := c.events.next(ctx); ok {
		return ev, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, ErrClosed
}

// Events yields the events as they come, until ctx ends or the controller
// is closed.
func (c *Controller) Events(ctx context.Context) iter.Seq[Event] {
	return func(yield func(Event) bool) {
		for {
			ev, ok := c.events.next(ctx)
			if !ok || !yield(ev) {
				return
			}
		}
	}
}

// Close interrupts a running task and waits for it to keep its last
// checkpoint, lets the session go, and ends the events. The store stays
// open: it is the caller's.
func (c *Controller) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	t, f := c.task, c.unfollowLocked()
	c.mu.Unlock()
	c.end()
	if t != nil {
		<-t.done
	}
	if f != nil {
		<-f.done
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.events.close()
	ferr := c.placeLocked().close()
	if c.home.ws != c.ws {
		ferr = errors.Join(ferr, c.home.close())
	}
	if c.info.ID != "" && !c.readOnly {
		if err := c.store.Release(c.info.ID); err != nil {
			return fmt.Errorf("let session %s go: %w", c.info.ID, err)
		}
	}
	return ferr
}

// idleLocked refuses to change the session under an operation, and
// (write) a session this process may only read.
func (c *Controller) idleLocked(write bool) error {
	switch {
	case c.closed:
		return ErrClosed
	case c.task != nil:
		return ErrRunning
	case write && c.draft != nil:
		return ErrDraft
	case write && c.info.ID == "":
		return ErrNoSession
	case write && c.readOnly:
		return ErrReadOnly
	}
	return nil
}
