package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"retrace/agent/llm"
	"retrace/state"
)

// keptTurns are never summarised: the model always sees the latest turns
// as they were.
const keptTurns = 6

// budget is the share of the context window a request may fill before the
// older turns are summarised.
const budget = 0.8

// call makes the model call of the current phase: it checks the iteration
// limit, keeps the request within the context window, streams to the
// observer, and after a context overflow summarises and tries once more.
func (a *Agent) call(ctx context.Context, instructions string, specs []llm.Tool) (llm.Turn, error) {
	s := a.cp.State()
	if s.SummaryThrough < s.HistoryFrom {
		// A window never starts after the summary's end (storage.Store's
		// Recent): this would send the model a conversation with a hole.
		return llm.Turn{}, fmt.Errorf("the state holds messages from %d on, but the summary ends at %d: load the session again", s.HistoryFrom, s.SummaryThrough)
	}
	if s.Iteration >= a.opts.MaxIterations {
		return llm.Turn{}, &TaskError{Message: fmt.Sprintf(
			"stopped after %d model replies without finishing (the iteration limit); raise --max-iterations or split the task", s.Iteration)}
	}
	if a.tokensFor(instructions) > int(budget*float64(a.window)) {
		if _, err := a.summarize(ctx); err != nil {
			return llm.Turn{}, err
		}
	}
	turn, err := a.stream(ctx, instructions, specs)
	var le *llm.Error
	if errors.As(err, &le) && le.Kind == llm.KindContextOverflow {
		done, serr := a.summarize(ctx)
		if serr != nil {
			return llm.Turn{}, serr
		}
		if !done {
			return llm.Turn{}, fmt.Errorf("%w; the last %d turns alone are too long for this model, so there is nothing left to summarise", err, keptTurns)
		}
		turn, err = a.stream(ctx, instructions, specs)
	}
	if err != nil {
		return llm.Turn{}, err
	}
	for _, n := range turn.Notes {
		a.obs.Notice(n)
	}
	return turn, nil
}

func (a *Agent) stream(ctx context.Context, instructions string, specs []llm.Tool) (llm.Turn, error) {
	s := a.cp.State()
	phase := s.Phase
	req := llm.Request{
		Messages:  llm.Messages(systemText(s, instructions), requestHistory(s)),
		Tools:     specs,
		RestartOK: a.opts.RestartOK,
	}
	return a.model.Stream(ctx, req, llm.Observer{
		Delta: func(kind llm.DeltaKind, text string) { a.obs.Delta(phase, kind, text) },
		Retry: a.obs.Retry,
	})
}

// requestHistory is the history a request carries: what the summary does
// not cover, with the model's turns alternating with what it answers, and
// ending with a user or tool message. Strict servers (Mistral, those
// compatible with Anthropic's API) refuse anything else. Histories this
// loop makes are like that already; those kept by earlier versions can
// have a step's report right before the next reply, which are joined.
func requestHistory(s state.State) []state.Message {
	h := s.Since(s.SummaryThrough)
	var out []state.Message
	for i, m := range h {
		if i > 0 && m.Role == state.RoleAssistant && h[i-1].Role == state.RoleAssistant {
			if out == nil {
				out = slices.Clone(h[:i])
			}
			prev := &out[len(out)-1]
			prev.Content = strings.TrimSpace(prev.Content + "\n\n" + m.Content)
			prev.ToolCalls = m.ToolCalls // an earlier message with calls would be answered before this one
			continue
		}
		if out != nil {
			out = append(out, m)
		}
	}
	if out == nil {
		out = h
	}
	if len(out) > 0 && out[len(out)-1].Role == state.RoleAssistant {
		out = append(slices.Clip(out), state.Message{Role: state.RoleUser, Content: goOn})
	}
	return out
}

// tokensFor estimates the size of the next request as tokens counts a
// request: its system message (the session's prompt, the summary, the
// working memory and the instructions), the history after the summary,
// and the reply's primer. The history's own system message is sent only
// inside the system text, so it is counted there and nowhere else.
func (a *Agent) tokensFor(instructions string) int {
	s := a.cp.State()
	a.countHistory(s)
	n := a.count.Messages([]state.Message{{Role: state.RoleSystem, Content: systemText(s, instructions)}})
	for _, c := range a.counts[s.SummaryThrough-s.HistoryFrom:] {
		n += c
	}
	return n
}

// countHistory fills the token counts of s's messages that are not
// counted yet. The history's system message counts 0: it is sent inside
// the system text.
func (a *Agent) countHistory(s state.State) {
	for len(a.counts) < len(s.History) {
		m, n := s.History[len(a.counts)], 0
		if m.Role != state.RoleSystem {
			n = a.count.Message(m)
		}
		a.counts = append(a.counts, n)
	}
}

// toolSpecs are the tools offered to the model.
func (a *Agent) toolSpecs() []llm.Tool {
	defs := a.tools.Defs()
	out := make([]llm.Tool, len(defs))
	for i, d := range defs {
		out[i] = llm.Tool{Name: d.Name, Description: d.Description, Parameters: d.Parameters}
	}
	return out
}

// ErrNothingToSummarise is returned by Compact when every turn is still
// among the ones always kept.
var ErrNothingToSummarise = errors.New("nothing to summarise yet: the last six turns are always kept whole")

// Compact summarises the older turns now (the /compact command), between
// tasks.
func (a *Agent) Compact(ctx context.Context) error {
	s := a.cp.State()
	if s.Phase.Active() { // awaiting approval included
		return fmt.Errorf("%w (phase %s)", ErrBusy, s.Phase)
	}
	done, err := a.summarize(ctx)
	if err == nil && !done {
		return ErrNothingToSummarise
	}
	return err
}
