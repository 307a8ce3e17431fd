package state

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func user(text string) Message  { return Message{Role: RoleUser, Content: text} }
func reply(text string) Message { return Message{Role: RoleAssistant, Content: text} }

func callMsg(ids ...string) Message {
	m := Message{Role: RoleAssistant}
	for _, id := range ids {
		m.ToolCalls = append(m.ToolCalls, ToolRequest{ID: id, Name: "read_file", Arguments: `{"path":"a.go"}`})
	}
	return m
}

func must(t *testing.T, s State, evs ...Event) State {
	t.Helper()
	for _, ev := range evs {
		if ev.At.IsZero() {
			ev.At = t0
		}
		next, err := Apply(s, ev)
		if err != nil {
			t.Fatalf("apply %s in %s: %v", ev.Kind, s.Phase, err)
		}
		s = next
	}
	return s
}

// SpecPhases, SpecEventKinds and SpecMachine are the phase machine written
// out by hand from the drawing in doc.go and DESIGN.md §2, one edge a line,
// to be reviewed against them. Nothing here is computed from the product:
// the product's Transitions, Next, Apply and doc.go are all held to this.
// (They are exported so the external tests can use them too.)
var (
	SpecPhases     = []Phase{Idle, Planning, Executing, AwaitingApproval, Reflecting, Done, Error}
	SpecEventKinds = []EventKind{
		UserMessage, PlanSet, Answered, ToolStarted, ToolFinished, AssistantMessage,
		NoteSet, StepStatus, ApprovalRequested, ApprovalGiven, ApprovalDenied,
		StepCompleted, Continue, Replan, Failed, Interrupted, Summarized,
		ToolsDone, Resumed, EndpointSet, RestoreStarted, FilesRestored, Imported,
	}
	SpecMachine = []Transition{
		// idle, done, error --user_message--> planning
		{Idle, UserMessage, Planning},
		{Done, UserMessage, Planning},
		{Error, UserMessage, Planning},
		// planning, executing --plan_set--> executing
		{Planning, PlanSet, Executing},
		{Executing, PlanSet, Executing},
		// planning --answered--> done
		{Planning, Answered, Done},
		// executing --tool_started, tool_finished, assistant_message, note_set, step_status--> executing
		{Executing, ToolStarted, Executing},
		{Executing, ToolFinished, Executing},
		{Executing, AssistantMessage, Executing},
		{Executing, NoteSet, Executing},
		{Executing, StepStatus, Executing},
		// executing --approval_requested--> awaiting_approval
		{Executing, ApprovalRequested, AwaitingApproval},
		// awaiting_approval --approval_given, approval_denied--> executing
		{AwaitingApproval, ApprovalGiven, Executing},
		{AwaitingApproval, ApprovalDenied, Executing},
		// executing --step_completed--> reflecting
		{Executing, StepCompleted, Reflecting},
		// reflecting --continue--> executing
		{Reflecting, Continue, Executing},
		// reflecting --replan--> planning
		{Reflecting, Replan, Planning},
		// reflecting --answered--> done
		{Reflecting, Answered, Done},
		// planning, executing, awaiting_approval, reflecting --failed--> error
		{Planning, Failed, Error},
		{Executing, Failed, Error},
		{AwaitingApproval, Failed, Error},
		{Reflecting, Failed, Error},
		// planning, executing, awaiting_approval, reflecting --interrupted--> idle
		{Planning, Interrupted, Idle},
		{Executing, Interrupted, Idle},
		{AwaitingApproval, Interrupted, Idle},
		{Reflecting, Interrupted, Idle},
		// every phase but awaiting_approval --summarized--> (same phase)
		{Idle, Summarized, Idle},
		{Planning, Summarized, Planning},
		{Executing, Summarized, Executing},
		{Reflecting, Summarized, Reflecting},
		{Done, Summarized, Done},
		{Error, Summarized, Error},
		// executing --tools_done--> reflecting
		{Executing, ToolsDone, Reflecting},
		// idle --resumed--> reflecting
		{Idle, Resumed, Reflecting},
		// idle, done, error --endpoint_set--> (same phase)
		{Idle, EndpointSet, Idle},
		{Done, EndpointSet, Done},
		{Error, EndpointSet, Error},
		// idle, planning, executing, awaiting_approval, reflecting, done, error
		//            --restore_started, files_restored--> (same phase)
		{Idle, RestoreStarted, Idle},
		{Planning, RestoreStarted, Planning},
		{Executing, RestoreStarted, Executing},
		{AwaitingApproval, RestoreStarted, AwaitingApproval},
		{Reflecting, RestoreStarted, Reflecting},
		{Done, RestoreStarted, Done},
		{Error, RestoreStarted, Error},
		{Idle, FilesRestored, Idle},
		{Planning, FilesRestored, Planning},
		{Executing, FilesRestored, Executing},
		{AwaitingApproval, FilesRestored, AwaitingApproval},
		{Reflecting, FilesRestored, Reflecting},
		{Done, FilesRestored, Done},
		{Error, FilesRestored, Error},
		// planning, executing, awaiting_approval, reflecting --imported--> idle
		{Planning, Imported, Idle},
		{Executing, Imported, Idle},
		{AwaitingApproval, Imported, Idle},
		{Reflecting, Imported, Idle},
		// idle, done, error --imported--> (same phase)
		{Idle, Imported, Idle},
		{Done, Imported, Done},
		{Error, Imported, Error},
	}
)

