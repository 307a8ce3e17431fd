package statetest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"retrace/state"
)

// Refusal is what Apply must answer to an event Invalid made: an
// *state.EventError for Kind, giving Reason.
type Refusal struct {
	Kind   state.EventKind
	Reason string
	// Rule names the rule the event breaks, for test failure messages.
	Rule string
}

// Invalid returns an event that is legal in s's phase but breaks exactly one
// rule of what an event may carry, with the refusal Apply must give. It
// starts from a valid event (NextEvent's) and spoils one thing, chosen at
// random among the spoilings that fit. Where two rules would apply, the
// refusal is the one Apply reports first: a message while calls are open
// is refused for that before anything the message itself gets wrong.
func Invalid(rng *rand.Rand, s state.State) (state.Event, Refusal) {
	ev := NextEvent(rng, s)
	if s.Restoring == nil && s.Phase != state.AwaitingApproval && rng.IntN(8) == 0 {
		// Summaries are rare in scripts; their rules need more tries.
		ev = state.Event{Kind: state.Summarized, At: ev.At, Text: "Summary: so far", Through: s.SummaryThrough}
	}
	ev.Messages = slices.Clone(ev.Messages)
	ev.Plan = slices.Clone(ev.Plan)
	if ev.Tool != nil {
		c := *ev.Tool
		ev.Tool = &c
	}
	sp := spoiler{rng: rng, s: s, ev: ev}
	options := sp.messageSpoilings()
	if kind := sp.kindSpoilings(); rng.IntN(2) == 0 {
		options = kind // never empty: at least Always, or a rule of approval_given
	}
	return options[rng.IntN(len(options))]()
}

type spoiler struct {
	rng *rand.Rand
	s   state.State
	ev  state.Event
}

func (sp spoiler) refuse(ev state.Event, rule, format string, args ...any) (state.Event, Refusal) {
	return ev, Refusal{Kind: ev.Kind, Rule: rule, Reason: fmt.Sprintf(format, args...)}
}

// badMessage puts m first among the event's messages. While calls are
// open only failed and interrupted may add messages, so for any other kind
// that is what is wrong, whatever m is.
func (sp spoiler) badMessage(rule string, m state.Message, reason string) func() (state.Event, Refusal) {
	return sp.badMessageAt(0, rule, m, reason)
}

// badLastMessage puts m after the event's messages: where a message with
// tool calls must be.
func (sp spoiler) badLastMessage(rule string, m state.Message, reason string) func() (state.Event, Refusal) {
	return sp.badMessageAt(len(sp.ev.Messages), rule, m, reason)
}

func (sp spoiler) badMessageAt(i int, rule string, m state.Message, reason string) func() (state.Event, Refusal) {
	return func() (state.Event, Refusal) {
		ev := sp.ev
		ev.Messages = slices.Insert(slices.Clone(ev.Messages), i, m)
		if len(sp.s.OpenCalls()) > 0 && ev.Kind != state.Failed && ev.Kind != state.Interrupted {
			return sp.refuse(ev, rule+" while calls are open", "adds a message while tool calls are unanswered")
		}
		return sp.refuse(ev, rule, "message %d: %s", i+1, reason)
	}
}

