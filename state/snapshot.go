package state

import (
	"fmt"
	"maps"
	"slices"
)

// A snapshot is a state in binary, for a store to keep beside the events
// it follows from: loading a long session starts from the latest one and
// applies only the events after it. It is derived data: a store checks it
// and can always build it again from the events, which stay the truth.
//
// A snapshot is meant for windowed states (see Window): what it costs to
// write is what the state holds, and a whole history in every snapshot
// would make a long session's snapshots cost the square of its length.
// It is written like an event body (see AppendEventBody): tagged fields,
// ascending, zero values left out. The session id and the version are not
// in it: the store knows where it keeps it.

// Tags of a snapshot.
const (
	tagSnapPhase = iota + 1
	tagSnapHistory
	tagSnapHistoryFrom
	tagSnapPrompt
	tagSnapGoal
	tagSnapPlan
	tagSnapNotes
	tagSnapToolCalls
	tagSnapToolCallsFrom
	tagSnapAllowedTools
	tagSnapIteration
	tagSnapFinalAnswer
	tagSnapErrorMessage
	tagSnapUsage
	tagSnapSummary
	tagSnapSummaryThrough
	tagSnapEndpoint
	tagSnapFiles
	tagSnapRestoring
	tagSnapBriefing
	tagSnapArrival
)

// Tags of the structs only a snapshot holds.
const (
	tagNoteKey = iota + 1
	tagNoteValue
)

const tagNameValue = 1 // an element of a list of strings

const (
	tagEntryPath = iota + 1
	tagEntryNow
	tagEntryWas
)

const (
	tagRestoreFrom = iota + 1
	tagRestoreFiles
)

// AppendSnapshot appends the snapshot of s to buf. Maps are written in
// the order of their keys, so a state has one snapshot.
func AppendSnapshot(buf []byte, s State) []byte {
	w := bodyWriter{buf}
	w.int(tagSnapPhase, int64(s.Phase))
	w.list(tagSnapHistory, len(s.History), func(i int, w *bodyWriter) { w.message(s.History[i]) })
	w.int(tagSnapHistoryFrom, int64(s.HistoryFrom))
	w.str(tagSnapPrompt, s.prompt)
	m := s.Memory
	w.str(tagSnapGoal, m.CurrentGoal)
	w.list(tagSnapPlan, len(m.Plan), func(i int, w *bodyWriter) {
		w.str(tagStepText, m.Plan[i].Text)
		w.str(tagStepStatus, string(m.Plan[i].Status))
	})
	notes := slices.Sorted(maps.Keys(m.Notes))
	w.list(tagSnapNotes, len(notes), func(i int, w *bodyWriter) {
		w.str(tagNoteKey, notes[i])
		w.str(tagNoteValue, m.Notes[notes[i]])
	})
	w.list(tagSnapToolCalls, len(m.ToolCalls), func(i int, w *bodyWriter) { w.call(m.ToolCalls[i]) })
	w.int(tagSnapToolCallsFrom, int64(m.ToolCallsFrom))
	w.list(tagSnapAllowedTools, len(m.AllowedTools), func(i int, w *bodyWriter) { w.str(tagNameValue, m.AllowedTools[i]) })
	w.int(tagSnapIteration, int64(s.Iteration))
	w.str(tagSnapFinalAnswer, s.FinalAnswer)
	w.str(tagSnapErrorMessage, s.ErrorMessage)
	if s.Usage != (Usage{}) {
		w.sub(tagSnapUsage, func(w *bodyWriter) {
			w.int(tagUsagePrompt, int64(s.Usage.PromptTokens))
			w.int(tagUsageCompletion, int64(s.Usage.CompletionTokens))
		})
	}
	w.str(tagSnapSummary, s.Summary)
	w.int(tagSnapSummaryThrough, int64(s.SummaryThrough))
	if s.Endpoint != (Endpoint{}) {
		w.sub(tagSnapEndpoint, func(w *bodyWriter) {
			w.str(tagEndpointModel, s.Endpoint.Model)
			w.str(tagEndpointBaseURL, s.Endpoint.BaseURL)
			w.str(tagEndpointKeyEnv, s.Endpoint.KeyEnv)
		})
	}
	paths := slices.Sorted(maps.Keys(s.Files))
	w.list(tagSnapFiles, len(paths), func(i int, w *bodyWriter) {
		e := s.Files[paths[i]]
		w.str(tagEntryPath, paths[i])
		w.image(tagEntryNow, e.Now)
		w.image(tagEntryWas, e.Was)
	})
	if r := s.Restoring; r != nil {
		w.sub(tagSnapRestoring, func(w *bodyWriter) {
			w.int(tagRestoreFrom, int64(r.From))
			w.list(tagRestoreFiles, len(r.Files), func(i int, w *bodyWriter) {
				c := r.Files[i]
				w.str(tagChangePath, c.Path)
				w.image(tagChangeBefore, c.Before)
				w.image(tagChangeAfter, c.After)
			})
		})
	}
	if s.Briefing.Instructions != nil || s.Briefing.Memories != nil {
		w.sub(tagSnapBriefing, func(w *bodyWriter) { w.briefing(s.Briefing) })
	}
	w.int(tagSnapArrival, int64(s.Arrival))
	return w.buf
}

