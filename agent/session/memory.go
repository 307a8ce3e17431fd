package session

import (
	"context"

	"retrace/agent/instructions"
	"retrace/agent/llm"
	"retrace/agent/tokens"
	"retrace/state"
	"retrace/storage"
)

// Instructions says where a session's instructions come from (issue 17).
type Instructions struct {
	// UserDir holds the person's own AGENTS.md, for every project
	// ($XDG_CONFIG_HOME/retrace); empty reads none.
	UserDir string
	// Cap is the tokens the instructions may take; 0 is the default.
	Cap int
	// Off reads no instruction file and keeps no memory in the prompt.
	Off bool
}

// Project is the project memories are kept for: the repository root of
// the workspace, or the workspace itself outside a repository.
func Project(workspace string) string { return instructions.ProjectRoot(workspace) }

// briefer is the agent's Briefer over the session's store: instructions
// read from the workspace, memories from the store's memory log.
type briefer struct {
	store     storage.Store
	workspace string
	cfg       Instructions
	model     string
	secret    llm.Scrub
}

func (b briefer) Instructions(context.Context) (string, []state.InstructionFile, []string, error) {
	in, err := instructions.Read(instructions.Options{Workspace: b.workspace, UserDir: b.cfg.UserDir, Cap: b.cfg.Cap, Count: tokens.NewCounter(b.model).Text})
	if err != nil {
		return "", nil, nil, err
	}
	// A project's file may hold the key (a deploy note): the model and the
	// session are told it replaced, as with a file a tool reads.
	return b.secret.Text(in.Prompt()), in.Recorded(), in.Skipped, nil
}

func (b briefer) Memories(ctx context.Context) ([]state.Memory, error) {
	m, err := b.store.MemoriesNow(ctx)
	if err != nil {
		return nil, err
	}
	return m.For(Project(b.workspace)), nil
}

func (b briefer) Remember(ctx context.Context, text string, everywhere bool, source string) (state.Memory, bool, error) {
	return Remember(ctx, b.store, b.workspace, text, everywhere, source, b.secret)
}

// Remember keeps a memory in log, for workspace's project or, with
// everywhere set, for every project. The text is kept with the API key
// replaced: whoever adds a memory (the model, /remember, the command
// line) may have pasted it, and a memory reaches every later prompt and
// export. A memory that already holds there with the same text is
// returned instead, with known set: a model asked again after a crash
// cut its first remember call short, or told the same fact twice, keeps
// it once. Two processes remembering the same text at the same moment
// may still both keep it; that is harmless.
func Remember(ctx context.Context, log storage.MemoryLog, workspace, text string, everywhere bool, source string, secret llm.Scrub) (m state.Memory, known bool, err error) {
	m = state.Memory{Text: secret.Text(text), Source: source}
	if !everywhere {
		m.Project = Project(workspace)
	}
	now, err := log.MemoriesNow(ctx)
	if err != nil {
		return state.Memory{}, false, err
	}
	if same, ok := now.Holding(m); ok {
		return same, true, nil
	}
	kept, err := log.AppendMemory(ctx, state.MemoryEvent{Kind: state.MemoryAdded, Memory: m})
	return kept.Memory, false, err
}

// Remember keeps a memory for the open session's project, or for every
// project: the interface's /remember.
func (c *Controller) Remember(text string, everywhere bool) (m state.Memory, known bool, err error) {
	c.mu.Lock()
	source := "the interface"
	if c.info.ID != "" {
		source = "the interface, in session " + Short(c.info.ID)
	}
	secret := llm.NewScrub(c.ep.APIKey)
	workspace := c.ws.Root()
	c.mu.Unlock()
	return Remember(c.base, c.store, workspace, text, everywhere, source, secret)
}

// EditMemory gives the memory id (or an unambiguous prefix of it) a new
// text, with the API key replaced as Remember replaces it.
func EditMemory(ctx context.Context, log storage.MemoryLog, id, text string, secret llm.Scrub) (state.MemoryEvent, error) {
	return log.AppendMemory(ctx, state.MemoryEvent{Kind: state.MemoryEdited, Memory: state.Memory{ID: id, Text: secret.Text(text)}})
}

// Project is what the memories the open session keeps are kept for: its
// workspace's project.
func (c *Controller) Project() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Project(c.ws.Root())
}

// Memories are every memory the store keeps, as of now.
func (c *Controller) Memories() (state.Memories, error) {
	return c.store.MemoriesNow(c.base)
}

// Forget removes a memory, named by its id or a prefix of it.
func (c *Controller) Forget(id string) (state.Memory, error) {
	ev, err := c.store.AppendMemory(c.base, state.MemoryEvent{Kind: state.MemoryRemoved, Memory: state.Memory{ID: id}})
	return ev.Memory, err
}