func (sp spoiler) messageSpoilings() []func() (state.Event, Refusal) {
	call := state.ToolRequest{ID: "call_x", Name: "read_file", Arguments: "{}"}
	out := []func() (state.Event, Refusal){
		sp.badMessage("a tool message carried by hand",
			state.Message{Role: state.RoleTool, Content: "ok", ToolCallID: "call_x", Name: "read_file"},
			"tool messages come only from tool_finished"),
		sp.badMessage("an unknown role", state.Message{Role: "developer", Content: "x"}, `unknown role "developer"`),
		sp.badMessage("no role", state.Message{Content: "x"}, `unknown role ""`),
	}
	if sp.ev.Kind == state.UserMessage {
		return append(out,
			sp.badMessage("an assistant message opening a task", state.Message{Role: state.RoleAssistant, Content: "x"},
				"an assistant message cannot come with a user_message event"),
			sp.badMessage("a user message naming a tool", state.Message{Role: state.RoleUser, Content: "x", Name: "read_file"},
				"only tool messages carry tool_call_id or name"),
			sp.badMessage("a user message with tool calls", state.Message{Role: state.RoleUser, Content: "x", ToolCalls: []state.ToolRequest{call}},
				"only assistant messages carry tool calls"),
		)
	}
	out = append(out,
		sp.badMessage("a user message outside user_message", state.Message{Role: state.RoleUser, Content: "x"},
			"a user message can only come with a user_message event"),
		sp.badMessage("a system message outside user_message", state.Message{Role: state.RoleSystem, Content: "x"},
			"a system message can only come with a user_message event"),
		sp.badMessage("an assistant message answering a call", state.Message{Role: state.RoleAssistant, Content: "x", ToolCallID: "call_x"},
			"only tool messages carry tool_call_id or name"),
		sp.badMessage("an empty assistant message", state.Message{Role: state.RoleAssistant},
			"an assistant message needs content or tool calls"),
	)
	// Events after which no tool runs must bring no calls: an answer, an
	// end of the task, a summary between tasks.
	k := sp.ev.Kind
	ends := !sp.s.Phase.Active() || k == state.Failed || k == state.Interrupted || k == state.Answered
	if ends {
		out = append(out, sp.badLastMessage("tool calls no tool will answer",
			state.Message{Role: state.RoleAssistant, Content: "x", ToolCalls: []state.ToolRequest{call}},
			"tool calls cannot come with an event after which no tool runs"))
	}
	if len(sp.ev.Messages) > 0 {
		out = append(out, sp.badMessage("tool calls before the event's last message",
			state.Message{Role: state.RoleAssistant, ToolCalls: []state.ToolRequest{call}},
			"a message with tool calls must be the event's last"))
	}
	if !ends && !slices.ContainsFunc(sp.ev.Messages, func(m state.Message) bool { return len(m.ToolCalls) > 0 }) {
		out = append(out,
			sp.badLastMessage("a tool call without a name", state.Message{Role: state.RoleAssistant, ToolCalls: []state.ToolRequest{{ID: "call_x"}}},
				"a tool call needs an id and a name"),
			sp.badLastMessage("a tool call without an id", state.Message{Role: state.RoleAssistant, ToolCalls: []state.ToolRequest{{Name: "read_file"}}},
				"a tool call needs an id and a name"),
			sp.badLastMessage("the same call twice", state.Message{Role: state.RoleAssistant, ToolCalls: []state.ToolRequest{call, call}},
				`tool call id "call_x" appears twice`),
		)
	}
	return out
}

