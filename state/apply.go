package state

import (
	"maps"
	"slices"
	"time"
)

// Apply returns the state that follows s when ev happens. It checks the
// transition against the phase machine and the event's contents against s;
// on error it returns s unchanged and an error wrapping ErrIllegalTransition
// or ErrInvalidEvent. Apply never modifies memory that s shares with anyone.
//
// Version and ParentVersion are left as they were: the store assigns
// versions when it keeps the event.
func Apply(s State, ev Event) (State, error) {
	a := applier{s: s}
	if err := a.apply(ev); err != nil {
		return s, err
	}
	return a.s.clip(), nil
}

// Builder folds events into a state it owns. It gives the same results as
// calling Apply for each event, but where Apply must copy the history to
// append to it (the State it was given may have forks), a Builder appends
// in place: folding n events costs O(n), not O(n²), and an event costs the
// same at the ten-thousandth message as at the first. It is how the store
// replays a session and how the agent moves one forward.
//
// States a Builder hands out stay as they were: the history only ever
// grows past their end, and the small collections it changes in place
// (plan, notes, tool log) are copied before the first change after a
// State call. The tool log grows in place: a call's first event appends
// its entry past the end of every State handed out.
type Builder struct {
	a applier
}

// NewBuilder starts from base (which it copies; base stays the caller's).
func NewBuilder(base State) *Builder {
	a := applier{s: base.clone(), own: ownAll}
	a.know()
	return &Builder{a: a}
}

// Check reports whether ev would apply, without applying it.
func (b *Builder) Check(ev Event) error {
	to, err := Next(b.a.s.Phase, ev.Kind)
	if err != nil {
		return err
	}
	return b.a.check(ev, to)
}

// Apply applies one event. On error the builder's state is unchanged.
func (b *Builder) Apply(ev Event) error { return b.a.apply(ev) }

// GrowHistory makes room for n more messages, so that a fold that knows
// how many it will add allocates the history once.
func (b *Builder) GrowHistory(n int) {
	// A Builder owns its history from the start and never gives it up
	// (State keeps ownHistory), so growing it in place is safe.
	b.a.s.History = slices.Grow(b.a.s.History, n)
}

// Phase is the phase reached so far.
func (b *Builder) Phase() Phase { return b.a.s.Phase }

// SetVersion records where the state reached so far sits in the version
// tree; the store assigns versions, Apply does not.
func (b *Builder) SetVersion(version, parent int) {
	b.a.s.Version, b.a.s.ParentVersion = version, parent
}

// State returns the state reached so far. The Builder may go on after it;
// the returned State does not change when it does.
func (b *Builder) State() State {
	b.a.own &= ownHistory | growLog
	return b.a.s.clip()
}

// applier carries the state being built. own says which of the state's
// slices and maps belong to the applier, to change in place; the others
// may be shared with other states and are copied before any change.
type applier struct {
	s   State
	own ownership
}

type ownership uint8

const (
	ownHistory ownership = 1 << iota
	ownPlan
	ownNotes
	ownLog
	ownFiles
	// growLog: the tool log's spare capacity is the applier's, to append
	// in place, though its entries may be shared.
	growLog
	ownAll = ownHistory | ownPlan | ownNotes | ownLog | ownFiles | growLog
)

func (a *applier) apply(ev Event) error {
	a.know()
	to, err := Next(a.s.Phase, ev.Kind)
	if err != nil {
		return err
	}
	if err := a.check(ev, to); err != nil {
		return err
	}
	// Everything below is known to succeed: checks come first, so a failed
	// event never leaves a half-applied state behind in a Builder.
	a.change(ev)
	for _, m := range ev.Messages {
		if m.Role == RoleAssistant {
			a.s.Iteration++
		}
	}
	a.s.Phase = to
	a.s.Usage = a.s.Usage.Add(ev.Usage)
	return nil
}

// know makes the state say where its open calls are, if it does not:
// a state put together by hand, or read from a snapshot, may not.
func (a *applier) know() {
	if _, ok := a.s.open.calls(a.s); !ok {
		a.s.open = exchangeOf(a.s)
	}
}