// The wire names are what the store keeps and scripts read: a contract,
// written here by hand (DESIGN.md §2, the event list in event.go).
var (
	wirePhase = map[Phase]string{
		Idle: "idle", Planning: "planning", Executing: "executing", AwaitingApproval: "awaiting_approval",
		Reflecting: "reflecting", Done: "done", Error: "error",
	}
	wireEvent = map[EventKind]string{
		UserMessage: "user_message", PlanSet: "plan_set", Answered: "answered", ToolStarted: "tool_started",
		ToolFinished: "tool_finished", AssistantMessage: "assistant_message", NoteSet: "note_set",
		StepStatus: "step_status", ApprovalRequested: "approval_requested", ApprovalGiven: "approval_given",
		ApprovalDenied: "approval_denied", StepCompleted: "step_completed", Continue: "continue",
		Replan: "replan", Failed: "failed", Interrupted: "interrupted", Summarized: "summarized",
		ToolsDone: "tools_done", Resumed: "resumed", EndpointSet: "endpoint_set",
		RestoreStarted: "restore_started", FilesRestored: "files_restored", Imported: "imported",
	}
)

func specIndex(t *testing.T) map[edge]Phase {
	t.Helper()
	m := map[edge]Phase{}
	for _, tr := range SpecMachine {
		if _, dup := m[edge{tr.From, tr.Event}]; dup {
			t.Fatalf("the specification lists %s --%s--> twice", wirePhase[tr.From], wireEvent[tr.Event])
		}
		m[edge{tr.From, tr.Event}] = tr.To
	}
	return m
}

// The enumerations the TUI draws from and the tests walk must hold every
// phase and kind, in the documented order.
func TestEnumerationsAreComplete(t *testing.T) {
	if !slices.Equal(Phases, SpecPhases) {
		t.Errorf("Phases = %v, want %v", Phases, SpecPhases)
	}
	if !slices.Equal(EventKinds, SpecEventKinds) {
		t.Errorf("EventKinds = %v, want %v", EventKinds, SpecEventKinds)
	}
}

