// Package yearbench makes the file a year of daily use leaves: many
// sessions of many checkpoints each, every checkpoint an event a real
// task writes (the user's message, a plan, tool calls with their results,
// the answer), of the sizes a real chat has. `retrace bench --sessions N`
// builds it with Build and measures one of its sessions against the same
// session alone in a file of its own.
//
// Sessions go in through Store.Import, the bulk path: thousands of
// checkpoints per transaction, so two thousand sessions of a thousand
// checkpoints take minutes, where one fsync per checkpoint would take
// hours.
package yearbench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"retrace/state"
	"retrace/storage"
)

// OldAge is how long ago every fifth session (never the measured one) was
// last updated, so that `gc --older-than 90d` has sessions to remove.
const OldAge = 200 * 24 * time.Hour

// GCAge is the age gc is run with: older than every recent session
// (updated in the last 30 days), younger than the old ones.
const GCAge = 90 * 24 * time.Hour

// Plan says what Build makes.
type Plan struct {
	Sessions    int
	Checkpoints int       // per session
	Now         time.Time // the sessions' times are set back from it
	// Workspace is where the sessions say they work: a directory that
	// exists, for a benchmark that opens one to work in it (a session
	// works only in the workspace it recorded). Empty is /src/bench.
	Workspace string
}

func (p Plan) workspace() string {
	if p.Workspace == "" {
		return "/src/bench"
	}
	return p.Workspace
}

// Measured is the index of the session the benchmark measures: the middle
// of the file, so it sits among others, not at either end.
func (p Plan) Measured() int { return p.Sessions / 2 }

// Old reports whether session i is one gc removes by age.
func (p Plan) Old(i int) bool { return i%5 == 0 && i != p.Measured() }

// Build imports p.Sessions sessions of p.Checkpoints checkpoints each
// into st, reporting after each, and returns the measured session as
// imported, under the id the store gave it.
func Build(ctx context.Context, st storage.Store, p Plan, progress func(done int)) (storage.Export, error) {
	var measured storage.Export
	for i := range p.Sessions {
		if err := ctx.Err(); err != nil {
			return measured, err
		}
		ex, err := Session(i, p)
		if err != nil {
			return measured, err
		}
		info, err := st.Import(ctx, ex)
		if err != nil {
			return measured, fmt.Errorf("bench: import session %d of %d: %w", i+1, p.Sessions, err)
		}
		if i == p.Measured() {
			ex.Session.ID = info.ID
			measured = ex
		}
		if progress != nil {
			progress(i + 1)
		}
	}
	return measured, nil
}

// Session returns session i of the plan as an export with no id (the
// store gives it one). The same i and plan give the same session.
func Session(i int, p Plan) (storage.Export, error) {
	rng := rand.New(rand.NewPCG(uint64(i), uint64(p.Checkpoints)))
	end := p.Now.Add(-time.Duration(rng.IntN(30*24)) * time.Hour)
	if p.Old(i) {
		end = p.Now.Add(-OldAge)
	}
	events := Events(rng, p.Checkpoints)
	// A checkpoint every 20 seconds, the last at the session's end.
	at := end.Add(-time.Duration(len(events)) * 20 * time.Second).Truncate(time.Millisecond)
	ex := storage.Export{Session: storage.SessionInfo{
		Title: fmt.Sprintf("bench session %d", i+1), Model: "bench-model", Workspace: p.workspace(),
		Head: len(events), Versions: len(events),
	}}
	b := state.NewBuilder(state.New(""))
	for v, ev := range events {
		at = at.Add(20 * time.Second)
		ev.At = at
		if err := b.Apply(ev); err != nil {
			return storage.Export{}, fmt.Errorf("bench: session %d, version %d (%s): %w", i+1, v+1, ev.Kind, err)
		}
		ex.Checkpoints = append(ex.Checkpoints, storage.Record{
			Checkpoint: storage.Checkpoint{Version: v + 1, Parent: v, Event: ev.Kind, Phase: b.Phase(), At: at},
			Data:       ev,
		})
	}
	ex.Session.Phase = b.Phase()
	ex.Session.CreatedAt, ex.Session.UpdatedAt = ex.Checkpoints[0].At, at
	return ex, nil
}

// Events returns n events a real session could have written: whole
// tasks, each the user's message, a plan, one to three tool calls with
// their results and the answer, and at the end, where a whole task no
// longer fits, short exchanges (a question and its answer) and, for an
// odd one left, a summary. The session always ends at rest.
func Events(rng *rand.Rand, n int) []state.Event {
	var out []state.Event
	calls := 0
	for {
		t := task(rng, &calls, 1+rng.IntN(3))
		if len(out)+len(t) > n {
			break
		}
		out = append(out, t...)
	}
	for len(out)+2 <= n {
		out = append(out,
			state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: Text(rng, 40+rng.IntN(200))}}},
			state.Event{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: Text(rng, 100+rng.IntN(600))}}, Usage: usage(rng)})
	}
	if len(out) < n {
		out = append(out, state.Event{Kind: state.Summarized, Text: "Summary: " + Text(rng, 400), Through: 0})
	}
	return out
}

// task is one task with k tool calls: 3+4k events.
func task(rng *rand.Rand, calls *int, k int) []state.Event {
	evs := []state.Event{
		{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: Text(rng, 80+rng.IntN(500))}}},
		{Kind: state.PlanSet, Goal: Text(rng, 60), Plan: []state.Step{{Text: Text(rng, 40)}, {Text: Text(rng, 50)}, {Text: Text(rng, 30)}}, Usage: usage(rng)},
	}
	for c := range k {
		*calls++
		id := fmt.Sprintf("call_%d", *calls)
		name := []string{"read_file", "list_files", "run_command", "write_file"}[rng.IntN(4)]
		req := state.Message{Role: state.RoleAssistant, Content: Text(rng, rng.IntN(120)), ToolCalls: []state.ToolRequest{{
			ID: id, Name: name, Arguments: fmt.Sprintf(`{"path":"internal/%s/%s.go"}`, word(rng), word(rng)),
		}}}
		kind := state.AssistantMessage // the first call, in executing
		if c > 0 {
			kind = state.Continue // the model's reply to the last results
		}
		evs = append(evs,
			state.Event{Kind: kind, Messages: []state.Message{req}, Usage: usage(rng)},
			state.Event{Kind: state.ToolStarted, Tool: &state.ToolCall{ID: id}},
			state.Event{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: id, Result: Text(rng, 300+rng.IntN(3000)), DurationMS: int64(rng.IntN(2000))}},
			state.Event{Kind: state.ToolsDone})
	}
	return append(evs, state.Event{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: Text(rng, 200+rng.IntN(1200))}}, Usage: usage(rng)})
}

func usage(rng *rand.Rand) state.Usage {
	return state.Usage{PromptTokens: 2000 + rng.IntN(20000), CompletionTokens: 50 + rng.IntN(800)}
}

var vocabulary = strings.Fields(`the build fails because the import path changed when the package
	moved so every caller needs the new name and the test that covers the parser reads a file
	that no longer exists func return err nil if for range go test run make write read`)

func word(rng *rand.Rand) string { return vocabulary[rng.IntN(len(vocabulary))] }

// Text returns n characters of plain words.
func Text(rng *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(word(rng))
	}
	return b.String()[:n]
}