// check validates ev, which leads to phase to, against the current state
// without changing anything.
func (a *applier) check(ev Event, to Phase) error {
	if err := a.checkMessages(ev, to); err != nil {
		return err
	}
	if err := a.checkRestore(ev); err != nil {
		return err
	}
	if ev.Arrival != 0 && ev.Kind != Imported {
		return invalid(ev.Kind, "only imported numbers an arrival")
	}
	if ev.Always && ev.Kind != ApprovalGiven {
		return invalid(ev.Kind, "only approval_given can allow a tool for the session")
	}
	// Before the kinds' own checks, some of which end the check early.
	if ev.Endpoint != nil && ev.Kind != EndpointSet && ev.Kind != UserMessage {
		return invalid(ev.Kind, "only user_message and endpoint_set carry an endpoint")
	}
	if ev.Endpoint != nil && ev.Endpoint.Model == "" {
		return invalid(ev.Kind, "names no model")
	}
	if ev.Briefing != nil && ev.Kind != UserMessage {
		return invalid(ev.Kind, "only user_message carries a briefing")
	}
	switch ev.Kind {
	case UserMessage:
		if lastOfRole(ev.Messages, RoleUser) < 0 {
			return invalid(ev.Kind, "needs a user message")
		}
	case Answered:
		// checkMessages keeps out every role but the assistant's, and tool
		// calls (nothing would answer them): what is left to check is that
		// there is an answer at all.
		if len(ev.Messages) == 0 {
			return invalid(ev.Kind, "carries no answer")
		}
	case AssistantMessage:
		if len(ev.Messages) == 0 {
			return invalid(ev.Kind, "carries no message")
		}
	case PlanSet:
		return checkPlan(ev)
	case ToolStarted:
		return a.checkToolStarted(ev)
	case ToolFinished:
		_, err := a.openRequest(ev)
		return err
	case ApprovalRequested:
		return a.checkApprovalRequested(ev)
	case ApprovalGiven, ApprovalDenied:
		if _, err := a.pendingApproval(ev); err != nil {
			return err
		}
	case NoteSet:
		if ev.NoteKey == "" {
			return invalid(ev.Kind, "note key is empty")
		}
	case StepStatus:
		if !ev.Status.Valid() {
			return invalid(ev.Kind, "unknown step status %q", ev.Status)
		}
		return a.checkStep(ev)
	case StepCompleted:
		if len(a.s.Memory.Plan) > 0 {
			return a.checkStep(ev)
		}
	case Failed:
		if ev.Text == "" {
			return invalid(ev.Kind, "says nothing about what went wrong")
		}
	case Summarized:
		return a.checkSummary(ev)
	case ToolsDone:
		if len(a.s.openCalls()) > 0 {
			return invalid(ev.Kind, "tool calls are still unanswered")
		}
	case Resumed:
		if !a.s.Unfinished() {
			return invalid(ev.Kind, "there is no interrupted task to go on with")
		}
	case EndpointSet:
		if ev.Endpoint == nil {
			return invalid(ev.Kind, "names no model")
		}
	case Imported:
		if len(ev.Messages) > 0 {
			return invalid(ev.Kind, "carries messages; a session arrives as it was, with nothing said")
		}
		if ev.Arrival < 0 {
			return invalid(ev.Kind, "numbers its arrival %d", ev.Arrival)
		}
	}
	return nil
}

