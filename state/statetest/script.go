// Package statetest makes scripted sessions for tests: sequences of events
// that a real agent could produce, chosen at random from a seed, each one
// legal and valid in the state it is applied to.
package statetest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"retrace/state"
)

// Epoch is the time of the first event of every script, so scripts are
// reproducible to the nanosecond.
var Epoch = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

// Script applies n random events to s and returns them with the state they
// lead to. The same rng state gives the same events.
func Script(rng *rand.Rand, s state.State, n int) ([]state.Event, state.State) {
	events := make([]state.Event, 0, n)
	for range n {
		ev := NextEvent(rng, s)
		next, err := state.Apply(s, ev)
		if err != nil {
			panic(fmt.Sprintf("statetest: generated an event Apply refuses in %s: %v", s.Phase, err))
		}
		events = append(events, ev)
		s = next
	}
	return events, s
}

// NextEvent returns a random event that is legal and valid in s.
func NextEvent(rng *rand.Rand, s state.State) state.Event {
	g := gen{rng: rng, s: s}
	ev := g.pick()
	ev.At = Epoch.Add(time.Duration(len(s.History)*1000+int(s.Usage.CompletionTokens)) * time.Millisecond).
		Add(time.Duration(rng.IntN(1_000_000)) * time.Microsecond)
	if rng.IntN(3) == 0 {
		ev.Usage = state.Usage{PromptTokens: rng.IntN(500), CompletionTokens: rng.IntN(200)}
	}
	return ev
}

type gen struct {
	rng *rand.Rand
	s   state.State
}

func (g gen) chance(percent int) bool { return g.rng.IntN(100) < percent }

func (g gen) pick() state.Event {
	if r := g.s.Restoring; r != nil {
		return state.Event{Kind: state.FilesRestored, Text: fmt.Sprintf("restored %d files", len(r.Files))}
	}
	if g.chance(2) {
		return state.Event{Kind: state.RestoreStarted, From: g.rng.IntN(20), Files: g.files()}
	}
	if g.s.Phase.Active() && g.chance(3) {
		if g.chance(50) {
			return state.Event{Kind: state.Failed, Text: "the model endpoint answered 503 four times"}
		}
		return state.Event{Kind: state.Interrupted, Text: "cancelled by the user", Messages: g.maybeAssistant(40)}
	}
	if g.s.Phase != state.AwaitingApproval && g.chance(2) {
		return state.Event{Kind: state.Summarized, Text: "Summary: " + g.text(12), Through: g.turnStart()}
	}
	switch g.s.Phase {
	case state.Planning:
		return g.planning()
	case state.Executing:
		return g.executing()
	case state.AwaitingApproval:
		return g.awaiting()
	case state.Reflecting:
		return g.reflecting()
	default: // idle, done, error
		msgs := []state.Message{{Role: state.RoleUser, Content: g.text(20)}}
		if len(g.s.History) == 0 && g.chance(50) {
			msgs = append([]state.Message{{Role: state.RoleSystem, Content: "You are retrace."}}, msgs...)
		}
		return state.Event{Kind: state.UserMessage, Messages: msgs}
	}
}

func (g gen) planning() state.Event {
	if g.chance(25) {
		return state.Event{Kind: state.Answered, Messages: []state.Message{g.assistant()}}
	}
	plan := make([]state.Step, 1+g.rng.IntN(3))
	for i := range plan {
		plan[i] = state.Step{Text: g.text(5)}
	}
	return state.Event{Kind: state.PlanSet, Plan: plan, Goal: g.text(6)}
}

