package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"retrace/agent/llm"
	"retrace/agent/session"
	"retrace/state"
	"retrace/state/transcript"
)

// progress shows a headless task as it goes: the answer streams to stdout,
// everything else (phases, the plan, tool calls, retries, the model's
// thinking) to stderr. It learns what happened by comparing each
// checkpointed state with the one before. All model text is made inert.
type progress struct {
	stdout, stderr io.Writer
	quiet          bool // --json: stdout is for the final state only
	last           state.State
	midLine        io.Writer // where streamed text stopped without a newline, if anywhere
	streaming      llm.DeltaKind
	answered       bool // some answer text went to stdout
	start          int  // the head's version when the command began
	// settled counts the tool log's first entries, finished and shown:
	// a checkpoint changes none of them, so only those after are read.
	settled int
}

func newProgress(stdout, stderr io.Writer, quiet bool, start state.State) *progress {
	p := &progress{stdout: stdout, stderr: stderr, quiet: quiet, last: start, start: start.Version}
	p.settle(start)
	return p
}

// ran reports whether s is a checkpoint this command wrote: only a task
// it ran may put an answer on stdout, never the one the head already had.
func (p *progress) ran(s state.State) bool { return s.Version != p.start }

// State reports what one checkpoint changed.
func (p *progress) State(s state.State) {
	prev := p.last
	p.last = s
	if s.Phase != prev.Phase {
		p.line("· %s", s.Phase)
	}
	p.planChanges(prev, s)
	p.toolChanges(prev, s)
	for k, v := range s.Memory.Notes {
		if prev.Memory.Notes[k] != v {
			p.line("  note %s: %s", transcript.Inert(k), oneLineClip(v, 100))
		}
	}
	if s.SummaryThrough != prev.SummaryThrough {
		p.line("  summarised the first %d messages to fit the context window", s.SummaryThrough)
	}
	if s.Phase == state.Error && prev.Phase != state.Error {
		p.line("  error: %s", transcript.Inert(s.ErrorMessage))
	}
}

// toolChanges shows what a checkpoint did to the tool log. Entries keep
// their place in it (a call's entry is appended once, then changed), so
// each is compared with the one at its place before; ids would not do,
// as some servers number calls per reply and an id comes back. Only the
// entries past the settled ones are read: what a checkpoint costs here
// does not grow with the calls before it.
func (p *progress) toolChanges(prev, s state.State) {
	log, from := s.Memory.ToolCalls, s.Memory.ToolCallsFrom
	before, beforeFrom := prev.Memory.ToolCalls, prev.Memory.ToolCallsFrom
	for at := max(p.settled, from); at < from+len(log); at++ {
		c := log[at-from]
		var old state.ToolCall
		seen := at >= beforeFrom && at < beforeFrom+len(before)
		if seen {
			old = before[at-beforeFrom]
		}
		name := oneLine(transcript.Inert(c.Name)) // the model names the tool
		switch {
		case c.Approval == state.AwaitingDecision && old.Approval != state.AwaitingDecision:
			p.line("  ? %s %s needs approval", name, oneLineClip(c.Arguments, 100))
		case !c.StartedAt.IsZero() && old.StartedAt.IsZero():
			p.line("  → %s %s", name, oneLineClip(c.Arguments, 100))
		}
		if c.Finished() && (!seen || !old.Finished()) {
			p.finished(name, c)
		}
	}
	p.settle(s)
}

// settle moves settled past the entries of s that are finished.
func (p *progress) settle(s state.State) {
	log, from := s.Memory.ToolCalls, s.Memory.ToolCallsFrom
	p.settled = max(p.settled, from)
	for p.settled < from+len(log) && log[p.settled-from].Finished() {
		p.settled++
	}
}

// finished says how a call ended: ✓, or ✗ with its error, or with the
// exit code of a command that ran and failed.
func (p *progress) finished(name string, c state.ToolCall) {
	switch how := transcript.Failure(c); {
	case c.Error != "":
		p.line("  ✗ %s: %s", name, oneLineClip(c.Error, 160))
	case how != "":
		p.line("  ✗ %s: %s (%d ms)", name, how, c.DurationMS)
	default:
		p.line("  ✓ %s (%d ms)", name, c.DurationMS)
	}
}

// Delta streams text: the answer (planning and reflecting) to stdout, the
// model's working commentary and thinking to stderr.
func (p *progress) Delta(phase state.Phase, kind llm.DeltaKind, text string) {
	w := p.stderr
	if kind == llm.Content && (phase == state.Planning || phase == state.Reflecting) {
		if p.quiet {
			return
		}
		w, p.answered = p.stdout, true
	}
	if p.midLine != w || p.streaming != kind {
		p.endLine()
		if kind == llm.Reasoning {
			fmt.Fprint(w, "thinking: ")
		}
	}
	text = transcript.Inert(text)
	fmt.Fprint(w, text)
	p.streaming = kind
	p.midLine = w
	if strings.HasSuffix(text, "\n") {
		p.midLine = nil
	}
}

// Retry says a call is being retried and why.
func (p *progress) Retry(r llm.Retry) {
	what := "retrying"
	if r.Restart {
		what = "starting the reply over"
	}
	p.line("  %s in %s (attempt %d of %d): %s", what, r.Wait.Round(100*time.Millisecond), r.Attempt, r.Of, transcript.Inert(r.Reason))
}

// Notice passes on something worth knowing.
func (p *progress) Notice(text string) { p.line("  note: %s", transcript.Inert(text)) }

// finish ends the output: the answer's last line, and where to look next.
func (p *progress) finish(s state.State) {
	p.endLine()
	if s.Phase == state.Done && p.ran(s) && !p.answered && !p.quiet && s.FinalAnswer != "" {
		fmt.Fprintln(p.stdout, transcript.Inert(s.FinalAnswer))
	}
	p.line("%s · session %s v%d · %d tokens · retrace show %s", s.Phase, session.Short(s.SessionID), s.Version, s.Usage.Total(), session.Short(s.SessionID))
}

// line writes one progress line to stderr, after ending any streamed line.
func (p *progress) line(format string, args ...any) {
	p.endLine()
	fmt.Fprintf(p.stderr, format+"\n", args...)
}

func (p *progress) endLine() {
	if p.midLine != nil {
		fmt.Fprintln(p.midLine)
		p.midLine = nil
	}
}

// planChanges shows a new plan whole, and then each step as its status
// changes.
func (p *progress) planChanges(prev, s state.State) {
	plan, old := s.Memory.Plan, prev.Memory.Plan
	if stepTexts(plan) != stepTexts(old) {
		for i, st := range plan {
			p.line("  %d. [%s] %s", i+1, st.Status, transcript.Inert(st.Text))
		}
		return
	}
	for i, st := range plan {
		if st.Status != old[i].Status {
			p.line("  step %d/%d %s: %s", i+1, len(plan), st.Status, transcript.Inert(st.Text))
		}
	}
}

func stepTexts(plan []state.Step) string {
	var b strings.Builder
	for _, st := range plan {
		b.WriteString(st.Text + "\n")
	}
	return b.String()
}

func oneLineClip(s string, n int) string { return transcript.Clip(oneLine(transcript.Inert(s)), n) }
