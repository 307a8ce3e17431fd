package tui

import (
	"fmt"
	"strings"

	"retrace/state"
	"retrace/state/transcript"
)

// Labels for people: what each version's event did, and tool calls by
// what they do. Stored names (tool_started, awaiting_approval) and call
// ids are for the store; a person reads "you approved: run go test ./...".

// describe says in one inert line what the event that made version v
// did; s is the state at v, where the event's tool call is found by its
// id.
func describe(v Version, s state.State) string {
	ev := v.Event
	var what string
	switch ev.Kind {
	case state.UserMessage:
		// The first turn's event carries the system prompt before what
		// the person said; only what they said is theirs.
		what = "you said: " + lastContent(ev.Messages, state.RoleUser)
	case state.AssistantMessage:
		calls, said := reply(ev.Messages, false)
		switch {
		case len(calls) > 0:
			what = "the model asked to " + calls + saying(said)
		case said != "":
			what = "the model said: " + said
		default:
			what = "the model replied with its thinking only"
		}
	case state.PlanSet:
		// The plan's own set_plan call is the event itself.
		calls, said := reply(ev.Messages, true)
		what = "the model set the plan: " + planSize(ev.Plan) + asked(calls) + saying(said)
	case state.Continue:
		calls, said := reply(ev.Messages, false)
		what = "the model went on" + asked(calls) + saying(said)
	case state.Replan:
		calls, said := reply(ev.Messages, false)
		what = "the model went back to planning" + asked(calls) + saying(said)
	case state.Answered:
		what = "the model answered: " + lastContent(ev.Messages, state.RoleAssistant)
	case state.ToolStarted, state.ToolFinished, state.ApprovalRequested, state.ApprovalGiven, state.ApprovalDenied:
		what = describeCall(ev, s)
	default:
		what = describeOther(ev, s)
	}
	return oneLine(transcript.Shorten(what, maxLabel)) + " → " + phaseLabel(v.Phase)
}

// maxLabel bounds the bytes of a label looked at: a message may be a
// megabyte, and the banner shows one line of it, every frame.
const maxLabel = 4 << 10

// describeCall labels the events of a tool call's life.
func describeCall(ev state.Event, s state.State) string {
	switch ev.Kind {
	case state.ToolStarted:
		return "started: " + callSummary(ev, s)
	case state.ToolFinished:
		if c, ok := findCall(ev, s); ok {
			return transcript.CallOutcome(c)
		}
		return "a tool call finished"
	case state.ApprovalRequested:
		return "waiting for your approval: " + callSummary(ev, s)
	case state.ApprovalGiven:
		what := "you approved: " + callSummary(ev, s)
		if c, ok := findCall(ev, s); ok && ev.Always {
			what += ", and every " + c.Name + " call for the rest of the session"
		}
		return what
	}
	what := "you denied: " + callSummary(ev, s)
	if ev.Text != "" {
		what += ": " + ev.Text
	}
	return what
}

