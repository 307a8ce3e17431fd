package state

// The checks Apply runs before it changes anything. They keep two promises:
// the history is always one a strict OpenAI-compatible server accepts (every
// tool call answered by exactly one tool message, right after the call, and
// no empty assistant message), and an event only refers to things that exist.

// checkMessages validates the messages an event appends; the event leads
// to phase to.
func (a *applier) checkMessages(ev Event, to Phase) error {
	open := len(a.s.openCalls()) > 0 && ev.Kind != Failed && ev.Kind != Interrupted
	seen := map[string]bool{}
	for i, m := range ev.Messages {
		if open {
			return invalid(ev.Kind, "adds a message while tool calls are unanswered")
		}
		switch m.Role {
		case RoleSystem, RoleUser:
			if ev.Kind != UserMessage {
				return invalid(ev.Kind, "message %d: a %s message can only come with a user_message event", i+1, m.Role)
			}
		case RoleAssistant:
			if ev.Kind == UserMessage {
				return invalid(ev.Kind, "message %d: an assistant message cannot come with a user_message event", i+1)
			}
		case RoleTool:
			return invalid(ev.Kind, "message %d: tool messages come only from tool_finished", i+1)
		default:
			return invalid(ev.Kind, "message %d: unknown role %q", i+1, m.Role)
		}
		if m.ToolCallID != "" || m.Name != "" {
			return invalid(ev.Kind, "message %d: only tool messages carry tool_call_id or name", i+1)
		}
		if m.Reasoning != "" && m.Role != RoleAssistant {
			return invalid(ev.Kind, "message %d: only assistant messages carry reasoning", i+1)
		}
		if m.Role == RoleAssistant && m.Content == "" && len(m.ToolCalls) == 0 {
			return invalid(ev.Kind, "message %d: an assistant message needs content or tool calls", i+1)
		}
		if len(m.ToolCalls) > 0 && m.Role != RoleAssistant {
			return invalid(ev.Kind, "message %d: only assistant messages carry tool calls", i+1)
		}
		if len(m.ToolCalls) > 0 && i != len(ev.Messages)-1 {
			return invalid(ev.Kind, "message %d: a message with tool calls must be the event's last", i+1)
		}
		if len(m.ToolCalls) > 0 && !to.Active() {
			// Idle, done and error run no tools: the calls would stay
			// unanswered, and every later message would be refused.
			return invalid(ev.Kind, "message %d: tool calls cannot come with an event after which no tool runs", i+1)
		}
		for _, c := range m.ToolCalls {
			if c.ID == "" || c.Name == "" {
				return invalid(ev.Kind, "message %d: a tool call needs an id and a name", i+1)
			}
			if seen[c.ID] {
				return invalid(ev.Kind, "message %d: tool call id %q appears twice", i+1, c.ID)
			}
			seen[c.ID] = true
		}
	}
	return nil
}

// checkSummary keeps a summary on a turn boundary: it covers whole turns,
// so a tool call is never summarised away from its result, and it never
// shrinks what an earlier summary covered.
//
// The rules here and elsewhere in Apply are if statements rather than the
// cases of a switch: mutation testing takes a case's condition for code no
// test runs (coverage blocks start after the colon), and these are the
// rules it must see tested.
func (a *applier) checkSummary(ev Event) error {
	h, n := a.s.History, a.s.HistoryLen()
	if ev.Text == "" {
		return invalid(ev.Kind, "summary is empty")
	}
	if ev.Through < a.s.SummaryThrough || ev.Through > n {
		return invalid(ev.Kind, "covers %d messages; it must be between %d and %d", ev.Through, a.s.SummaryThrough, n)
	}
	if ev.Through == a.s.SummaryThrough {
		return nil // it covers no more than the last one: a new text only
	}
	// A window that starts after the summary's end cannot tell where
	// turns start there. The check was made when the event was first
	// applied, to the whole history, and a full replay makes it again.
	if i := ev.Through - a.s.HistoryFrom; i >= 0 && ev.Through < n && h[i].Role != RoleUser {
		return invalid(ev.Kind, "must end where a turn starts (message %d is a %s message)", ev.Through+1, h[i].Role)
	}
	if ev.Through == n && len(a.s.openCalls()) > 0 {
		return invalid(ev.Kind, "would cover tool calls that are still unanswered")
	}
	return nil
}

func checkPlan(ev Event) error {
	if len(ev.Plan) == 0 {
		return invalid(ev.Kind, "plan has no steps")
	}
	for i, st := range ev.Plan {
		if st.Text == "" {
			return invalid(ev.Kind, "step %d has no text", i+1)
		}
		if st.Status != "" && !st.Status.Valid() {
			return invalid(ev.Kind, "step %d: unknown status %q", i+1, st.Status)
		}
	}
	return nil
}

func (a *applier) checkStep(ev Event) error {
	if ev.Step < 0 || ev.Step >= len(a.s.Memory.Plan) {
		return invalid(ev.Kind, "step %d does not exist (the plan has %d)", ev.Step, len(a.s.Memory.Plan))
	}
	return nil
}

// openRequest finds the unanswered call an event's Tool refers to.
func (a *applier) openRequest(ev Event) (ToolRequest, error) {
	if ev.Tool == nil || ev.Tool.ID == "" {
		return ToolRequest{}, invalid(ev.Kind, "names no tool call")
	}
	// The agent answers the calls in the order asked: the first open
	// call is the one, and the rest are read only for another order.
	for _, req := range a.s.openCalls() {
		if req.ID == ev.Tool.ID {
			return req, nil
		}
	}
	return ToolRequest{}, invalid(ev.Kind, "no unanswered tool call has id %q", ev.Tool.ID)
}

func (a *applier) checkToolStarted(ev Event) error {
	if _, err := a.openRequest(ev); err != nil {
		return err
	}
	if i := a.callIndex(ev.Tool.ID); i >= 0 {
		c := a.s.Memory.ToolCalls[i]
		if !c.StartedAt.IsZero() {
			return invalid(ev.Kind, "tool call %q has already started", c.ID)
		}
		if c.Approval == AwaitingDecision {
			return invalid(ev.Kind, "tool call %q is waiting for approval", c.ID)
		}
	}
	return nil
}

func (a *applier) checkApprovalRequested(ev Event) error {
	if _, err := a.openRequest(ev); err != nil {
		return err
	}
	if i := a.callIndex(ev.Tool.ID); i >= 0 && !a.s.Memory.ToolCalls[i].StartedAt.IsZero() {
		return invalid(ev.Kind, "tool call %q has already started", ev.Tool.ID)
	}
	return nil
}

// pendingApproval finds the call an approval decision answers.
func (a *applier) pendingApproval(ev Event) (ToolCall, error) {
	if _, err := a.openRequest(ev); err != nil {
		return ToolCall{}, err
	}
	i := a.callIndex(ev.Tool.ID)
	if i < 0 || a.s.Memory.ToolCalls[i].Approval != AwaitingDecision {
		return ToolCall{}, invalid(ev.Kind, "tool call %q is not waiting for approval", ev.Tool.ID)
	}
	return a.s.Memory.ToolCalls[i], nil
}
