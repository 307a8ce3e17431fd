package agent

import (
	"context"
	"fmt"

	"retrace/state"
)

// rememberCap says why a remember call must ask although a memory for
// the project is kept without a question, or "" when it need not: the
// task kept MaxRememberedPerTask already, or the project holds
// MaxProjectMemories. Memories that cannot be read are no reason to
// trust the call: it asks.
func (a *Agent) rememberCap(ctx context.Context, s state.State) string {
	if n := unaskedMemories(s); n >= MaxRememberedPerTask {
		return fmt.Sprintf("this task already kept %d memories without asking; more need the user's approval", n)
	}
	if a.opts.Briefer == nil {
		return ""
	}
	all, err := a.opts.Briefer.Memories(ctx)
	if err != nil {
		return fmt.Sprintf("the memories kept so far could not be read (%v), so this one needs the user's approval", err)
	}
	n := 0
	for _, m := range all {
		if !m.Everywhere() {
			n++
		}
	}
	if n >= MaxProjectMemories {
		return fmt.Sprintf("this project already holds %d memories; more need the user's approval (they review them with `retrace memory list`, remove some with `retrace memory rm`, and fold away what was removed with `retrace memory prune`)", n)
	}
	return ""
}

// unaskedMemories counts the remember calls of the current task (since
// the last user message) that kept a memory without a question.
func unaskedMemories(s state.State) int {
	start := 0 // the task's user message: the last one
	for i, m := range s.History {
		if m.Role == state.RoleUser {
			start = i
		}
	}
	calls := map[string]bool{}
	for _, m := range s.History[start:] {
		for _, c := range m.ToolCalls {
			if c.Name == "remember" {
				calls[c.ID] = true
			}
		}
	}
	n := 0
	for _, c := range s.Memory.ToolCalls {
		if calls[c.ID] && c.Finished() && c.Error == "" && c.Approval == "" {
			n++
		}
	}
	return n
}