// The product's table is the specification: every edge, no other, each
// with the same target, each once.
func TestTransitionsTableIsTheSpecification(t *testing.T) {
	want := specIndex(t)
	got := map[edge]Phase{}
	for _, tr := range Transitions {
		e := edge{tr.From, tr.Event}
		if _, dup := got[e]; dup {
			t.Errorf("table lists %s --%s--> twice", wirePhase[tr.From], wireEvent[tr.Event])
		}
		got[e] = tr.To
		to, ok := want[e]
		switch {
		case !ok:
			t.Errorf("table has %s --%s--> %s, which the specification does not", wirePhase[tr.From], wireEvent[tr.Event], wirePhase[tr.To])
		case to != tr.To:
			t.Errorf("table has %s --%s--> %s, the specification says %s", wirePhase[tr.From], wireEvent[tr.Event], wirePhase[tr.To], wirePhase[to])
		}
	}
	for _, tr := range SpecMachine {
		if _, ok := got[edge{tr.From, tr.Event}]; !ok {
			t.Errorf("table lacks %s --%s--> %s", wirePhase[tr.From], wireEvent[tr.Event], wirePhase[tr.To])
		}
	}
}

// Next answers for every pair, including kinds that do not exist: the
// specified target, or a *TransitionError naming both.
func TestNextFollowsTheSpecification(t *testing.T) {
	want := specIndex(t)
	phases := append(slices.Clone(SpecPhases), Phase(len(SpecPhases)))
	kinds := append([]EventKind{0}, SpecEventKinds...)
	kinds = append(kinds, EventKind(len(SpecEventKinds)+1))
	for _, p := range phases {
		for _, k := range kinds {
			got, err := Next(p, k)
			to, ok := want[edge{p, k}]
			if ok {
				if err != nil || got != to {
					t.Errorf("Next(%v, %v) = %v, %v; want %v", p, k, got, err, to)
				}
				continue
			}
			var te *TransitionError
			if !errors.As(err, &te) || !errors.Is(err, ErrIllegalTransition) || te.From != p || te.Event != k {
				t.Errorf("Next(%v, %v): got %v, %#v; want a *TransitionError naming both", p, k, got, err)
			}
			if got != p {
				t.Errorf("Next(%v, %v) refused but moved to %v", p, k, got)
			}
		}
	}
}

// fixture returns a state in phase p from which an event of kind k is
// valid, and that event. Executing comes in two shapes: with an unanswered
// tool call (for the tool events) and without (for everything that adds a
// message).
func fixture(t *testing.T, p Phase, k EventKind) (State, Event) {
	t.Helper()
	planning := must(t, New("s"), Event{Kind: UserMessage, Messages: []Message{user("fix the build")}})
	executing := must(t, planning, Event{Kind: PlanSet, Plan: []Step{{Text: "read"}, {Text: "fix"}}})
	withCall := must(t, executing, Event{Kind: AssistantMessage, Messages: []Message{callMsg("c1")}})
	var s State
	switch p {
	case Idle:
		s = New("s")
		if k == Resumed {
			s = must(t, planning, Event{Kind: Interrupted, Text: "cancelled"})
		}
	case Planning:
		s = planning
	case Executing:
		s = executing
		if k == ToolStarted || k == ToolFinished || k == ApprovalRequested {
			s = withCall
		}
	case AwaitingApproval:
		s = must(t, withCall, Event{Kind: ApprovalRequested, Tool: &ToolCall{ID: "c1"}})
	case Reflecting:
		s = must(t, executing, Event{Kind: StepCompleted, Step: 0})
	case Done:
		s = must(t, planning, Event{Kind: Answered, Messages: []Message{reply("it builds")}})
	case Error:
		s = must(t, planning, Event{Kind: Failed, Text: "401 from the endpoint"})
	}
	ev := Event{Kind: k, At: t0.Add(time.Second)}
	switch k {
	case UserMessage:
		ev.Messages = []Message{user("and the tests?")}
	case PlanSet:
		ev.Plan = []Step{{Text: "one step"}}
	case Answered:
		ev.Messages = []Message{reply("done")}
	case AssistantMessage:
		ev.Messages = []Message{reply("looking")}
	case ToolStarted, ToolFinished, ApprovalRequested, ApprovalGiven, ApprovalDenied:
		ev.Tool = &ToolCall{ID: "c1", Result: "package main"}
	case NoteSet:
		ev.NoteKey, ev.NoteValue = "lang", "go"
	case StepStatus:
		ev.Status = StepActive
	case Failed:
		ev.Text = "boom"
	case Summarized:
		ev.Text = "they talked about the build"
	case EndpointSet:
		ev.Endpoint = &Endpoint{Model: "gpt-test", BaseURL: "http://localhost:11434/v1"}
	case RestoreStarted:
		ev.From = 1
		ev.Files = []FileChange{{Path: "a.go", Before: FileImage{Absent: true}, After: FileImage{Absent: true}}}
	case FilesRestored:
		s = must(t, s, Event{Kind: RestoreStarted, From: 1,
			Files: []FileChange{{Path: "a.go", Before: FileImage{Absent: true}, After: FileImage{Absent: true}}}})
		ev.Text = "restored 1 file"
	}
	return s, ev
}

