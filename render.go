package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"retrace/agent/rewind"
	"retrace/state"
	"retrace/state/transcript"
	"retrace/storage"
)

// Text output for people. Everything that came from a model, a tool or a
// person goes through transcript.Inert first: it is shown, never obeyed.

const timeLayout = "2006-01-02 15:04:05"

func renderSessions(w io.Writer, list []storage.SessionInfo) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTITLE\tPHASE\tVERSIONS\tUPDATED\tWORKSPACE")
	for _, s := range list {
		// The workspace last, whole: a session works there, whichever
		// directory resumes it.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", s.ID, transcript.Clip(oneLine(transcript.Inert(s.Title)), 40), s.Phase, s.Versions,
			s.UpdatedAt.Local().Format(timeLayout), first(oneLine(transcript.Inert(s.Workspace)), "-"))
	}
	return tw.Flush()
}

// showOptions are show's choices of what to print.
type showOptions struct {
	System bool // the system prompt, in full
}

func renderState(w io.Writer, info storage.SessionInfo, s state.State, files []rewind.FileDiff, opts showOptions) {
	fmt.Fprintf(w, "session   %s  %q\n", info.ID, transcript.Inert(info.Title))
	version := fmt.Sprintf("v%d of %d", s.Version, info.Versions)
	if s.Version == info.Head {
		version += " (head)"
	}
	fmt.Fprintf(w, "version   %s, parent v%d\n", version, s.ParentVersion)
	fmt.Fprintf(w, "phase     %s, iteration %d\n", s.Phase, s.Iteration)
	fmt.Fprintf(w, "tokens    %d prompt, %d completion\n", s.Usage.PromptTokens, s.Usage.CompletionTokens)
	if info.Model != "" {
		fmt.Fprintf(w, "model     %s\n", transcript.Inert(info.Model))
	}
	if info.Workspace != "" {
		fmt.Fprintf(w, "workspace %s\n", transcript.Inert(info.Workspace))
	}
	renderBriefing(w, s.Briefing)
	m := s.Memory
	if m.CurrentGoal != "" {
		section(w, "goal", m.CurrentGoal)
	}
	if len(m.Plan) > 0 {
		fmt.Fprintln(w, "\nplan")
		for i, st := range m.Plan {
			fmt.Fprintf(w, "  %d. [%s] %s\n", i+1, st.Status, oneLine(transcript.Inert(st.Text)))
		}
	}
	if len(m.Notes) > 0 {
		fmt.Fprintln(w, "\nnotes")
		keys := make([]string, 0, len(m.Notes))
		for k := range m.Notes {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(w, "  %s: %s\n", transcript.Inert(k), indent(transcript.Inert(m.Notes[k]), "    "))
		}
	}
	if len(m.AllowedTools) > 0 {
		fmt.Fprintf(w, "\nruns without asking (approved for the session): %s\n", transcript.Inert(strings.Join(m.AllowedTools, ", ")))
	}
	if len(m.ToolCalls) > 0 {
		// Each call as the interface's conversation says it; the
		// arguments in full are in the conversation below.
		fmt.Fprintln(w, "\ntool calls")
		for _, c := range m.ToolCalls {
			fmt.Fprintf(w, "  %s\n", transcript.CallOutcome(c))
		}
	}
	if len(files) > 0 {
		fmt.Fprintln(w, "\nworkspace files this session changed, up to this version (a rollback here restores them)")
		for _, f := range files {
			fmt.Fprintf(w, "  %s\n", transcript.Inert(f.Stat()))
		}
	}
	if r := s.Restoring; r != nil {
		fmt.Fprintf(w, "\nrestore open: putting back %s from v%d was stopped midway; opening the session (or 'retrace rollback') finishes it\n",
			transcript.Count(len(r.Files), "file"), r.From)
	}
	if s.Summary != "" {
		section(w, "summary of earlier turns", s.Summary)
	}
	fmt.Fprintln(w, "\nconversation")
	if len(s.History) == 0 {
		fmt.Fprintln(w, "  (nothing said yet)")
	}
	for _, msg := range s.History {
		renderMessage(w, msg, opts)
	}
	if s.FinalAnswer != "" {
		section(w, "final answer", s.FinalAnswer)
	}
	if s.ErrorMessage != "" {
		section(w, "error", s.ErrorMessage)
	}
}