func (sp spoiler) kindSpoilings() []func() (state.Event, Refusal) {
	ev, s := sp.ev, sp.s
	var out []func() (state.Event, Refusal)
	add := func(rule string, change func(*state.Event), format string, args ...any) {
		out = append(out, func() (state.Event, Refusal) {
			e := ev
			change(&e)
			return sp.refuse(e, rule, format, args...)
		})
	}
	if ev.Kind != state.ApprovalGiven {
		add("always outside approval_given", func(e *state.Event) { e.Always = true },
			"only approval_given can allow a tool for the session")
	}
	if s.Restoring != nil {
		// Only files_restored may follow: any other kind is refused for
		// that, whatever else it gets wrong.
		sp.fileSpoilings(add)
		return out
	}
	plan := len(s.Memory.Plan)
	switch ev.Kind {
	case state.UserMessage:
		add("no user message", func(e *state.Event) {
			e.Messages = slices.DeleteFunc(e.Messages, func(m state.Message) bool { return m.Role == state.RoleUser })
		}, "needs a user message")
	case state.Answered:
		add("no answer", func(e *state.Event) { e.Messages = nil }, "carries no answer")
	case state.AssistantMessage:
		add("no message", func(e *state.Event) { e.Messages = nil }, "carries no message")
	case state.PlanSet:
		i := sp.rng.IntN(len(ev.Plan))
		add("no steps", func(e *state.Event) { e.Plan = nil }, "plan has no steps")
		add("a step without text", func(e *state.Event) { e.Plan[i].Text = "" }, "step %d has no text", i+1)
		add("a step with an unknown status", func(e *state.Event) { e.Plan[i].Status = "someday" },
			`step %d: unknown status "someday"`, i+1)
	case state.ToolStarted, state.ToolFinished, state.ApprovalRequested, state.ApprovalGiven, state.ApprovalDenied:
		add("no tool", func(e *state.Event) { e.Tool = nil }, "names no tool call")
		add("no tool id", func(e *state.Event) { e.Tool.ID = "" }, "names no tool call")
		add("a call nobody made", func(e *state.Event) { e.Tool.ID = "call_nobody_made" },
			`no unanswered tool call has id "call_nobody_made"`)
	case state.NoteSet:
		add("no key", func(e *state.Event) { e.NoteKey = "" }, "note key is empty")
	case state.StepStatus:
		add("an unknown status", func(e *state.Event) { e.Status = "halfway" }, `unknown step status "halfway"`)
		add("a step past the plan", func(e *state.Event) { e.Step = plan }, "step %d does not exist (the plan has %d)", plan, plan)
		add("a step before the plan", func(e *state.Event) { e.Step = -1 }, "step -1 does not exist (the plan has %d)", plan)
	case state.StepCompleted:
		if plan > 0 {
			add("a step past the plan", func(e *state.Event) { e.Step = plan }, "step %d does not exist (the plan has %d)", plan, plan)
		}
	case state.Failed:
		add("no reason", func(e *state.Event) { e.Text = "" }, "says nothing about what went wrong")
	case state.Summarized:
		sp.summarySpoilings(add)
	}
	sp.fileSpoilings(add)
	if open := s.OpenCalls(); len(open) > 0 && s.Phase == state.Executing {
		for _, c := range s.Memory.ToolCalls {
			if c.ID == open[0].ID && !c.StartedAt.IsZero() {
				id := c.ID
				add("a running call started again", func(e *state.Event) {
					*e = state.Event{Kind: state.ToolStarted, At: e.At, Tool: &state.ToolCall{ID: id}}
				}, "tool call %q has already started", id)
				add("approval asked for a running call", func(e *state.Event) {
					*e = state.Event{Kind: state.ApprovalRequested, At: e.At, Tool: &state.ToolCall{ID: id}}
				}, "tool call %q has already started", id)
			}
		}
	}
	return out
}