// The whole machine through Apply and through a Builder: every (phase,
// event) pair the specification lists lands where it says; every other
// pair is refused with a *TransitionError naming both, and changes nothing.
func TestEveryPhaseEventPair(t *testing.T) {
	legal := specIndex(t)
	for _, p := range SpecPhases {
		for _, k := range SpecEventKinds {
			t.Run(wirePhase[p]+"/"+wireEvent[k], func(t *testing.T) {
				s, ev := fixture(t, p, k)
				if s.Phase != p {
					t.Fatalf("fixture is in %v, want %v", s.Phase, p)
				}
				before := fmt.Sprintf("%#v", s)
				next, err := Apply(s, ev)
				b := NewBuilder(s)
				checkErr := b.Check(ev)
				buildErr := b.Apply(ev)
				want, ok := legal[edge{p, k}]
				if !ok {
					for _, err := range []error{err, checkErr, buildErr} {
						var te *TransitionError
						if !errors.As(err, &te) || !errors.Is(err, ErrIllegalTransition) {
							t.Fatalf("got %v, want a *TransitionError", err)
						}
						if te.From != p || te.Event != k {
							t.Fatalf("error names (%v, %v), want (%v, %v)", te.From, te.Event, p, k)
						}
						want := "illegal transition: " + wireEvent[k] + " event in phase " + wirePhase[p]
						if msg := err.Error(); msg != want {
							t.Fatalf("message %q, want %q", msg, want)
						}
					}
					if !reflect.DeepEqual(next, s) || fmt.Sprintf("%#v", s) != before {
						t.Fatalf("a refused event changed the state")
					}
					if !reflect.DeepEqual(b.State(), s) || b.Phase() != p {
						t.Fatalf("a refused event changed the builder")
					}
					return
				}
				if err != nil || checkErr != nil || buildErr != nil {
					t.Fatalf("legal transition refused: Apply %v, Check %v, Builder %v", err, checkErr, buildErr)
				}
				if next.Phase != want || b.Phase() != want {
					t.Fatalf("landed in %v (builder %v), want %v", next.Phase, b.Phase(), want)
				}
				if fmt.Sprintf("%#v", s) != before {
					t.Fatalf("Apply changed its input")
				}
			})
		}
	}
}

// The machine drawn in doc.go says what the specification says: the
// drawing, this test and the table cannot drift apart.
func TestDocDrawsTheMachine(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	drawn, err := parseDrawing(string(src))
	if err != nil {
		t.Fatal(err)
	}
	want := specIndex(t)
	for e, to := range drawn {
		switch w, ok := want[e]; {
		case !ok:
			t.Errorf("doc.go draws %s --%s--> %s, which the specification does not", wirePhase[e.from], wireEvent[e.ev], wirePhase[to])
		case w != to:
			t.Errorf("doc.go draws %s --%s--> %s, the specification says %s", wirePhase[e.from], wireEvent[e.ev], wirePhase[to], wirePhase[w])
		}
	}
	for e, to := range want {
		if _, ok := drawn[e]; !ok {
			t.Errorf("doc.go does not draw %s --%s--> %s", wirePhase[e.from], wireEvent[e.ev], wirePhase[to])
		}
	}
}

