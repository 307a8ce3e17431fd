package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"retrace/agent/llm"
	"retrace/state"
)

// clipMark ends a message the summariser was given only the start of.
const clipMark = " […]"

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
	// A fold ends where a turn starts: after the summary's end, and at the
	// first kept turn at the latest.
	ends := starts[1 : len(starts)-keptTurns+1]
	// Positions count from the session's first message; s.History and
	// a.counts hold those from off on.
	off := s.HistoryFrom
	older := 0
	for _, m := range s.History[s.SummaryThrough-off : ends[len(ends)-1]-off] {
		if m.Role != state.RoleSystem {
			older++
		}
	}
	a.obs.Working(fmt.Sprintf("summarising %d older messages to fit the context window", older))
	a.countHistory(s)
	costs := make([]int, len(ends))
	from := s.SummaryThrough
	for i, end := range ends {
		costs[i] = foldCost(s.History[from-off:end-off], a.counts[from-off:end-off])
		from = end
	}
	for len(ends) > 0 {
		room := a.foldRoom(s.Summary)
		k := foldSize(costs, room)
		through := ends[k-1]
		ms := s.History[s.SummaryThrough-off : through-off]
		texts := make([]string, len(ms))
		for i, m := range ms {
			texts[i] = entry(m)
		}
		if k == 1 { // a turn alone may be too long for one request
			texts = clip(texts, room, a.count.Text)
		}
		msgs := []state.Message{{Role: state.RoleUser, Content: foldText(s.Summary, ms, texts)}}
		turn, err := a.model.Stream(ctx, llm.Request{Messages: llm.Messages(summarizerPrompt, msgs)}, llm.Observer{Retry: a.obs.Retry})
		if err != nil {
			return false, fmt.Errorf("summarising older turns: %w", err)
		}
		if s, err = a.commit(ctx, state.Event{Kind: state.Summarized, Text: turn.Content, Through: through, Usage: turn.Usage}); err != nil {
			return false, err
		}
		ends, costs = ends[k:], costs[k:]
	}
	return true, nil
}

// turnStarts are the positions of the user messages from s's summary's
// end on: where the turns not yet folded start.
func turnStarts(s state.State) []int {
	var starts []int
	for i := s.SummaryThrough; i < s.HistoryLen(); i++ {
		if s.History[i-s.HistoryFrom].Role == state.RoleUser {
			starts = append(starts, i)
		}
	}
	return starts
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

// foldSize is how many turns, of the costs given, the next fold takes: as
// many as fit room together, and at least one.
func foldSize(costs []int, room int) int {
	k, total := 1, costs[0]
	for k < len(costs) && total+costs[k] <= room {
		total += costs[k]
		k++
	}
	return k
}

// foldCost is what ms take in a fold, from their counts as request
// messages; the system prompt is never folded.
func foldCost(ms []state.Message, counts []int) int {
	n := 0
	for i, m := range ms {
		if m.Role != state.RoleSystem {
			n += counts[i] + entrySlack
		}
	}
	return n
}

// clip cuts the longest texts so that all of them, with entrySlack each,
// count no more than room by count: each gets an equal share (fairShare),
// and a text within its share stays whole. A cut text keeps as many of
// its runes as its share is of its count, then clipMark. Tokens are not
// spread evenly over a text, so the cut texts are counted again, and the
// shares shrink by a tenth until they fit.
func clip(texts []string, room int, count func(string) int) []string {
	sizes := make([]int, len(texts))
	for i, t := range texts {
		sizes[i] = count(t) + entrySlack
	}
	mark := count(clipMark)
	out := make([]string, len(texts))
	for goal := room; goal > 0; goal = goal * 9 / 10 {
		share := fairShare(sizes, goal)
		total := 0
		for i, t := range texts {
			out[i] = t
			if sizes[i] > share {
				r := []rune(t)
				keep := len(r) * max(share-entrySlack-mark, 0) / max(sizes[i]-entrySlack, 1)
				out[i] = string(r[:keep]) + clipMark
			}
			total += count(out[i]) + entrySlack
		}
		if total <= room {
			break
		}
	}
	return out
}

// fairShare is the largest share such that the sizes, each cut to at
// most that share, add up to no more than room (water-filling): what is
// within the share is kept whole, and what is over it gets the share.
// When everything fits whole it is room.
func fairShare(sizes []int, room int) int {
	left, n := room, len(sizes)
	sorted := slices.Clone(sizes)
	slices.Sort(sorted)
	for i, size := range sorted {
		if size*(n-i) > left {
			return left / (n - i)
		}
		left -= size
	}
	return room
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
