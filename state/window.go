package state

import "fmt"

// A long session's state holds every message ever said, and loading all of
// them costs time in the session's length: 200,000 messages take longer to
// allocate than a person waits for a resumed session. Going on needs far
// less: what the summary does not cover (what the model is sent) and the
// latest turns (what the screen shows). A windowed state holds just that.
// It is the same state in every other respect, and Apply and a Builder go
// on from it as from the whole: the checks they run need only the latest
// messages, which a window always holds (see Window).

// HistoryLen is the number of messages in the session at this version,
// those a window leaves out included.
func (s State) HistoryLen() int { return s.HistoryFrom + len(s.History) }

// Windowed reports whether s leaves out some of the session's messages or
// tool calls.
func (s State) Windowed() bool { return s.HistoryFrom > 0 || s.Memory.ToolCallsFrom > 0 }

// SystemPrompt is the session's system prompt: the content of its first
// message when that is a system message, whether or not History holds it.
func (s State) SystemPrompt() string {
	if s.HistoryFrom == 0 {
		if len(s.History) > 0 && s.History[0].Role == RoleSystem {
			return s.History[0].Content
		}
		return ""
	}
	return s.prompt
}

// Since returns the messages from position pos on, which must not be
// before the window (HistoryFrom).
func (s State) Since(pos int) []Message { return s.History[pos-s.HistoryFrom:] }

// Window returns s without the messages before position from: History
// starts at message from, and the tool log at the first call one of the
// kept messages asked for. from must lie within what s holds; it is
// further held to the start of the last exchange, so that the window
// always holds what Apply checks an event against: the latest assistant
// message and the tool results after it.
//
// The log is cut by count, not by id: every exchange before the latest
// is complete, and each call it asked for has one entry, in the order of
// the exchanges. Ids would not do, as some servers number calls per reply
// and an id comes back every turn. So a window of a window is the window
// of the whole, whichever way the state was loaded.
//
// The window shares s's messages, which are never changed once in a
// history.
func (s State) Window(from int) (State, error) {
	if from < s.HistoryFrom || from > s.HistoryLen() {
		return s, fmt.Errorf("window from message %d: %s holds messages %d to %d", from, s, s.HistoryFrom, s.HistoryLen())
	}
	from = min(from, s.HistoryFrom+exchangeStart(s.History))
	if from == s.HistoryFrom {
		return s, nil
	}
	out := s
	out.prompt = s.SystemPrompt()
	out.History = s.History[from-s.HistoryFrom:]
	out.HistoryFrom = from

	left := 0 // the calls asked before from
	for _, m := range s.History[:from-s.HistoryFrom] {
		left += len(m.ToolCalls)
	}
	log := s.Memory.ToolCalls
	left = min(left, len(log))
	out.Memory.ToolCalls = cloneOrNil(log[left:])
	out.Memory.ToolCallsFrom = s.Memory.ToolCallsFrom + left
	return out.clip(), nil
}

// exchangeStart is the position in h of the message the latest exchange
// starts with: the last one that is not a tool result. Tool results
// answer the assistant message before them, and an event that answers
// more is checked against it.
func exchangeStart(h []Message) int {
	i := len(h) - 1
	for i > 0 && h[i].Role == RoleTool {
		i--
	}
	return max(i, 0)
}
