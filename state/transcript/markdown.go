package transcript

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"retrace/state"
)

// Header is what a markdown export says about the session besides its
// state.
type Header struct {
	Title     string
	SessionID string
	Model     string
	Workspace string
	Version   int // the version shown
	Versions  int // how many the session has
	Head      int
	Exported  time.Time
}

// Markdown renders the state at one version: what was asked, the plan, the
// conversation with every tool call and result, and the outcome. All text
// is made inert; tool output goes in fences longer than any run of
// backticks inside it, so nothing it holds can end the block early. A
// reply's thinking comes before it, folded in a <details> block, in such a
// fence too.
func Markdown(h Header, s state.State) string {
	var b strings.Builder
	title := h.Title
	if title == "" {
		title = "retrace session " + h.SessionID
	}
	fmt.Fprintf(&b, "# %s\n\n", oneLine(title))
	version := fmt.Sprintf("v%d of %d", h.Version, h.Versions)
	if h.Version == h.Head {
		version += " (head)"
	}
	fields := [][2]string{
		{"Session", "`" + h.SessionID + "`"},
		{"Version", version},
		{"Phase", s.Phase.String()},
		{"Model", h.Model},
		{"Workspace", h.Workspace},
		{"Tokens", fmt.Sprintf("%d prompt, %d completion", s.Usage.PromptTokens, s.Usage.CompletionTokens)},
	}
	if !h.Exported.IsZero() {
		fields = append(fields, [2]string{"Exported", h.Exported.Format(time.RFC3339)})
	}
	for _, f := range fields {
		if f[1] != "" {
			fmt.Fprintf(&b, "- **%s:** %s\n", f[0], oneLine(f[1]))
		}
	}
	writeMemory(&b, s)
	b.WriteString("\n## Conversation\n")
	if s.Summary != "" {
		fmt.Fprintf(&b, "\n> **Summary of earlier turns:** %s\n", oneLine(s.Summary))
	}
	for _, m := range s.History {
		writeMessage(&b, m)
	}
	if s.ErrorMessage != "" {
		fmt.Fprintf(&b, "\n## Error\n\n%s\n", Inert(s.ErrorMessage))
	}
	return b.String()
}

func writeMemory(b *strings.Builder, s state.State) {
	m := s.Memory
	if m.CurrentGoal != "" {
		fmt.Fprintf(b, "\n## Goal\n\n%s\n", Inert(m.CurrentGoal))
	}
	if len(m.Plan) > 0 {
		b.WriteString("\n## Plan\n\n")
		for _, st := range m.Plan {
			box := " "
			if st.Status == state.StepDone {
				box = "x"
			}
			fmt.Fprintf(b, "- [%s] %s (%s)\n", box, oneLine(st.Text), st.Status)
		}
	}
	if len(m.Notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		keys := make([]string, 0, len(m.Notes))
		for k := range m.Notes {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(b, "- **%s:** %s\n", oneLine(k), oneLine(m.Notes[k]))
		}
	}
}

func writeMessage(b *strings.Builder, m state.Message) {
	switch m.Role {
	case state.RoleTool:
		fmt.Fprintf(b, "\n### Tool result: %s (%s)\n\n%s", oneLine(m.Name), oneLine(m.ToolCallID), fence(m.Content))
		return
	case state.RoleSystem:
		fmt.Fprintf(b, "\n### System\n\n%s", fence(m.Content))
		return
	}
	role := map[string]string{state.RoleUser: "User", state.RoleAssistant: "Assistant"}[m.Role]
	fmt.Fprintf(b, "\n### %s\n", role)
	if thought := strings.TrimSpace(m.Reasoning); thought != "" {
		// Folded, as the interface shows it; the fence keeps whatever the
		// thinking holds (markdown, HTML, a closing tag) as text.
		fmt.Fprintf(b, "\n<details>\n<summary>Thinking</summary>\n\n%s\n</details>\n", fence(thought))
	}
	if m.Content != "" {
		fmt.Fprintf(b, "\n%s\n", Inert(m.Content))
	}
	for _, c := range m.ToolCalls {
		// What the call does, as the interface and show say it, then
		// its arguments in full.
		fmt.Fprintf(b, "\n**Tool call:** %s (`%s`, %s)\n\n%s", CallSummary(c.Name, c.Arguments), oneLine(c.Name), oneLine(c.ID), fence(c.Arguments))
	}
}

// fence puts text in a code block whose fence is longer than any run of
// backticks in it.
func fence(text string) string {
	longest, run := 0, 0
	for _, r := range text {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	text = Inert(text)
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return f + "text\n" + text + f + "\n"
}

// oneLine makes text safe inside a single markdown line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(Inert(s)), " ")
}
