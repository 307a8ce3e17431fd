package tui

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"retrace/state"
	"retrace/state/transcript"
	"retrace/themes"
	"retrace/tui/markdown"
)

// conversation is the pane that shows the history and the reply being
// streamed. Only what is visible is rendered; each message's rendering is
// kept per width, so a long session costs what its last screenful costs.
type conversation struct {
	st *themes.Styles
	// history holds the messages from position from on. A long session
	// is opened with its recent part (state.State.Window); earlier holds
	// the messages before it once they are read, nil until then.
	history []state.Message
	from    int
	earlier []state.Message
	unread  string // why earlier is nil: "being read", or that it failed
	// calls is the tool log, for what each result's call did; callsGen
	// counts its changes, so a result drawn from an older log is drawn
	// again.
	calls        []state.ToolCall
	earlierCalls []state.ToolCall // the log's calls before calls, with earlier
	callsGen     int
	live         live // the reply being streamed
	errText      string
	// offset is how many lines the view is scrolled up from the bottom;
	// 0 follows the bottom as text arrives.
	offset int
	folded bool // reasoning folded to one line
	// summaryThrough is how many messages /compact (or the window)
	// summarised; a line below the last of them says so.
	summaryThrough int
	cache          map[int]rendered
}

// live is streamed text not yet in the history.
type live struct {
	active    bool
	text      string
	reasoning string
}

// rendered is a message drawn at a width with the thinking folded or
// not: toggling the fold draws it again.
type rendered struct {
	msg    state.Message
	width  int
	folded bool
	calls  int // callsGen when drawn
	lines  []string
}

func newConversation(st *themes.Styles) *conversation {
	return &conversation{st: st, cache: map[int]rendered{}, folded: true, unread: "being read"}
}

// SetHistory replaces the messages shown: h, from position from on.
func (c *conversation) SetHistory(h []state.Message, from int) { c.history, c.from = h, from }

// SetEarlier gives the messages before the history's first, and the tool
// calls before the log's first; nil when they are not read (yet).
func (c *conversation) SetEarlier(ms []state.Message, calls []state.ToolCall) {
	if len(calls) != len(c.earlierCalls) {
		c.callsGen++
	}
	c.earlier, c.earlierCalls = ms, calls
}

// SetEarlierUnread says why the earlier messages are not shown yet.
func (c *conversation) SetEarlierUnread(why string) { c.unread = why }

// first is the position of the first message the pane can show.
func (c *conversation) first() int {
	if c.earlier != nil {
		return 0
	}
	return c.from
}

// at returns the message at position i, which must be one the pane can
// show (first() on).
func (c *conversation) at(i int) state.Message {
	if i < c.from {
		return c.earlier[i]
	}
	return c.history[i-c.from]
}

// SetSummary marks where the older turns were summarised: the model
// sees a summary in place of history[:through].
func (c *conversation) SetSummary(through int) { c.summaryThrough = through }

// SetCalls gives the tool log the history's calls are in.
func (c *conversation) SetCalls(log []state.ToolCall) {
	if !slices.Equal(log, c.calls) {
		c.callsGen++
	}
	c.calls = log
}

// SetError shows how the last task failed, below the history.
func (c *conversation) SetError(text string) { c.errText = text }

// Stream adds streamed text.
func (c *conversation) Stream(reasoning bool, text string) {
	c.live.active = true
	if reasoning {
		c.live.reasoning += text
	} else {
		c.live.text += text
	}
}

// EndStream drops the streamed text (the checkpointed message replaces it).
func (c *conversation) EndStream() { c.live = live{} }

// Restart voids what streamed: the reply starts over.
func (c *conversation) Restart() { c.live = live{active: true} }

// Scroll moves the view by n lines (positive: up, into the past).
func (c *conversation) Scroll(n int) { c.offset = max(c.offset+n, 0) }

// Top scrolls to the first message; the next Render stops the offset
// there.
func (c *conversation) Top() { c.offset = math.MaxInt / 2 }

// Bottom follows the newest text again.
func (c *conversation) Bottom() { c.offset = 0 }

// ToggleReasoning folds or unfolds the model's thinking: the reply being
// streamed and every kept reply at once.
func (c *conversation) ToggleReasoning() { c.folded = !c.folded }