// change applies a checked event.
func (a *applier) change(ev Event) {
	if ev.Kind == Failed || ev.Kind == Interrupted || ev.Kind == Imported {
		// Close every call left open, so the history stays one a strict
		// server accepts, before anything the event carries is appended.
		a.closeOpenCalls(ev)
	}
	a.appendMessages(ev.Messages)
	switch ev.Kind {
	case UserMessage:
		if ev.Endpoint != nil {
			a.s.Endpoint = *ev.Endpoint
		}
		a.s.Briefing = a.s.Briefing.apply(ev.Briefing)
		a.s.Iteration = 0
		a.s.FinalAnswer, a.s.ErrorMessage = "", ""
		a.s.Memory.Plan = nil
		a.s.Memory.CurrentGoal = ev.Messages[lastOfRole(ev.Messages, RoleUser)].Content
	case Answered:
		a.s.FinalAnswer = ev.Messages[len(ev.Messages)-1].Content
		// The model answered: the step it was on is over. Steps it never
		// started stay as they are, for the person to see.
		// (The index is taken first: gremlins cannot place a condition on
		// the line of a func literal, and would never run its mutants.)
		i := slices.IndexFunc(a.s.Memory.Plan, isActive)
		if i >= 0 {
			a.setStepStatus(i, StepDone)
		}
	case PlanSet:
		a.s.Memory.Plan = normalizePlan(ev.Plan)
		if ev.Goal != "" {
			a.s.Memory.CurrentGoal = ev.Goal
		}
	case ToolStarted:
		req, _ := a.openRequest(ev)
		a.upsertCall(ToolCall{ID: req.ID, Name: req.Name, Arguments: req.Arguments}, func(c *ToolCall) {
			c.StartedAt = ev.At
		})
	case ToolFinished:
		req, _ := a.openRequest(ev)
		a.finishCall(req, ev.Tool.Result, ev.Tool.Error, ev.Tool.DurationMS, ev.At)
	case ApprovalRequested:
		req, _ := a.openRequest(ev)
		a.upsertCall(ToolCall{ID: req.ID, Name: req.Name, Arguments: req.Arguments}, func(c *ToolCall) {
			c.Approval = AwaitingDecision
		})
	case ApprovalGiven:
		a.upsertCall(ToolCall{ID: ev.Tool.ID}, func(c *ToolCall) { c.Approval = Approved })
		if ev.Always {
			req, _ := a.openRequest(ev)
			a.allowTool(req.Name)
		}
	case ApprovalDenied:
		a.upsertCall(ToolCall{ID: ev.Tool.ID}, func(c *ToolCall) { c.Approval = Denied })
		req, _ := a.openRequest(ev)
		reason := "the user denied this call"
		if ev.Text != "" {
			reason += ": " + ev.Text
		}
		a.finishCall(req, "", reason, 0, ev.At)
	case NoteSet:
		a.setNote(ev.NoteKey, ev.NoteValue)
	case StepStatus:
		a.setStepStatus(ev.Step, ev.Status)
	case StepCompleted:
		if len(a.s.Memory.Plan) > 0 {
			a.setStepStatus(ev.Step, StepDone)
		}
	case Failed:
		a.s.ErrorMessage = ev.Text
	case Summarized:
		a.s.Summary, a.s.SummaryThrough = ev.Text, ev.Through
	case EndpointSet:
		a.s.Endpoint = *ev.Endpoint
	case RestoreStarted:
		a.s.Restoring = &Restore{From: ev.From, Files: slices.Clone(ev.Files)}
	case FilesRestored:
		a.s.Restoring = nil
	case Imported:
		a.s.Arrival = ev.Arrival
		a.arrive()
		if len(ev.Files) > 0 {
			// A rollback to a version recorded elsewhere: closed as
			// it arrives, and the restore of its files opened in the
			// same step (see rewind.RestoreMove).
			a.s.Restoring = &Restore{From: ev.From, Files: slices.Clone(ev.Files)}
		}
	}
	if ev.Kind == ToolFinished {
		a.recordFiles(ev.Files)
	}
}

func (a *applier) appendMessages(ms []Message) {
	if len(ms) == 0 {
		return
	}
	if a.own&ownHistory == 0 {
		// Clipping makes append copy into an array of our own.
		a.s.History = slices.Clip(a.s.History)
		a.own |= ownHistory
	}
	for _, m := range ms {
		m.ToolCalls = cloneOrNil(m.ToolCalls)
		a.s.open = a.s.open.after(a.s, m)
		a.s.History = append(a.s.History, m)
	}
}

// allowTool adds name to the sorted set of tools allowed for the session.
// The set is a handful of names, so it is copied rather than shared with
// the parent state.
func (a *applier) allowTool(name string) {
	i, found := slices.BinarySearch(a.s.Memory.AllowedTools, name)
	if !found {
		a.s.Memory.AllowedTools = slices.Insert(slices.Clone(a.s.Memory.AllowedTools), i, name)
	}
}

func (a *applier) setNote(key, value string) {
	notes := a.s.Memory.Notes
	if a.own&ownNotes == 0 {
		notes = maps.Clone(notes)
		a.own |= ownNotes
	}
	if value == "" {
		delete(notes, key)
		if len(notes) == 0 {
			notes = nil
		}
	} else {
		if notes == nil {
			notes = make(map[string]string)
		}
		notes[key] = value
	}
	a.s.Memory.Notes = notes
}

func (a *applier) setStepStatus(i int, st StepState) {
	if a.own&ownPlan == 0 {
		a.s.Memory.Plan = slices.Clone(a.s.Memory.Plan)
		a.own |= ownPlan
	}
	a.s.Memory.Plan[i].Status = st
}

// upsertCall changes the log entry with c.ID, or appends c first when the
// log has none.
func (a *applier) upsertCall(c ToolCall, change func(*ToolCall)) {
	log := a.s.Memory.ToolCalls
	i := a.callIndex(c.ID)
	// Ifs, not a tagless switch, so that mutation testing runs the
	// conditions (go-gremlins/gremlins#298).
	if i < 0 {
		if a.own&growLog == 0 {
			// Clipping makes append copy into an array of our own.
			log = slices.Clip(log)
			a.own |= ownLog | growLog
		}
		log = append(log, c)
		i = len(log) - 1
	} else if a.own&ownLog == 0 {
		log = slices.Clone(log)
		a.own |= ownLog | growLog
	}
	change(&log[i])
	a.s.Memory.ToolCalls = log
}

