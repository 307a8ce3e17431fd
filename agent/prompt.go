package agent

import (
	"fmt"
	"sort"
	"strings"

	"retrace/state"
)

// systemPrompt opens every session. It is kept in the session's history,
// so each version shows exactly what the model was told.
func systemPrompt(workspace string) string {
	return fmt.Sprintf(`You are retrace, a careful coding agent working in a terminal for a developer.
You work in the directory %s; file paths are relative to it, and nothing outside it can be touched.
Read before you change anything. Prefer small, exact edits (edit_file) over rewriting whole files.
Tools that change files or run commands may need the developer's approval; if a call is denied, respect that and find another way or explain.
Keep notes (the note tool) of facts you will need later; they stay with the session.
Be brief and concrete in what you write to the developer.`, workspace)
}

const planningInstructions = `Decide how to handle the developer's latest message.
If it can be answered directly (a greeting, a question you can answer from what you know), answer it now in plain text and call no tool.
Otherwise call set_plan with a short list of concrete steps (usually 1 to 5); in the same reply you may already call the tools the first step needs.`

const workingInstructions = `You are working on the developer's latest message, with the plan above. Read the tool results.
If there is more to do, call the tools the work needs next; as steps finish, call set_plan again with the same steps and done set to how many are finished (change the steps if the plan no longer fits).
When the work is done, reply with the final answer for the developer (what was done, and the result, briefly) and call no tool.`

// goOn ends a request whose history ends with the model's own words (a
// reply cut off by an interruption, or kept by an earlier retrace): every
// request must end with a user or tool message, or strict servers refuse
// it and others take the reply as one to continue.
const goOn = "Go on with the task."

const summarizerPrompt = `You keep a running summary of a long working session between a developer and a coding agent, so the agent can go on when the older turns are no longer in view.
Write the new summary: the previous summary (if any) merged with the turns below. Keep every fact, decision, file name, command result and open question that later work may need; drop pleasantries and repetition.
Write plain text, at most about 400 words.`

// systemText is everything the model is told besides the conversation:
// the session's system prompt, the summary of turns out of view, the
// working memory, and what to do now.
func systemText(s state.State, instructions string) string {
	var b strings.Builder
	b.WriteString(s.SystemPrompt())
	b.WriteString(memoriesText(s.Briefing.Memories))
	if s.Summary != "" {
		fmt.Fprintf(&b, "\n\nSummary of the earlier part of this session (those turns are no longer shown):\n%s", s.Summary)
	}
	// There is always a goal: the person's message (Send refuses an empty
	// one), or what set_plan made of it.
	m := s.Memory
	fmt.Fprintf(&b, "\n\nWorking memory:\nGoal: %s", m.CurrentGoal)
	for i, st := range m.Plan {
		fmt.Fprintf(&b, "\nStep %d [%s]: %s", i+1, st.Status, st.Text)
	}
	keys := make([]string, 0, len(m.Notes))
	for k := range m.Notes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "\nNote %s: %s", k, m.Notes[k])
	}
	b.WriteString("\n\n")
	b.WriteString(instructions)
	return b.String()
}

// oneLine shortens text to one line of at most n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