// The parser must read what it is given, or the test above proves nothing.
func TestParseDrawing(t *testing.T) {
	doc := "// # The phase machine\n//\n// Text.\n//\n" +
		"//\tidle, done --user_message-----> planning\n" +
		"//\texecuting  --tool_started,\n//\t             note_set--> executing\n" +
		"//\tevery phase but awaiting_approval --summarized--> (same phase)\n" +
		"//\n// # Next section\n//\n//\treflecting --replan--> planning\n"
	got, err := parseDrawing(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := map[edge]Phase{
		{Idle, UserMessage}: Planning, {Done, UserMessage}: Planning,
		{Executing, ToolStarted}: Executing, {Executing, NoteSet}: Executing,
	}
	for _, p := range []Phase{Idle, Planning, Executing, Reflecting, Done, Error} {
		want[edge{p, Summarized}] = p
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parsed %v, want %v", got, want)
	}
	for _, bad := range []string{
		"// # The phase machine\n//\tidle --user_message planning\n",
		"// # The phase machine\n//\tidle user_message--> planning\n",
		"// # The phase machine\n//\tidle --user_msg--> planning\n",
		"// # The phase machine\n//\tsleeping --user_message--> planning\n",
		"// # The phase machine\n//\tidle --user_message--> nowhere\n",
		"// # The phase machine\n//\tidle, idle --user_message--> planning\n",
		"// # The machine\n//\tidle --user_message--> planning\n",
	} {
		if got, err := parseDrawing(bad); err == nil {
			t.Errorf("parseDrawing accepted %q as %v", bad, got)
		}
	}
}

var drawnEdge = regexp.MustCompile(`^(.+?)\s+--\s*(.+?)\s*-*->\s*(.+)$`)

// parseDrawing reads the indented block under "# The phase machine" in a
// package doc: lines of the form "FROM, FROM --EVENT, EVENT--> TO" (the
// arrow's dashes pad the columns, so there may be one or many), where a
// line without an arrow goes on in the next, FROM may be "every phase but
// P", and TO may be "(same phase)". Names are read with the hand-written
// wire names of this test, not with the product's parser.
func parseDrawing(src string) (map[edge]Phase, error) {
	phaseByName, kindByName := map[string]Phase{}, map[string]EventKind{}
	for p, n := range wirePhase {
		phaseByName[n] = p
	}
	for k, n := range wireEvent {
		kindByName[n] = k
	}
	_, after, ok := strings.Cut(src, "// # The phase machine\n")
	if !ok {
		return nil, errors.New("no '# The phase machine' section")
	}
	var lines []string
	pending := ""
	for _, line := range strings.Split(after, "\n") {
		if strings.HasPrefix(line, "// #") || !strings.HasPrefix(line, "//") {
			break
		}
		code, ok := strings.CutPrefix(line, "//\t")
		if !ok {
			continue
		}
		pending += " " + strings.TrimSpace(code)
		if strings.Contains(pending, "->") {
			lines, pending = append(lines, strings.TrimSpace(pending)), ""
		}
	}
	if pending != "" || len(lines) == 0 {
		return nil, fmt.Errorf("unfinished or missing drawing: %q", pending)
	}
	out := map[edge]Phase{}
	for _, line := range lines {
		m := drawnEdge.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("cannot read %q", line)
		}
		var froms []Phase
		if but, ok := strings.CutPrefix(m[1], "every phase but "); ok {
			except, known := phaseByName[but]
			if !known {
				return nil, fmt.Errorf("unknown phase %q in %q", but, line)
			}
			for _, p := range SpecPhases {
				if p != except {
					froms = append(froms, p)
				}
			}
		} else {
			for _, name := range strings.Split(m[1], ",") {
				p, known := phaseByName[strings.TrimSpace(name)]
				if !known {
					return nil, fmt.Errorf("unknown phase %q in %q", name, line)
				}
				froms = append(froms, p)
			}
		}
		for _, name := range strings.Split(m[2], ",") {
			k, known := kindByName[strings.Trim(strings.TrimSpace(name), "-")]
			if !known {
				return nil, fmt.Errorf("unknown event %q in %q", name, line)
			}
			for _, from := range froms {
				to := from
				if m[3] != "(same phase)" {
					var known bool
					if to, known = phaseByName[m[3]]; !known {
						return nil, fmt.Errorf("unknown phase %q in %q", m[3], line)
					}
				}
				if _, dup := out[edge{from, k}]; dup {
					return nil, fmt.Errorf("%s --%s--> drawn twice", wirePhase[from], wireEvent[k])
				}
				out[edge{from, k}] = to
			}
		}
	}
	return out, nil
}

