package llmtest

import (
	"slices"
	"strings"

	"retrace/agent/llmserver"
)

const (
	textUnanswered = "An assistant message with 'tool_calls' must be followed by tool messages responding to " +
		"each 'tool_call_id'. The following tool_call_ids did not have response messages: "
	// textOrphan keeps OpenAI's typo "preceeding": agents match on it.
	textOrphan = "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."
)

// run is the open tool-call exchange: the assistant message that declared
// calls, and which of them have been answered so far.
type run struct {
	at       int // index of the assistant message
	ids      []string
	answered map[string]bool
}

func (r *run) unanswered() []string {
	var open []string
	for _, id := range r.ids {
		if !r.answered[id] {
			open = append(open, id)
		}
	}
	return open
}

// checkPairing enforces the pairing rule of openai-wire.md §4.7: the tool
// calls of an assistant message are each answered by exactly one tool
// message, after it and before the next non-tool message; a tool message
// answers a call of the assistant message its run follows.
func checkPairing(req llmserver.Request, _ Rules) []Violation {
	var (
		bad  []Violation
		open *run
	)
	closeRun := func() {
		if open == nil {
			return
		}
		if ids := open.unanswered(); len(ids) > 0 {
			bad = append(bad, Violation{
				Rule:    RuleUnanswered,
				Message: textUnanswered + strings.Join(ids, ", "),
				Param:   rolePath(open.at),
			})
		}
		open = nil
	}
	for i, m := range req.Messages {
		if m.Role != "tool" {
			closeRun()
			if m.Role == "assistant" && len(m.ToolCalls) > 0 {
				open = &run{at: i, answered: map[string]bool{}}
				for _, c := range m.ToolCalls {
					open.ids = append(open.ids, c.ID)
				}
			}
			continue
		}
		switch {
		case open == nil || !slices.Contains(open.ids, m.ToolCallID):
			bad = append(bad, Violation{Rule: RuleOrphanTool, Message: textOrphan, Param: rolePath(i)})
		case open.answered[m.ToolCallID]:
			// OpenAI words a second answer like an orphan: the id no
			// longer has a call waiting for it.
			bad = append(bad, Violation{Rule: RuleDuplicateAnswer, Message: textOrphan, Param: rolePath(i)})
		default:
			open.answered[m.ToolCallID] = true
		}
	}
	closeRun()
	return bad
}