// Render draws the last screenful (above the scroll offset) in width×height.
// It walks from the newest message up only as far as the view reaches,
// and copies only the lines it shows: scrolled far up a long session, a
// frame costs a walk over cached renderings, not a copy of them all.
func (c *conversation) Render(width, height int) []string {
	if width <= 0 || height <= 0 {
		return nil
	}
	var blocks [][]string // the newest first; each block's lines in order
	count := 0
	push := func(lines ...string) {
		blocks = append(blocks, lines)
		count += len(lines)
	}
	if c.errText != "" {
		push(c.errorBlock(width)...)
	}
	if c.live.active {
		// A blank line under it, as under each kept message: the kept
		// reply takes its place without moving the lines above.
		push("")
		push(c.liveBlock(width)...)
	}
	need := height + c.offset
	first := c.first()
	for i := c.from + len(c.history) - 1; i >= first && count < need; i-- {
		if i == c.summaryThrough-1 {
			push(c.summaryMark(width), "")
		}
		if lines := c.message(i, width); len(lines) > 0 {
			push("")
			push(lines...)
		}
	}
	if first > 0 && count < need {
		push(c.st.Chat.Notice.Render(fit(fmt.Sprintf("… %d earlier messages, %s", first, c.unread), width)), "")
	}
	if count < need {
		c.offset = max(count-height, 0) // scrolled past the top: stop there
	}
	// The lines shown are [start, end) counted from the top of what was
	// walked.
	end := count - c.offset
	start := max(end-height, 0)
	shown := make([]string, 0, end-start)
	at := 0 // the line the next block (going down) starts at
	for k := len(blocks) - 1; k >= 0 && at < end; k-- {
		b := blocks[k]
		for j := max(start, at); j < min(end, at+len(b)); j++ {
			shown = append(shown, b[j-at])
		}
		at += len(b)
	}
	return block(shown, width, height)
}

// message renders history[i], from the cache when it has not changed.
func (c *conversation) message(i, width int) []string {
	m := c.at(i)
	if r, ok := c.cache[i]; ok && r.width == width && r.folded == c.folded && sameMessage(r.msg, m) &&
		(m.Role != state.RoleTool || r.calls == c.callsGen) {
		return r.lines
	}
	lines := c.renderMessage(i, width)
	c.cache[i] = rendered{msg: m, width: width, folded: c.folded, calls: c.callsGen, lines: lines}
	return lines
}

// sameMessage compares messages cheaply: strings sharing memory compare in
// constant time, and a message in the history never changes.
func sameMessage(a, b state.Message) bool {
	return a.Role == b.Role && a.Content == b.Content && a.Reasoning == b.Reasoning &&
		a.ToolCallID == b.ToolCallID && len(a.ToolCalls) == len(b.ToolCalls)
}

func (c *conversation) renderMessage(i, width int) []string {
	m := c.at(i)
	s := c.st.Chat
	switch m.Role {
	case state.RoleSystem:
		// What retrace told the model is the same in every session and
		// is not part of the conversation a person reads; show and the
		// export keep it.
		return nil
	case state.RoleUser:
		return c.userMessage(m.Content, width)
	case state.RoleTool:
		return c.toolResult(i, width)
	}
	out := []string{s.AssistantLabel.Render("retrace")}
	out = append(out, c.thinking(m.Reasoning, width)...)
	if m.Content != "" {
		out = append(out, indent(markdown.Render(inert(m.Content), width-2, markdown.Styles(c.st.Markdown)), "  ")...)
	}
	for _, tc := range m.ToolCalls {
		out = append(out, "  "+c.st.Tools.Name.Render("→ "+callLine(transcript.CallSummary(tc.Name, tc.Arguments), width-4)))
	}
	return out
}

// summaryMark is the line under the last summarised message.
func (c *conversation) summaryMark(width int) string {
	text := fmt.Sprintf(" summarised: the model sees a summary of the %d messages above ", c.summaryThrough)
	if visibleWidth(text) > width-4 {
		text = " summarised above "
	}
	rule := max(width-visibleWidth(text), 0)
	return c.st.Chat.Notice.Render(fit(strings.Repeat("─", rule/2)+text+strings.Repeat("─", rule-rule/2), width))
}

// headLines is the first shown lines of text wrapped to width, inert,
// and how many lines more it has. Only the head is wrapped: a command
// may print a hundred thousand lines, and a paste be a whole log.
func headLines(text string, shown, width int) ([]string, int) {
	text = strings.TrimRight(text, "\n")
	head, rest := text, 0
	if i := nthIndex(text, '\n', shown); i >= 0 {
		head, rest = text[:i], strings.Count(text[i:], "\n")
	}
	lines := wrap(inert(head), width)
	rest += max(len(lines)-shown, 0)
	return lines[:min(len(lines), shown)], rest
}

// userShown is how many lines of a message the person sent the
// conversation shows: a pasted log of 40,000 lines would otherwise take
// hundreds of PgUps to pass.
const userShown = 20