// Phases and kinds are written and read by their wire names; an unknown
// name or number is an error, never a silent zero.
func TestWireNames(t *testing.T) {
	for _, p := range SpecPhases {
		if got := p.String(); got != wirePhase[p] {
			t.Errorf("phase %d is called %q, want %q", uint8(p), got, wirePhase[p])
		}
		if b, err := p.MarshalText(); err != nil || string(b) != wirePhase[p] {
			t.Errorf("phase %d marshals to %q, %v; want %q", uint8(p), b, err, wirePhase[p])
		}
		var got Phase = 99
		if err := got.UnmarshalText([]byte(wirePhase[p])); err != nil || got != p {
			t.Errorf("%q reads as %d, %v; want %d", wirePhase[p], got, err, p)
		}
	}
	for _, k := range SpecEventKinds {
		if got := k.String(); got != wireEvent[k] {
			t.Errorf("kind %d is called %q, want %q", uint8(k), got, wireEvent[k])
		}
		if b, err := k.MarshalText(); err != nil || string(b) != wireEvent[k] {
			t.Errorf("kind %d marshals to %q, %v; want %q", uint8(k), b, err, wireEvent[k])
		}
		var got EventKind = 99
		if err := got.UnmarshalText([]byte(wireEvent[k])); err != nil || got != k {
			t.Errorf("%q reads as %d, %v; want %d", wireEvent[k], got, err, k)
		}
	}

	// Out of range: a visible placeholder to show, an error to store.
	for p, want := range map[Phase]string{7: "phase(7)", 200: "phase(200)"} {
		if got := p.String(); got != want {
			t.Errorf("Phase(%d).String() = %q, want %q", uint8(p), got, want)
		}
		if b, err := p.MarshalText(); err == nil {
			t.Errorf("Phase(%d) marshalled to %q", uint8(p), b)
		}
	}
	for k, want := range map[EventKind]string{0: "event(0)", 24: "event(24)", 255: "event(255)"} {
		if got := k.String(); got != want {
			t.Errorf("EventKind(%d).String() = %q, want %q", uint8(k), got, want)
		}
		if b, err := k.MarshalText(); err == nil {
			t.Errorf("EventKind(%d) marshalled to %q", uint8(k), b)
		}
	}

	var p Phase = Reflecting
	for _, name := range []string{"sleeping", "", "Idle", "phase(1)"} {
		if err := p.UnmarshalText([]byte(name)); err == nil || p != Reflecting {
			t.Errorf("phase name %q: got %v, %v; want an error and no change", name, p, err)
		}
	}
	var k EventKind = Replan
	for _, name := range []string{"user-message", "", "event(0)", "Failed"} {
		if err := k.UnmarshalText([]byte(name)); err == nil || k != Replan {
			t.Errorf("event name %q: got %v, %v; want an error and no change", name, k, err)
		}
	}
}

// Active is true exactly in the phases where the agent acts next: those
// the drawing lets fail or be interrupted.
func TestActivePhases(t *testing.T) {
	want := map[Phase]bool{Planning: true, Executing: true, AwaitingApproval: true, Reflecting: true}
	for _, p := range append(slices.Clone(SpecPhases), 7) {
		if got := p.Active(); got != want[p] {
			t.Errorf("%v.Active() = %v, want %v", p, got, want[p])
		}
	}
}