// renderBriefing says what the session was told besides the conversation:
// the instruction files its system prompt holds, and the memories the
// latest task was given.
func renderBriefing(w io.Writer, b state.Briefing) {
	if len(b.Instructions) > 0 {
		fmt.Fprintln(w, "\ninstructions read when the session began (show --system prints them)")
		for _, f := range b.Instructions {
			cut := ""
			if f.Truncated {
				cut = ", cut to fit the cap"
			}
			fmt.Fprintf(w, "  %s (%s%s)\n", transcript.Inert(f.Path), transcript.Count(f.Tokens, "token"), cut)
		}
	}
	if len(b.Memories) > 0 {
		fmt.Fprintln(w, "\nmemories the latest task was told ('retrace memory' manages them)")
		for _, m := range b.Memories {
			scope := "every project"
			if !m.Everywhere() {
				scope = "this project"
			}
			fmt.Fprintf(w, "  %s (%s) %s\n", m.ID, scope, oneLine(transcript.Inert(m.Text)))
		}
	}
}

func renderMessage(w io.Writer, m state.Message, opts showOptions) {
	who := m.Role
	switch m.Role {
	case state.RoleTool:
		who = fmt.Sprintf("tool %s (%s)", transcript.Inert(m.Name), transcript.Inert(m.ToolCallID))
	case state.RoleSystem:
		// The same long text opens every session; it is what the model
		// was told, not what anyone said, so it is printed when asked.
		if !opts.System {
			fmt.Fprintln(w, "  system prompt: not shown (show --system prints it)")
			return
		}
		who = "system prompt"
	}
	thought := strings.TrimSpace(m.Reasoning)
	switch {
	case thought != "":
		// The thinking first, as the model wrote it, then what it said.
		fmt.Fprintf(w, "  %s:\n    thinking:\n      %s\n", who, indent(transcript.Inert(thought), "      "))
		if m.Content != "" {
			fmt.Fprintf(w, "    %s\n", indent(transcript.Inert(m.Content), "    "))
		}
	case m.Content != "" || len(m.ToolCalls) == 0:
		fmt.Fprintf(w, "  %s: %s\n", who, indent(transcript.Inert(m.Content), "    "))
	default:
		fmt.Fprintf(w, "  %s:\n", who)
	}
	for _, c := range m.ToolCalls {
		fmt.Fprintf(w, "    -> %s (call %s)\n       arguments: %s\n", transcript.CallSummary(c.Name, c.Arguments), transcript.Inert(c.ID),
			indent(transcript.Inert(c.Arguments), "       "))
	}
}

func renderTree(w io.Writer, info storage.SessionInfo, t storage.Tree) {
	fmt.Fprintf(w, "session %s  %q  head v%d, %s, %s\n\n",
		info.ID, transcript.Inert(info.Title), t.Head, transcript.Count(len(t.Nodes), "version"), transcript.Count(len(t.Branches), "branch"))
	if len(t.Nodes) == 0 {
		fmt.Fprintln(w, "no versions yet")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  \tVERSION\tPARENT\tBRANCH\tEVENT\tPHASE\tTIME")
	for _, n := range t.Nodes {
		mark := " "
		switch {
		case n.Head:
			mark = "*"
		case n.Current:
			mark = "|"
		}
		fmt.Fprintf(tw, "%s\tv%d\tv%d\t%d\t%s\t%s\t%s\n", mark, n.Version, n.Parent, n.Branch, n.Event, n.Phase, n.At.Local().Format(timeLayout))
	}
	tw.Flush()
	fmt.Fprintln(w, "\n* head   | on the path from the root to the head")
	fmt.Fprintln(w, "\nbranches")
	for _, b := range t.Branches {
		from := "the root"
		if b.Fork > 0 {
			from = fmt.Sprintf("v%d", b.Fork)
		}
		current := ""
		if b.Current {
			current = "  (head)"
		}
		fmt.Fprintf(w, "  %d  v%d..v%d  from %s, %s%s\n", b.ID, b.First, b.Tip, from, transcript.Count(b.Versions, "version"), current)
	}
}

func section(w io.Writer, title, text string) {
	fmt.Fprintf(w, "\n%s\n  %s\n", title, indent(transcript.Inert(text), "  "))
}

func indent(s, prefix string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+prefix)
}
