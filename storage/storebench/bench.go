// Package storebench measures a store on the workload of a long chat: N
// turns of a user message and an assistant reply of about 300 characters
// each, every event a committed checkpoint. It is what `retrace bench`
// runs, and the same workload the LangGraph measurements in our notes used,
// so the figures compare.
package storebench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"retrace/state"
	"retrace/storage"
)

// Result is one run's figures. Times are milliseconds.
type Result struct {
	// Session is the chat's id; the file also holds the measured task's
	// session.
	Session           string  `json:"-"`
	Turns             int     `json:"turns"`
	Checkpoints       int     `json:"checkpoints"`
	TotalMS           float64 `json:"total_ms"`
	First100MSPerTurn float64 `json:"first100_ms_per_turn"`
	Last100MSPerTurn  float64 `json:"last100_ms_per_turn"`
	DBBytes           int64   `json:"db_bytes"`
	TextBytes         int64   `json:"text_bytes"` // the message text written, for scale
	// One checkpoint's commit, the median and the 99th percentile of all.
	CheckpointP50MS float64 `json:"checkpoint_p50_ms"`
	CheckpointP99MS float64 `json:"checkpoint_p99_ms"`
	// LoadRecentMS is what resuming loads: the head's recent part
	// (storage.Latest keeping storage.KeepRecent messages), from a store
	// opened afresh. LoadLatestMS is the whole head, every message.
	LoadRecentMS float64 `json:"load_recent_ms"`
	LoadLatestMS float64 `json:"load_latest_ms"`
	LoadEarlyMS  float64 `json:"load_early_ms"`
	HistoryMS    float64 `json:"history_ms"`
}

// File is the name of the file Run writes in its directory.
const File = "bench.db"

// Opener opens (creating) a store at a path.
type Opener func(path string) (storage.Store, error)

// MessageLen is the length of each message, in characters.
const MessageLen = 300

// Options shape the chat Run writes.
type Options struct {
	// Unsummarised leaves every turn out of the summary: a session begun
	// with a model of a larger window than the one it goes on with.
	Unsummarised bool
	// Progress, if not nil, is called after each turn.
	Progress func(turn int)
}

// Run writes turns chat turns into a fresh store in dir, then measures
// reading it back from a freshly opened store.
func Run(ctx context.Context, dir string, turns int, open Opener, opts Options) (Result, error) {
	if turns < 1 {
		return Result{}, fmt.Errorf("turns must be at least 1, got %d", turns)
	}
	path := filepath.Join(dir, File)
	st, err := open(path)
	if err != nil {
		return Result{}, err
	}
	info, err := st.Create(ctx, storage.NewSession{Title: "bench", Model: "none"})
	if err != nil {
		st.Close()
		return Result{}, err
	}

	r := Result{Turns: turns, Session: info.ID}
	rng := rand.New(rand.NewPCG(uint64(turns), 1))
	perTurn := make([]time.Duration, turns)
	perCheckpoint := make([]time.Duration, 0, 2*turns)
	cur := storage.NewCursor(st, state.New(info.ID))
	start := time.Now()
	pending := 0 // characters the summary does not cover
	for i := range turns {
		events := turn(rng)
		if pending > summaryChars && !opts.Unsummarised {
			var fold state.Event
			fold, pending = summary(cur.State(), rng)
			events = append([]state.Event{fold}, events...)
		}
		t0 := time.Now()
		for _, ev := range events {
			c0 := time.Now()
			if _, err := cur.Commit(ctx, ev); err != nil {
				st.Close()
				return Result{}, fmt.Errorf("turn %d: %w", i+1, err)
			}
			perCheckpoint = append(perCheckpoint, time.Since(c0))
			r.Checkpoints++
			if len(ev.Messages) > 0 {
				r.TextBytes += int64(len(ev.Messages[0].Content))
				pending += len(ev.Messages[0].Content)
			}
		}
		perTurn[i] = time.Since(t0)
		if opts.Progress != nil {
			opts.Progress(i + 1)
		}
	}
	r.TotalMS = ms(time.Since(start))
	window := min(100, turns)
	r.First100MSPerTurn = mean(perTurn[:window])
	r.Last100MSPerTurn = mean(perTurn[turns-window:])
	slices.Sort(perCheckpoint)
	r.CheckpointP50MS, r.CheckpointP99MS = ms(percentile(perCheckpoint, 50)), ms(percentile(perCheckpoint, 99))
	if r.DBBytes, err = size(ctx, st, path); err != nil {
		st.Close()
		return Result{}, err
	}
	if err := st.Close(); err != nil {
		return Result{}, err
	}

	// Reads come from a store opened afresh, as after a restart: one for
	// resuming, and one more for the rest, so that each reads a session
	// no earlier read of its store walked.
	fresh, err := open(path)
	if err != nil {
		return Result{}, err
	}
	if r.LoadRecentMS, err = timed(func() error { _, err := storage.Latest(ctx, fresh, info.ID, storage.KeepRecent); return err }); err != nil {
		fresh.Close()
		return Result{}, err
	}
	if err := fresh.Close(); err != nil {
		return Result{}, err
	}
	if fresh, err = open(path); err != nil {
		return Result{}, err
	}
	defer fresh.Close()
	if r.LoadLatestMS, err = timed(func() error { _, err := fresh.Head(ctx, info.ID); return err }); err != nil {
		return Result{}, err
	}
	if r.LoadEarlyMS, err = timed(func() error { _, err := fresh.At(ctx, info.ID, min(2, r.Checkpoints)); return err }); err != nil {
		return Result{}, err
	}
	if r.HistoryMS, err = timed(func() error { _, err := fresh.Tree(ctx, info.ID); return err }); err != nil {
		return Result{}, err
	}
	if err := fresh.Close(); err != nil {
		return Result{}, err
	}
	return r, nil
}