func (a *applier) finishCall(req ToolRequest, result, errText string, durationMS int64, at time.Time) {
	a.upsertCall(ToolCall{ID: req.ID, Name: req.Name, Arguments: req.Arguments}, func(c *ToolCall) {
		c.Result, c.Error, c.FinishedAt = result, errText, at
		c.DurationMS = durationMS
		if c.DurationMS == 0 && !c.StartedAt.IsZero() {
			c.DurationMS = at.Sub(c.StartedAt).Milliseconds()
		}
	})
	a.appendMessages([]Message{{
		Role:       RoleTool,
		Content:    ToolMessageContent(result, errText),
		ToolCallID: req.ID,
		Name:       req.Name,
	}})
}

// arrive closes a session that came from elsewhere (its open calls are
// answered already): what it was doing where it was recorded is over. An
// open restore is left as it is, with no file written; the tools its
// approvals allowed for the session are taken back, since the user here
// gave none of them; and a task under way or interrupted ends without a
// goal to carry on, so that nothing resumes it.
func (a *applier) arrive() {
	if a.s.Phase.Active() || a.s.Unfinished() {
		a.s.Memory.CurrentGoal = ""
	}
	a.s.Restoring = nil
	a.s.Memory.AllowedTools = nil
}

// notRunOnArrival is what a call open when its session was imported is
// answered with.
const notRunOnArrival = "not run: the session was imported while this call was open, and nothing of an imported session runs until the user sends something new"

// closeOpenCalls answers every call still open with an error saying why, and
// marks it finished in the tool log.
func (a *applier) closeOpenCalls(ev Event) {
	reason := "interrupted"
	if ev.Kind == Failed {
		reason = "not completed: " + ev.Text
	} else if ev.Kind == Imported {
		reason = notRunOnArrival
	} else if ev.Text != "" {
		reason += ": " + ev.Text
	}
	for _, req := range a.s.openCalls() {
		a.finishCall(req, "", reason, 0, ev.At)
	}
}

// ToolMessageContent is what the model is told a call returned: its result,
// its error, or both.
func ToolMessageContent(result, errText string) string {
	if errText == "" {
		return result
	}
	if result == "" {
		return "Error: " + errText
	}
	return result + "\n\nError: " + errText
}

// callIndex finds the log entry of the unanswered call with this id, or
// -1.
func (a *applier) callIndex(id string) int { return a.s.openCallIndex(id) }

// OpenCallEntry returns the tool log's entry of the open call id, if the
// call has one yet (it has once it asked for approval or started).
func (s State) OpenCallEntry(id string) (ToolCall, bool) {
	if i := s.openCallIndex(id); i >= 0 {
		return s.Memory.ToolCalls[i], true
	}
	return ToolCall{}, false
}

// openCallIndex finds the log entry of the unanswered call with this id,
// or -1. An entry that has finished is an earlier call's: some servers
// number their calls per reply, so an id can come back in a later turn.
// The entries of the calls still open are the log's last ones: only the
// latest exchange's share is read, whatever the length of the log.
func (s State) openCallIndex(id string) int {
	log := s.Memory.ToolCalls
	stop := max(len(log)-s.exchangeSize(), 0)
	for i := len(log) - 1; i >= stop; i-- {
		if log[i].ID == id && !log[i].Finished() {
			return i
		}
	}
	return -1
}

// cloneOrNil copies s; an empty s becomes nil, the one form of "none" a
// state holds in memory.
func cloneOrNil[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}

func normalizePlan(plan []Step) []Step {
	out := cloneOrNil(plan)
	for i := range out {
		if out[i].Status == "" {
			out[i].Status = StepPending
		}
	}
	return out
}

func lastOfRole(ms []Message, role string) int {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Role == role {
			return i
		}
	}
	return -1
}

// clone returns a copy of s that shares no slice or map that Apply or a
// Builder writes to. Messages themselves are never modified once in the
// history, so they are copied by value.
func (s State) clone() State {
	s.History = slices.Clone(s.History)
	s.Memory.Plan = slices.Clone(s.Memory.Plan)
	s.Memory.Notes = maps.Clone(s.Memory.Notes)
	s.Memory.ToolCalls = slices.Clone(s.Memory.ToolCalls)
	s.Memory.AllowedTools = slices.Clone(s.Memory.AllowedTools)
	s.Files = maps.Clone(s.Files)
	return s
}

// clip caps every growable slice at its length, so that a later append by
// anyone copies instead of writing into spare capacity another state uses.
func (s State) clip() State {
	s.History = slices.Clip(s.History)
	s.Memory.Plan = slices.Clip(s.Memory.Plan)
	s.Memory.ToolCalls = slices.Clip(s.Memory.ToolCalls)
	return s
}

func isActive(st Step) bool { return st.Status == StepActive }