// describeOther labels the events that are neither the model's replies
// nor a tool call's.
func describeOther(ev state.Event, s state.State) string {
	switch ev.Kind {
	case state.NoteSet:
		if ev.NoteValue == "" {
			return "the model forgot the note " + ev.NoteKey
		}
		return "the model noted " + ev.NoteKey + ": " + ev.NoteValue
	case state.StepStatus:
		return fmt.Sprintf("step %d is %s: %s", ev.Step+1, stepWord(ev.Status), stepText(s, ev.Step))
	case state.StepCompleted:
		what := fmt.Sprintf("step %d is done", ev.Step+1)
		if text := stepText(s, ev.Step); text != "" {
			what += ": " + text
		}
		if _, said := reply(ev.Messages, false); said != "" {
			what += "; the model said: " + said
		}
		return what
	case state.ToolsDone:
		return "every tool call has its result; the model reads them next"
	case state.Failed:
		return "the task failed: " + ev.Text
	case state.Interrupted:
		if ev.Text != "" {
			return "the task was interrupted: " + ev.Text
		}
		return "the task was interrupted"
	case state.Resumed:
		return "the interrupted task goes on"
	case state.Summarized:
		return "the older turns were summarised to fit the context window (" + transcript.Count(ev.Through, "message") + ")"
	case state.EndpointSet:
		if ev.Endpoint == nil {
			return "the session changed its model"
		}
		what := "the session now talks to " + ev.Endpoint.Model
		if ev.Endpoint.BaseURL != "" {
			what += " at " + ev.Endpoint.BaseURL
		}
		return what
	case state.RestoreStarted:
		verb := "as they were"
		if len(ev.Files) == 1 {
			verb = "as it was"
		}
		return fmt.Sprintf("restoring %s %s here (the workspace was at v%d)", transcript.Count(len(ev.Files), "file"), verb, ev.From)
	case state.FilesRestored:
		return "the restore is over: " + ev.Text
	case state.Imported:
		if ev.From != 0 {
			// A rollback to a version recorded elsewhere (rewind.closing).
			what := ev.Text + ": what it was doing there is over, and nothing of it runs until you send a message"
			if len(ev.Files) > 0 {
				what += fmt.Sprintf("; restoring %s (the workspace was at v%d)", transcript.Count(len(ev.Files), "file"), ev.From)
			}
			return what
		}
		from := ""
		if ev.Text != "" {
			from = " (" + ev.Text + ")"
		}
		return "the session arrived here" + from + ": nothing of it runs until you send a message"
	}
	// A kind newer than this interface: its stored name is all there is.
	return "a change this version of retrace does not know: " + ev.Kind.String()
}

// findCall is the tool log's entry for the event's call: the last with
// its id, as an id may come back in a later turn.
func findCall(ev state.Event, s state.State) (state.ToolCall, bool) {
	if ev.Tool == nil {
		return state.ToolCall{}, false
	}
	log := s.Memory.ToolCalls
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].ID == ev.Tool.ID {
			return log[i], true
		}
	}
	return state.ToolCall{}, false
}

// callSummary is the event's call by what it asks for.
func callSummary(ev state.Event, s state.State) string {
	if c, ok := findCall(ev, s); ok {
		return transcript.CallSummary(c.Name, c.Arguments)
	}
	return "a tool call"
}

// reply is what the model's messages in an event did: the calls it asked
// for, by what they do, and the first thing it said.
func reply(msgs []state.Message, skipPlan bool) (calls, said string) {
	var asked []string
	for _, m := range msgs {
		if said == "" && m.Role == state.RoleAssistant {
			said = strings.TrimSpace(m.Content)
		}
		for _, c := range m.ToolCalls {
			if skipPlan && c.Name == "set_plan" {
				continue
			}
			asked = append(asked, transcript.CallSummary(c.Name, c.Arguments))
		}
	}
	return andList(asked), said
}

func asked(calls string) string {
	if calls == "" {
		return ""
	}
	return " and asked to " + calls
}

func saying(said string) string {
	if said == "" {
		return ""
	}
	return ", saying: " + said
}

// andList is "a", "a and b", "a, b and c"; past a few, how many more.
func andList(items []string) string {
	const most = 4
	if len(items) > most {
		items = append(items[:most:most], fmt.Sprintf("%d more", len(items)-most))
	}
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// lastContent is the last message's text with the role.
func lastContent(msgs []state.Message, role string) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == role && msgs[i].Content != "" {
			return msgs[i].Content
		}
	}
	return ""
}

func planSize(plan []state.Step) string {
	done := 0
	for _, st := range plan {
		if st.Status == state.StepDone {
			done++
		}
	}
	if done > 0 {
		return fmt.Sprintf("%s, %d done", transcript.Count(len(plan), "step"), done)
	}
	return transcript.Count(len(plan), "step")
}

func stepText(s state.State, i int) string {
	if i < 0 || i >= len(s.Memory.Plan) {
		return ""
	}
	return s.Memory.Plan[i].Text
}

// stepWord says a step's status in words.
func stepWord(st state.StepState) string {
	switch st {
	case state.StepPending:
		return "not started"
	case state.StepActive:
		return "under way"
	}
	return string(st) // done, failed, skipped read as they are
}

// phaseName is a phase as the phase pane shows it: "awaiting approval".

// oneLine makes text from a model or the store one inert line.
func oneLine(s string) string { return strings.Join(strings.Fields(inert(s)), " ") }

// callLine is a call's summary in at most width cells.
func callLine(summary string, width int) string { return clip(summary, width) }