// fileSpoilings break the rules of workspace file changes and of a
// restore's order.
func (sp spoiler) fileSpoilings(add func(string, func(*state.Event), string, ...any)) {
	ev, s := sp.ev, sp.s
	good := state.FileImage{Blob: "sha256:" + strings.Repeat("ab", 32), Size: 3, Mode: 0o644}
	change := func(p string, before, after state.FileImage) []state.FileChange {
		return []state.FileChange{{Path: p, Before: before, After: after}}
	}
	if s.Restoring != nil {
		add("a restore started inside another", func(e *state.Event) {
			*e = state.Event{Kind: state.RestoreStarted, At: e.At, From: 1, Files: change("a.go", good, good)}
		}, "a restore of the workspace is under way; only files_restored may follow")
		return
	}
	add("files_restored with no restore open", func(e *state.Event) {
		*e = state.Event{Kind: state.FilesRestored, At: e.At, Text: "restored"}
	}, "no restore of the workspace is under way")
	if ev.Kind != state.RestoreStarted && ev.Kind != state.Imported {
		add("from on an event that restores nothing", func(e *state.Event) { e.From = 3 },
			"only restore_started and imported name the version they restore from")
	}
	if ev.Kind != state.Imported {
		add("an arrival on an event that is none", func(e *state.Event) { e.Arrival = 7 },
			"only imported numbers an arrival")
	}
	switch ev.Kind {
	case state.RestoreStarted:
		add("a restore of no file", func(e *state.Event) { e.Files = nil }, "names no file to restore")
		add("a restore from before the first version", func(e *state.Event) { e.From = -1 }, "restores from version -1")
	case state.Imported:
		add("a negative arrival", func(e *state.Event) { e.Arrival = -1 }, "numbers its arrival -1")
		add("a restore from before the first version", func(e *state.Event) { e.From = -1 }, "restores from version -1")
	case state.ToolFinished:
	default:
		add("files on an event that changes none", func(e *state.Event) { e.Files = change("a.go", good, good) },
			"only tool_finished and restores change workspace files")
		return
	}
	bad := []struct {
		rule, path string
		before     state.FileImage
		reason     string
	}{
		{"a path out of the workspace", "../etc/passwd", good, `file path "../etc/passwd" is not a clean path inside the workspace`},
		{"an absolute path", "/etc/passwd", good, `file path "/etc/passwd" is not a clean path inside the workspace`},
		{"an unclean path", "src/../a.go", good, `file path "src/../a.go" is not a clean path inside the workspace`},
		{"an absent file with content", "a.go", state.FileImage{Absent: true, Blob: good.Blob}, "file a.go before: an absent file has no content"},
		{"a digest that is not sha256", "a.go", state.FileImage{Blob: "md5:00", Size: 1}, `file a.go before: blob "md5:00" is not a sha256 digest`},
		{"a file with no content and no reason", "a.go", state.FileImage{Size: 1}, "file a.go before: a file needs its content's digest, or why it was not kept"},
		{"kept and not kept", "a.go", state.FileImage{Blob: good.Blob, Untracked: "ignored"}, "file a.go before: content is kept or it is not"},
		{"a stamp on a kept file", "a.go", state.FileImage{Blob: good.Blob, Stamp: "file 1 2 3 4"}, "file a.go before: only a file whose content was not kept has a stamp"},
		{"a stamp on an absent file", "a.go", state.FileImage{Absent: true, Stamp: "file 1 2 3 4"}, "file a.go before: only a file whose content was not kept has a stamp"},
		{"a mode beyond permissions", "a.go", state.FileImage{Blob: good.Blob, Mode: 0o40755}, "file a.go before: mode 040755 has more than permission bits"},
	}
	for _, b := range bad {
		add(b.rule, func(e *state.Event) { e.Files = change(b.path, b.before, good) }, "%s", b.reason)
	}
	add("a path listed twice", func(e *state.Event) {
		e.Files = append(change("a.go", good, good), change("a.go", good, good)...)
	}, "file a.go is listed twice")
}

func (sp spoiler) summarySpoilings(add func(string, func(*state.Event), string, ...any)) {
	h, from := sp.s.History, sp.s.SummaryThrough
	add("an empty summary", func(e *state.Event) { e.Text = "" }, "summary is empty")
	add("a summary past the history", func(e *state.Event) { e.Through = len(h) + 1 },
		"covers %d messages; it must be between %d and %d", len(h)+1, from, len(h))
	if from > 0 {
		add("a summary shrinking the last", func(e *state.Event) { e.Through = from - 1 },
			"covers %d messages; it must be between %d and %d", from-1, from, len(h))
	}
	for i := from + 1; i < len(h); i++ {
		if h[i].Role != state.RoleUser {
			at := i
			add("a summary ending inside a turn", func(e *state.Event) { e.Through = at },
				"must end where a turn starts (message %d is a %s message)", at+1, h[at].Role)
			break
		}
	}
	if len(h) > from && len(sp.s.OpenCalls()) > 0 {
		add("a summary over unanswered calls", func(e *state.Event) { e.Through = len(h) },
			"would cover tool calls that are still unanswered")
	}
}