// userMessage shows what the person said, a long paste by its start.
func (c *conversation) userMessage(text string, width int) []string {
	s := c.st.Chat
	out := []string{s.UserLabel.Render("You")}
	lines, rest := headLines(text, userShown, width-2)
	for _, l := range lines {
		out = append(out, "  "+s.User.Render(l))
	}
	if rest > 0 {
		out = append(out, "  "+s.Notice.Render("… "+linesOf(rest)+" more of your message, sent whole (retrace show prints it all)"))
	}
	return out
}

// toolResult shows what history[i]'s call did and the start of its
// output; the tool log has it all.
func (c *conversation) toolResult(i, width int) []string {
	const shown = 6
	m := c.at(i)
	s := c.st.Chat
	out := []string{s.ToolLabel.Render(callLine(c.resultLabel(i), width))}
	lines, rest := headLines(m.Content, shown, width-2)
	for _, l := range lines {
		out = append(out, "  "+s.Tool.Render(l))
	}
	switch {
	case rest == 1:
		out = append(out, "  "+s.Notice.Render("… 1 more line (the tool log shows it all)"))
	case rest > 1:
		out = append(out, "  "+s.Notice.Render(fmt.Sprintf("… %d more lines (the tool log shows it all)", rest)))
	}
	return out
}

// resultLabel says what the call whose result is history[i] did: from
// its entry in the tool log, else from its request in the history.
func (c *conversation) resultLabel(i int) string {
	m := c.at(i)
	// An id may come back in a later turn: the entry is the finished
	// one whose outcome is this message.
	for _, log := range [][]state.ToolCall{c.calls, c.earlierCalls} {
		for j := len(log) - 1; j >= 0; j-- {
			e := log[j]
			if e.ID == m.ToolCallID && e.Finished() && state.ToolMessageContent(e.Result, e.Error) == m.Content {
				return transcript.CallOutcome(e)
			}
		}
	}
	for j := i - 1; j >= c.first(); j-- {
		for _, tc := range c.at(j).ToolCalls {
			if tc.ID == m.ToolCallID {
				return transcript.CallSummary(tc.Name, tc.Arguments)
			}
		}
	}
	return transcript.CallSummary(m.Name, "")
}

// nthIndex is the index of the n-th (1-based) occurrence of c in s, or -1.
func nthIndex(s string, c byte, n int) int {
	at := -1
	for range n {
		i := strings.IndexByte(s[at+1:], c)
		if i < 0 {
			return -1
		}
		at += i + 1
	}
	return at
}

func (c *conversation) liveBlock(width int) []string {
	s := c.st.Chat
	out := []string{s.AssistantLabel.Render("retrace") + " " + s.Streaming.Render("…")}
	out = append(out, c.thinking(c.live.reasoning, width)...)
	if c.live.text != "" {
		out = append(out, indent(markdown.Render(inert(c.live.text), width-2, markdown.Styles(c.st.Markdown)), "  ")...)
	}
	return out
}

// thinking draws a reply's reasoning under its label: folded, one line
// with how long it is and its last line; unfolded, all of it. A reply
// being streamed and the same reply once kept draw it alike, so nothing
// jumps when the kept message takes the streamed one's place.
func (c *conversation) thinking(reasoning string, width int) []string {
	text := strings.TrimSpace(reasoning)
	if text == "" {
		return nil
	}
	s := c.st.Chat
	n := strings.Count(text, "\n") + 1
	size := fmt.Sprintf(", %d lines (%s)", n, legend(keymap.Chat.Reasoning))
	if n == 1 {
		size = fmt.Sprintf(", 1 line (%s)", legend(keymap.Chat.Reasoning))
	}
	if c.folded {
		head := "▸ thinking" + size + ": "
		return []string{"  " + s.ReasoningLabel.Render("▸ thinking") + s.Reasoning.Render(size+": "+clip(inert(lastLine(text)), width-2-visibleWidth(head)))}
	}
	out := []string{"  " + s.ReasoningLabel.Render("▾ thinking") + s.Reasoning.Render(size)}
	for _, l := range wrap(inert(text), width-4) {
		out = append(out, "    "+s.Reasoning.Render(l))
	}
	return out
}

func (c *conversation) errorBlock(width int) []string {
	out := []string{c.st.Chat.Error.Render("error")}
	for _, l := range wrap(inert(c.errText), width-2) {
		out = append(out, "  "+c.st.Chat.Error.Render(l))
	}
	return out
}

func indent(text, prefix string) []string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return lines
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n ")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