func (g gen) executing() state.Event {
	if open := g.s.OpenCalls(); len(open) > 0 {
		call := open[0]
		entry, logged := g.logEntry(call.ID)
		started := logged && !entry.StartedAt.IsZero()
		switch {
		case started:
			ev := state.Event{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: call.ID, DurationMS: int64(g.rng.IntN(3000))}}
			if g.chance(20) {
				ev.Tool.Error = "exit status 1"
			} else {
				ev.Tool.Result = g.text(30)
			}
			if g.chance(30) {
				ev.Files = g.files()
			}
			return ev
		case logged && entry.Approval == state.Approved, g.chance(70):
			return state.Event{Kind: state.ToolStarted, Tool: &state.ToolCall{ID: call.ID}}
		default:
			return state.Event{Kind: state.ApprovalRequested, Tool: &state.ToolCall{ID: call.ID}}
		}
	}
	plan := len(g.s.Memory.Plan)
	switch r := g.rng.IntN(100); {
	case r < 40:
		m := state.Message{Role: state.RoleAssistant}
		if g.chance(50) {
			m.Content = g.text(8)
		}
		for i := range 1 + g.rng.IntN(2) {
			m.ToolCalls = append(m.ToolCalls, state.ToolRequest{
				ID:        fmt.Sprintf("call_%d_%d", len(g.s.History), i),
				Name:      []string{"read_file", "write_file", "run_command"}[g.rng.IntN(3)],
				Arguments: fmt.Sprintf(`{"path":"src/%s.go"}`, g.word()),
			})
		}
		return state.Event{Kind: state.AssistantMessage, Messages: []state.Message{m}}
	case r < 50:
		return state.Event{Kind: state.AssistantMessage, Messages: []state.Message{g.assistant()}}
	case r < 60:
		value := g.text(4)
		if g.chance(20) {
			value = ""
		}
		return state.Event{Kind: state.NoteSet, NoteKey: g.word(), NoteValue: value}
	case r < 70 && plan > 0:
		statuses := []state.StepState{state.StepActive, state.StepFailed, state.StepSkipped}
		return state.Event{Kind: state.StepStatus, Step: g.rng.IntN(plan), Status: statuses[g.rng.IntN(len(statuses))]}
	default:
		ev := state.Event{Kind: state.StepCompleted}
		if plan > 0 {
			ev.Step = g.rng.IntN(plan)
		}
		return ev
	}
}

func (g gen) awaiting() state.Event {
	id := g.s.OpenCalls()[0].ID
	// One draw decides, as it did before Always existed, so a seed still
	// gives the script it always gave, with some approvals now for good.
	switch r := g.rng.IntN(100); {
	case r < 20:
		return state.Event{Kind: state.ApprovalGiven, Tool: &state.ToolCall{ID: id}, Always: true}
	case r < 70:
		return state.Event{Kind: state.ApprovalGiven, Tool: &state.ToolCall{ID: id}}
	}
	return state.Event{Kind: state.ApprovalDenied, Tool: &state.ToolCall{ID: id}, Text: "not now"}
}

func (g gen) reflecting() state.Event {
	switch r := g.rng.IntN(100); {
	case r < 45:
		return state.Event{Kind: state.Continue, Messages: g.maybeAssistant(30)}
	case r < 60:
		return state.Event{Kind: state.Replan}
	default:
		return state.Event{Kind: state.Answered, Messages: []state.Message{g.assistant()}}
	}
}

// turnStart picks where a summary may end: the start of a turn the last
// summary did not cover yet, or where the last summary ended.
func (g gen) turnStart() int {
	starts := []int{g.s.SummaryThrough}
	for i := g.s.SummaryThrough + 1; i < len(g.s.History); i++ {
		if g.s.History[i].Role == state.RoleUser {
			starts = append(starts, i)
		}
	}
	return starts[g.rng.IntN(len(starts))]
}

func (g gen) maybeAssistant(percent int) []state.Message {
	if g.chance(percent) {
		return []state.Message{g.assistant()}
	}
	return nil
}

func (g gen) assistant() state.Message {
	return state.Message{Role: state.RoleAssistant, Content: g.text(25)}
}

func (g gen) logEntry(id string) (state.ToolCall, bool) {
	for _, c := range g.s.Memory.ToolCalls {
		if c.ID == id {
			return c, true
		}
	}
	return state.ToolCall{}, false
}

var words = strings.Fields(`the file main.go reads a config and opens the store then
	résumé naïve ✓ 数据 checks every version of plan step tool result error
	quickly branch fork head rollback emoji 🙂 line	tab "quoted" back\slash`)

// files makes one to three changes to distinct paths, some of them to
// paths the session touched before, so manifests both grow and change.
func (g gen) files() []state.FileChange {
	var out []state.FileChange
	seen := map[string]bool{}
	for range 1 + g.rng.IntN(3) {
		p := "src/" + g.word() + ".go"
		if seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, state.FileChange{Path: p, Before: g.image(), After: g.image()})
	}
	return out
}

func (g gen) image() state.FileImage {
	switch r := g.rng.IntN(10); {
	case r < 2:
		return state.FileImage{Absent: true}
	case r < 3:
		return state.FileImage{Size: 11 << 20, Mode: 0o644, Untracked: "larger than the 10 MiB cap"}
	default:
		sum := sha256.Sum256([]byte(g.text(3)))
		return state.FileImage{Blob: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(g.rng.IntN(5000)), Mode: 0o644}
	}
}

func (g gen) word() string { return words[g.rng.IntN(len(words))] }

func (g gen) text(n int) string {
	var b strings.Builder
	for i := range 1 + g.rng.IntN(n) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(g.word())
	}
	return b.String()
}