// size is the bytes st takes: what a store that knows says (a database
// on a server: its tables), else the file at path.
func size(ctx context.Context, st storage.Store, path string) (int64, error) {
	if s, ok := st.(interface {
		Size(context.Context) (int64, error)
	}); ok {
		return s.Size(ctx)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// percentile is the p-th percentile of sorted durations (nearest rank):
// the smallest that p percent of them do not exceed.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 × n), from 1
	return sorted[max(rank, 1)-1]
}

// The chat is summarised as the agent summarises a session talking to a
// model with a window of WindowTokens: when the text the summary does not
// cover passes 80% of the window (at 4 characters a token), the turns but
// the last six are folded into a summary. A chat that never was would
// not fit any model's window.
const (
	WindowTokens  = 128_000
	summaryChars  = WindowTokens * 4 * 8 / 10
	keptTurns     = 6
	SummaryLength = 2000
)

// summary is the summarized event that folds all but the last turns of
// s, and the characters it leaves uncovered.
func summary(s state.State, rng *rand.Rand) (state.Event, int) {
	through := s.HistoryLen() - 2*keptTurns // every turn is a question and an answer
	left := 0
	for _, m := range s.Since(through) {
		left += len(m.Content)
	}
	return state.Event{Kind: state.Summarized, Text: Text(rng, SummaryLength), Through: through}, left
}

// turn is one chat turn: the user's message, then the answer.
func turn(rng *rand.Rand) []state.Event {
	return []state.Event{
		{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: Text(rng, MessageLen)}}},
		{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: Text(rng, MessageLen)}}},
	}
}

var vocabulary = strings.Fields(`the store writes one record per checkpoint and never the whole
	state again so a session of ten thousand messages costs what the first did while
	reading back replays only the path from the root to the version asked for`)

// Text returns n characters of plain words, different every call.
func Text(rng *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vocabulary[rng.IntN(len(vocabulary))])
	}
	return b.String()[:n]
}

func timed(fn func() error) (float64, error) {
	t0 := time.Now()
	err := fn()
	return ms(time.Since(t0)), err
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func mean(ds []time.Duration) float64 {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return ms(sum / time.Duration(len(ds)))
}
