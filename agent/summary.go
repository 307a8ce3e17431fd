package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"retrace/agent/llm"
	"retrace/state"
)

// clipMark ends a message the summariser was given only the start of;
// markTokens is about what it counts.
const (
	clipMark   = " […]"
	markTokens = 3
)

// entrySlack is what a message costs in the summariser's transcript
// beyond its own count as a request message: the newlines around it and
// the "tool NAME result" or "[calls …]" wording.
const entrySlack = 8

// minFold is the least room, in tokens, a fold gets for its turns, so a
// window too small for the prompt and the summary still makes progress;
// a server with such a window refuses the request and says so.
const minFold = 64

// summarize folds the turns before the last keptTurns into the running
// summary, by model calls, each kept as a summarized event (so it can be
// rolled back like anything else). The summariser's own requests must fit
// the window too, so the old turns go in folds of whole turns, each made
// from the summary before it and kept as its own checkpoint: a long
// session takes several, and one stopped half way keeps what it did. A
// turn too long for one request has its messages clipped in proportion.
// It reports false when there is nothing old enough to fold.
func (a *Agent) summarize(ctx context.Context) (bool, error) {
	s := a.cp.State()
	starts := turnStarts(s)
	if len(starts) <= keptTurns {
		return false, nil
	}
	cut := starts[len(starts)-keptTurns]
	older := 0
	for _, m := range s.History[s.SummaryThrough:cut] {
		if m.Role != state.RoleSystem {
			older++
		}
	}
	a.obs.Notice(fmt.Sprintf("summarising %d older messages to fit the context window", older))
	a.countHistory(s)
	for s.SummaryThrough < cut {
		through, text := a.nextFold(s, starts, cut)
		msgs := []state.Message{{Role: state.RoleUser, Content: text}}
		turn, err := a.model.Stream(ctx, llm.Request{Messages: llm.Messages(summarizerPrompt, msgs)}, llm.Observer{Retry: a.obs.Retry})
		if err != nil {
			return false, fmt.Errorf("summarising older turns: %w", err)
		}
		if s, err = a.commit(ctx, state.Event{Kind: state.Summarized, Text: turn.Content, Through: through, Usage: turn.Usage}); err != nil {
			return false, err
		}
	}
	return true, nil
}

// turnStarts are the positions of the user messages after s's summary:
// where the turns not yet folded start.
func turnStarts(s state.State) []int {
	var starts []int
	for i := s.SummaryThrough; i < len(s.History); i++ {
		if s.History[i].Role == state.RoleUser {
			starts = append(starts, i)
		}
	}
	return starts
}

// nextFold chooses the turns of the next fold, from s's summary on and no
// further than cut, and writes the summariser's transcript of them: as
// many whole turns as fit the room a request has beside the prompt and
// the previous summary, and at least one, clipped when it alone is too
// long.
func (a *Agent) nextFold(s state.State, starts []int, cut int) (through int, text string) {
	room := a.foldRoom(s.Summary)
	through, cost := s.SummaryThrough, 0
	for _, end := range starts {
		if end <= through {
			continue // the system prompt's place before the first turn
		}
		if end > cut {
			break
		}
		c := a.cost(s.History[through:end], a.counts[through:end])
		if cost > 0 && cost+c > room {
			break
		}
		through, cost = end, cost+c
	}
	ms := s.History[s.SummaryThrough:through]
	texts := make([]string, len(ms))
	for i, m := range ms {
		texts[i] = entry(m)
	}
	if cost > room {
		texts = a.clip(texts, room)
	}
	return through, foldText(s.Summary, ms, texts)
}

// foldRoom is how many tokens the turns of one fold may take: the share
// of the window a request may fill, less the summariser's prompt, the
// previous summary and the transcript's headings.
func (a *Agent) foldRoom(summary string) int {
	fixed := a.count.Messages([]state.Message{
		{Role: state.RoleSystem, Content: summarizerPrompt},
		{Role: state.RoleUser, Content: foldText(summary, nil, nil)},
	})
	return max(int(budget*float64(a.window))-fixed, minFold)
}

// cost is what ms take in a fold, from their counts as request messages.
func (a *Agent) cost(ms []state.Message, counts []int) int {
	n := 0
	for i, m := range ms {
		if m.Role != state.RoleSystem {
			n += counts[i] + entrySlack
		}
	}
	return n
}

// clip shortens the longest texts until all of them fit room tokens: each
// text keeps the same share, short ones whole. A text's share in runes
// follows its own runes per token, and the whole is counted again, since
// a cut can land between the characters of one token.
func (a *Agent) clip(texts []string, room int) []string {
	sizes := make([]int, len(texts))
	for i, t := range texts {
		sizes[i] = a.count.Text(t) + entrySlack
	}
	out := make([]string, len(texts))
	for goal := room; goal > 0; goal = goal * 9 / 10 {
		share := fairShare(sizes, goal)
		total := 0
		for i, t := range texts {
			out[i] = t
			if sizes[i] > share {
				r := []rune(t)
				keep := len(r) * max(share-entrySlack-markTokens, 1) / max(sizes[i]-entrySlack, 1)
				out[i] = string(r[:keep]) + clipMark
			}
			total += a.count.Text(out[i]) + entrySlack
		}
		if total <= room {
			break
		}
	}
	return out
}

// fairShare is the largest share s such that the sizes, each cut to at
// most s, add up to no more than room (water-filling): what is under
// the share is kept whole, and what is over it gets the same.
func fairShare(sizes []int, room int) int {
	left, n := room, len(sizes)
	sorted := append([]int(nil), sizes...)
	slices.Sort(sorted)
	for i, size := range sorted {
		if size*(n-i) > left {
			return left / (n - i)
		}
		left -= size
	}
	return room // everything fits whole
}

// entry is a message as the summariser reads it.
func entry(m state.Message) string {
	who := m.Role
	if m.Role == state.RoleTool {
		who = "tool " + m.Name + " result"
	}
	text := m.Content
	for _, c := range m.ToolCalls {
		text += fmt.Sprintf("\n[calls %s %s]", c.Name, c.Arguments)
	}
	return who + ": " + text
}

// foldText is the summariser's transcript: the summary so far and the
// messages of ms (whose entries are texts) that are not the system
// prompt, which is sent with every request and never folded.
func foldText(previous string, ms []state.Message, texts []string) string {
	var b strings.Builder
	if previous != "" {
		fmt.Fprintf(&b, "Previous summary:\n%s\n\n", previous)
	}
	b.WriteString("Turns to fold in:\n")
	for i, m := range ms {
		if m.Role != state.RoleSystem {
			fmt.Fprintf(&b, "\n%s\n", texts[i])
		}
	}
	return b.String()
}
