package state

import "slices"

// An exchange is an assistant message with tool calls and the tool
// messages after it that answer them. Every event of a tool call asks
// which calls are still open; reading the exchange for that costs what
// the calls answered so far cost, so a reply of n calls would cost n²,
// and a hostile server's thousands of calls, minutes. A State therefore
// says where its open calls are, while the answers come in the order
// the calls were asked, as the agent gives them: then the open calls
// are the last ones, found at once.

// exchange locates the latest exchange while some of its calls are
// open: at is the position of its assistant message plus one, and
// answered counts the tool messages after it, which answer its first
// calls in the order asked. Zero says nothing of the kind: no call is
// open, or the answers came in another order, and the exchange is read.
type exchange struct{ at, answered int }

// openCalls returns the tool calls of the last assistant message that no
// tool message has answered yet, in the order asked. The slice shares the
// message's calls: it must not be changed.
func (s State) openCalls() []ToolRequest {
	if open, ok := s.open.calls(s); ok {
		return open
	}
	return readOpenCalls(s.History)
}

// OpenCalls returns the tool calls in s that still wait for an answer, in
// the order the assistant asked for them. The slice shares the state's
// history: it must not be changed.
func (s State) OpenCalls() []ToolRequest { return s.openCalls() }

// calls returns the open calls e records, or false when e records none
// or does not describe s: a state put together another way than by
// Apply, or a history changed behind its back, is read instead.
func (e exchange) calls(s State) ([]ToolRequest, bool) {
	i := e.at - 1 - s.HistoryFrom
	if e.at == 0 || e.at+e.answered != s.HistoryLen() || i < 0 {
		return nil, false
	}
	m := &s.History[i]
	if m.Role != RoleAssistant || e.answered >= len(m.ToolCalls) {
		return nil, false
	}
	if last := &s.History[len(s.History)-1]; e.answered > 0 && (last.Role != RoleTool || last.ToolCallID != m.ToolCalls[e.answered-1].ID) {
		return nil, false
	}
	return slices.Clip(m.ToolCalls[e.answered:]), true
}

// exchangeOf reads what s.open records from the history: the state of a
// snapshot or of JSON, or one put together by hand, records nothing.
func exchangeOf(s State) exchange {
	h := s.History
	i := len(h) - 1
	for i >= 0 && h[i].Role == RoleTool {
		i--
	}
	if i < 0 || h[i].Role != RoleAssistant {
		return exchange{}
	}
	calls, answers := h[i].ToolCalls, h[i+1:]
	if len(answers) >= len(calls) {
		return exchange{}
	}
	// In order, and every id once: then answers[j] answers calls[j]
	// alone, and the rest are open.
	seen := make(map[string]bool, len(calls))
	for j, c := range calls {
		if seen[c.ID] || j < len(answers) && answers[j].ToolCallID != c.ID {
			return exchange{}
		}
		seen[c.ID] = true
	}
	return exchange{at: s.HistoryFrom + i + 1, answered: len(answers)}
}

// after is what e becomes when m is appended to s, which e describes.
func (e exchange) after(s State, m Message) exchange {
	if m.Role == RoleAssistant && len(m.ToolCalls) > 0 {
		return exchange{at: s.HistoryLen() + 1}
	}
	open, ok := e.calls(s)
	if m.Role != RoleTool || !ok || open[0].ID != m.ToolCallID || len(open) == 1 {
		return exchange{} // another order, or the last answer
	}
	return exchange{at: e.at, answered: e.answered + 1}
}

// exchangeSize is how many calls the latest exchange asked for: no more
// entries at the end of the tool log than that can be its calls'.
func (s State) exchangeSize() int {
	if e := s.open; e.at > 0 {
		if _, ok := e.calls(s); ok {
			return len(s.History[e.at-1-s.HistoryFrom].ToolCalls)
		}
	}
	h := s.History
	i := len(h) - 1
	for i >= 0 && h[i].Role == RoleTool {
		i--
	}
	if i < 0 || h[i].Role != RoleAssistant {
		return 0
	}
	return len(h[i].ToolCalls)
}

// readOpenCalls reads the open calls from the history: the tool messages
// at its end and the assistant message before them.
func readOpenCalls(history []Message) []ToolRequest {
	answered := map[string]bool{}
	i := len(history) - 1
	for ; i >= 0 && history[i].Role == RoleTool; i-- {
		answered[history[i].ToolCallID] = true
	}
	if i < 0 || history[i].Role != RoleAssistant {
		return nil
	}
	var open []ToolRequest
	for _, c := range history[i].ToolCalls {
		if !answered[c.ID] {
			open = append(open, c)
		}
	}
	return open
}