// DecodeSnapshot reads a state from its snapshot. Its session id and
// version are left for the caller to set. A snapshot that is not one
// AppendSnapshot could have written is an error.
func DecodeSnapshot(p []byte) (State, error) {
	var s State
	r := bodyReader{p: p}
	for r.more() {
		switch tag := r.tag(); tag {
		case tagSnapPhase:
			ph := r.int()
			if ph < 0 || ph >= len(phaseNames) {
				r.fail(fmt.Errorf("phase %d out of range", ph))
			}
			s.Phase = Phase(ph)
		case tagSnapHistory:
			s.History = make([]Message, r.count())
			for i := range s.History {
				s.History[i] = r.message()
			}
		case tagSnapHistoryFrom:
			s.HistoryFrom = r.int()
		case tagSnapPrompt:
			s.prompt = r.str()
		case tagSnapGoal:
			s.Memory.CurrentGoal = r.str()
		case tagSnapPlan:
			s.Memory.Plan = make([]Step, r.count())
			for i := range s.Memory.Plan {
				s.Memory.Plan[i] = r.step()
			}
		case tagSnapNotes:
			n := r.count()
			s.Memory.Notes = make(map[string]string, n)
			for i := range n {
				k, v := r.note()
				r.ascending("note", i, k)
				s.Memory.Notes[k] = v
			}
		case tagSnapToolCalls:
			s.Memory.ToolCalls = make([]ToolCall, r.count())
			for i := range s.Memory.ToolCalls {
				s.Memory.ToolCalls[i] = r.call()
			}
		case tagSnapToolCallsFrom:
			s.Memory.ToolCallsFrom = r.int()
		case tagSnapAllowedTools:
			s.Memory.AllowedTools = make([]string, r.count())
			for i := range s.Memory.AllowedTools {
				s.Memory.AllowedTools[i] = r.name()
				r.ascending("allowed tool", i, s.Memory.AllowedTools[i])
			}
		case tagSnapIteration:
			s.Iteration = r.int()
		case tagSnapFinalAnswer:
			s.FinalAnswer = r.str()
		case tagSnapErrorMessage:
			s.ErrorMessage = r.str()
		case tagSnapUsage:
			s.Usage = r.usage()
		case tagSnapSummary:
			s.Summary = r.str()
		case tagSnapSummaryThrough:
			s.SummaryThrough = r.int()
		case tagSnapEndpoint:
			s.Endpoint = r.endpoint()
		case tagSnapFiles:
			n := r.count()
			s.Files = make(map[string]FileEntry, n)
			for i := range n {
				path, e := r.entry()
				r.ascending("file", i, path)
				s.Files[path] = e
			}
		case tagSnapRestoring:
			rs := r.restore()
			s.Restoring = &rs
		case tagSnapBriefing:
			s.Briefing = r.briefing()
		case tagSnapArrival:
			s.Arrival = r.int()
		default:
			r.unknown(tag)
		}
	}
	if r.err != nil {
		return State{}, fmt.Errorf("snapshot: %w", r.err)
	}
	if s.HistoryFrom == 0 {
		s.prompt = "" // a whole history holds its own
	}
	if s.HistoryFrom < 0 || s.SummaryThrough < 0 || s.SummaryThrough > s.HistoryLen() || s.Iteration < 0 || s.Memory.ToolCallsFrom < 0 {
		return State{}, fmt.Errorf("snapshot: positions out of range (%d messages left out, summary through %d of %d, iteration %d, %d calls left out)",
			s.HistoryFrom, s.SummaryThrough, s.HistoryLen(), s.Iteration, s.Memory.ToolCallsFrom)
	}
	s.open = exchangeOf(s)
	return s, nil
}

// ascending fails unless key comes after the key before it (the i-th of
// a list): AppendSnapshot writes notes, files and allowed tools sorted,
// each once, and a decoded state must hold what it wrote.
func (r *bodyReader) ascending(what string, i int, key string) {
	if i > 0 && key <= r.lastKey {
		r.fail(fmt.Errorf("%s %q repeated or out of order", what, key))
	}
	r.lastKey = key
}

func (r *bodyReader) note() (key, value string) {
	in := r.sub()
	for in.more() {
		switch tag := in.tag(); tag {
		case tagNoteKey:
			key = in.str()
		case tagNoteValue:
			value = in.str()
		default:
			in.unknown(tag)
		}
	}
	r.done(&in)
	return key, value
}

func (r *bodyReader) name() string {
	var s string
	in := r.sub()
	for in.more() {
		switch tag := in.tag(); tag {
		case tagNameValue:
			s = in.str()
		default:
			in.unknown(tag)
		}
	}
	r.done(&in)
	return s
}

func (r *bodyReader) entry() (string, FileEntry) {
	var path string
	var e FileEntry
	in := r.sub()
	for in.more() {
		switch tag := in.tag(); tag {
		case tagEntryPath:
			path = in.str()
		case tagEntryNow:
			e.Now = in.image()
		case tagEntryWas:
			e.Was = in.image()
		default:
			in.unknown(tag)
		}
	}
	r.done(&in)
	return path, e
}

func (r *bodyReader) restore() Restore {
	var rs Restore
	in := r.sub()
	for in.more() {
		switch tag := in.tag(); tag {
		case tagRestoreFrom:
			rs.From = in.int()
		case tagRestoreFiles:
			rs.Files = make([]FileChange, in.count())
			for i := range rs.Files {
				rs.Files[i] = in.change()
			}
		default:
			in.unknown(tag)
		}
	}
	r.done(&in)
	return rs
}
