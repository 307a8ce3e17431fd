package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"retrace/agent/tools"
	"retrace/state"
)

// Briefer gives a session what it knows beyond its own conversation: the
// project's instructions, and what the person asked to be remembered
// (issue 17). The session's controller implements it over the store.
type Briefer interface {
	// Instructions are read once, for a session's first message: the
	// text its system prompt adds, the files it came from, and a line
	// for each file that is there and was not read, saying why.
	Instructions(ctx context.Context) (prompt string, files []state.InstructionFile, skipped []string, err error)
	// Memories are the memories that hold in the session's project:
	// those kept for it and those kept for everywhere.
	Memories(ctx context.Context) ([]state.Memory, error)
	// Remember keeps a memory for the session's project, or for every
	// project; source says where it came from. A memory that already
	// holds there with the same text is not kept twice: known says so,
	// and m is that memory.
	Remember(ctx context.Context, text string, everywhere bool, source string) (m state.Memory, known bool, err error)
}

// A model may keep memories for its project without a question, up to
// these caps: past them, each remember call waits for the user's approval
// (and `retrace run` without --yes denies it). A memory reaches every
// later task of the project, and the memories that fit MemoryTokens are
// a few dozen, so a model that keeps more, unasked, floods the log rather
// than the prompt.
const (
	// MaxRememberedPerTask is how many memories one task keeps unasked.
	MaxRememberedPerTask = 5
	// MaxProjectMemories is how many memories a project may hold before
	// the model's next ones ask.
	MaxProjectMemories = 50
)

// MemoryTokens is what the memories may take of each request: the most
// recently changed first, until they reach it.
const MemoryTokens = 1500

// briefing is what a new task is told: the instructions when the
// session has no message yet, and the memories within MemoryTokens. It is
// nil with no Briefer, or when there is nothing to tell.
func (a *Agent) briefing(ctx context.Context, first bool) (*state.Briefing, string, error) {
	br := a.opts.Briefer
	if br == nil {
		return nil, "", nil
	}
	var b state.Briefing
	prompt := ""
	if first {
		var skipped []string
		var err error
		if prompt, b.Instructions, skipped, err = br.Instructions(ctx); err != nil {
			return nil, "", fmt.Errorf("read the project's instructions: %w", err)
		}
		// A file left out is said: otherwise an AGENTS.md that is a link
		// out of the repository, or not text, would vanish without a word.
		for _, s := range skipped {
			a.obs.Notice("instructions: " + s)
		}
	}
	all, err := br.Memories(ctx)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, "", ctx.Err()
	case err != nil:
		// The memories add to a task; they are not what it is. A damaged
		// memory log (or a database that failed to answer) is said, and
		// the task goes on told none: the briefing records that.
		a.obs.Notice(fmt.Sprintf("the memories were not read, so this task is told none: %v", err))
		all = nil
	}
	b.Memories = a.withinBudget(all)
	if b.Instructions == nil && b.Memories == nil {
		return nil, prompt, nil
	}
	return &b, prompt, nil
}

// withinBudget keeps the memories that fit MemoryTokens, the most
// recently changed first, and returns them oldest first, as kept.
func (a *Agent) withinBudget(all []state.Memory) []state.Memory {
	order := slices.Clone(all)
	slices.SortStableFunc(order, func(x, y state.Memory) int { return y.UpdatedAt.Compare(x.UpdatedAt) })
	left, keep := MemoryTokens, map[string]bool{}
	for _, m := range order {
		n := a.count.Text(memoryLine(m))
		if n > left {
			break
		}
		left -= n
		keep[m.ID] = true
	}
	var out []state.Memory
	for _, m := range all {
		if keep[m.ID] {
			out = append(out, m)
		}
	}
	return out
}

// memoryLine is one memory as a request's system message holds it.
func memoryLine(m state.Memory) string {
	scope := "this project"
	if m.Everywhere() {
		scope = "every project"
	}
	return fmt.Sprintf("\n- [%s, %s] %s", m.ID, scope, strings.Join(strings.Fields(m.Text), " "))
}

// memoriesText is the part of the system message that tells the task's
// memories, or "" when it has none.
func memoriesText(ms []state.Memory) string {
	if len(ms) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\nWhat the developer asked you to remember (kept across sessions; they see and remove these with `retrace memory`):")
	for _, m := range ms {
		b.WriteString(memoryLine(m))
	}
	return b.String()
}

// remember keeps a memory for a remember call. The call is recorded as
// started first: the memory is written outside the session, so a crash
// between the two is told as an interrupted call, not run again.
func (a *Agent) remember(ctx context.Context, call state.ToolRequest) error {
	text, everywhere, err := tools.ParseRemember(call.Arguments)
	fin := state.Event{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: call.ID}}
	switch {
	case err != nil:
		fin.Tool.Error = "invalid memory: " + err.Error()
	case a.opts.Briefer == nil:
		fin.Tool.Error = "this session keeps no memories"
	default:
		if _, err := a.commit(ctx, state.Event{Kind: state.ToolStarted, Tool: &state.ToolCall{ID: call.ID}}); err != nil {
			return err
		}
		s := a.cp.State()
		m, known, err := a.opts.Briefer.Remember(ctx, a.opts.Secret.Text(text), everywhere, fmt.Sprintf("session %s v%d", s.SessionID, s.Version))
		if err != nil {
			fin.Tool.Error = "not remembered: " + err.Error()
			break
		}
		scope := "for this project"
		if m.Everywhere() {
			scope = "for every project"
		}
		fin.Tool.Result = fmt.Sprintf("remembered %s as %s; from the next task on, it is in your instructions", scope, m.ID)
		if known {
			fin.Tool.Result = fmt.Sprintf("already remembered %s as %s; nothing new was kept", scope, m.ID)
		}
	}
	_, err = a.commit(ctx, fin)
	return err
}
