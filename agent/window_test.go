package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"retrace/agent"
	"retrace/agent/llm"
	"retrace/agent/llmserver"
	"retrace/agent/llmtest"
	"retrace/agent/tokens"
	"retrace/agent/tools"
	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
	"retrace/storage/storebench"
)

// windowModel is a model with a context window, as a server plays it: a
// request whose messages count more tokens than the window (agent/tokens'
// count of the body's messages, the rule OpenAI's cookbook gives) is
// refused with the error OpenAI sends, context_length_exceeded. Any other
// request is answered: the summariser's with "SUMMARY k" for its k-th
// request, a task's with "answer".
type windowModel struct {
	window int
	count  *tokens.Counter

	mu       sync.Mutex
	requests int
	largest  int      // the most tokens in one request
	bytes    int      // the longest request body, in bytes
	refused  []string // why each refused request was refused
	folds    []string // the summariser's transcripts, in order
}

func newWindowModel(model string, window int) *windowModel {
	return &windowModel{window: window, count: tokens.NewCounter(model)}
}

// summariserPrompt starts the summariser's system message, and no other.
const summariserPrompt = "You keep a running summary"

func (w *windowModel) handle(req llmserver.Request) llmserver.Response {
	n := w.tokens(req)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.requests++
	w.largest, w.bytes = max(w.largest, n), max(w.bytes, len(req.Raw))
	if n > w.window {
		msg := fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", w.window, n)
		w.refused = append(w.refused, fmt.Sprintf("request %d: %d tokens, %d bytes", w.requests, n, len(req.Raw)))
		return llmserver.Status(400, llmserver.ErrorBody(msg, "invalid_request_error", "messages", "context_length_exceeded"))
	}
	if len(req.Messages) == 2 && strings.HasPrefix(req.Messages[0].Content, summariserPrompt) {
		w.folds = append(w.folds, req.Messages[1].Content)
		return llmserver.TextReply(fmt.Sprintf("SUMMARY %d", len(w.folds)), llmserver.WithPieceSize(1000))
	}
	return llmserver.TextReply("answer", llmserver.WithPieceSize(1000))
}

// tokens counts a request's messages as agent/tokens counts a request.
func (w *windowModel) tokens(req llmserver.Request) int {
	ms := make([]state.Message, len(req.Messages))
	for i, m := range req.Messages {
		ms[i] = state.Message{Role: m.Role, Content: m.Content, Name: m.Name}
		for _, c := range m.ToolCalls {
			ms[i].ToolCalls = append(ms[i].ToolCalls, state.ToolRequest{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
	}
	return w.count.Messages(ms)
}

// longSession is what `retrace bench --turns n` leaves, never summarised
// (as with a model of a window larger than any here): one session of n
// turns, a user message and an answer of 300 characters each, every one
// its own checkpoint.
type longSession struct {
	store *boltstore.Store
	path  string
	id    string
}

func newLongSession(tb testing.TB, turns int) longSession {
	tb.Helper()
	ctx := context.Background()
	dir := tb.TempDir()
	open := func(path string) (storage.Store, error) { return boltstore.Open(path, boltstore.Options{}) }
	r, err := storebench.Run(ctx, dir, turns, open, storebench.Options{Unsummarised: true})
	if err != nil {
		tb.Fatal(err)
	}
	ls := longSession{path: filepath.Join(dir, storebench.File)}
	st, err := boltstore.Open(ls.path, boltstore.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	ls.store, ls.id = st, r.Session
	return ls
}

// folding records what the agent tells its observer: the summaries as
// they were kept, and the notices.
type folding struct {
	mu       sync.Mutex
	through  []int // SummaryThrough after each summarized checkpoint
	last     int
	notices  []string
	versions int
}

func (f *folding) State(s state.State) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.versions++
	if s.SummaryThrough != f.last {
		f.through, f.last = append(f.through, s.SummaryThrough), s.SummaryThrough
	}
}
func (f *folding) Delta(state.Phase, llm.DeltaKind, string) {}
func (f *folding) Retry(llm.Retry)                          {}
func (f *folding) Working(text string)                      { f.Notice(text) }
func (f *folding) Notice(text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notices = append(f.notices, text)
}

// continued is what continuing a long session came to.
type continued struct {
	final    state.State
	model    *windowModel
	obs      *folding
	requests int
}

// continueLongSession sends one more message to a session of the given
// number of turns, against a server with the given window, and checks
// that the task ends done with every request within the window, and the
// turns before the last six each folded into the summary exactly once,
// whole and in order, by a chain of summariser requests each made from
// the summary before it.
func continueLongSession(tb testing.TB, turns, window int) continued {
	tb.Helper()
	ctx := context.Background()
	ls := newLongSession(tb, turns)
	head, err := ls.store.Head(ctx, ls.id)
	if err != nil {
		tb.Fatal(err)
	}
	srv := llmtest.NewServer(tb)
	wm := newWindowModel("none", window)
	srv.SetHandler(wm.handle)
	ws, err := tools.NewWorkspace(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	obs := &folding{}
	model := llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "sk-test", Model: "none"})
	ag := agent.New(storage.NewCursor(ls.store, head), model, tools.New(ws, tools.Options{}), &approver{}, obs,
		agent.Options{ContextWindow: window, Workspace: "/home/dev/project"})

	s, err := ag.Send(ctx, "what did we talk about?")
	wm.mu.Lock()
	defer wm.mu.Unlock()
	if len(wm.refused) > 0 {
		tb.Fatalf("the server refused %d of %d requests as over its window of %d tokens: %s", len(wm.refused), wm.requests, window, strings.Join(wm.refused, "; "))
	}
	if err != nil || s.Phase != state.Done || s.FinalAnswer != "answer" {
		tb.Fatalf("phase %s, answer %q: %v", s.Phase, s.FinalAnswer, err)
	}
	if v := srv.Violations(); len(v) != 0 {
		tb.Fatalf("requests a strict server would reject: %v", v)
	}

	// The history: turns of (user, assistant), the new question and its
	// answer. The last six turns are kept; the others are folded.
	if len(s.History) != 2*turns+2 {
		tb.Fatalf("history of %d messages, want %d", len(s.History), 2*turns+2)
	}
	cut := 2 * (turns + 1 - 6)
	folds := len(wm.folds)
	if folds == 0 || s.SummaryThrough != cut || s.Summary != fmt.Sprintf("SUMMARY %d", folds) {
		tb.Fatalf("summary %q through %d after %d summariser requests; want the last one's, through %d", s.Summary, s.SummaryThrough, folds, cut)
	}
	// One summarized checkpoint per fold, each ending where a turn starts.
	if len(obs.through) != folds || obs.through[folds-1] != cut {
		tb.Fatalf("%d summarized checkpoints through %v for %d folds", len(obs.through), obs.through, folds)
	}
	var folded strings.Builder
	for k, text := range wm.folds {
		prev := ""
		if k > 0 {
			prev = fmt.Sprintf("Previous summary:\nSUMMARY %d\n\n", k)
		}
		rest, ok := strings.CutPrefix(text, prev+"Turns to fold in:\n")
		if !ok {
			tb.Fatalf("fold %d does not start from the summary before it: %.200q", k+1, text)
		}
		folded.WriteString(rest)
	}
	var want strings.Builder
	for _, m := range s.History[:cut] {
		fmt.Fprintf(&want, "\n%s: %s\n", m.Role, m.Content)
	}
	if folded.String() != want.String() {
		tb.Fatalf("the folds hold %d characters, the old turns %d: not every old message once, whole and in order", folded.Len(), want.Len())
	}
	if err := ls.store.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := boltstore.Verify(ctx, ls.path); err != nil {
		tb.Fatal(err)
	}
	return continued{final: s, model: wm, obs: obs, requests: wm.requests}
}

// A session of a thousand turns (2,000 checkpoints, 2,000 messages of
// 300 characters, about 130,000 tokens) continues against a server with
// a window of 32,768 tokens: the old turns are folded into the summary
// in several requests, none over the window.
func TestLongSessionContinuesWithinTheWindow(t *testing.T) {
	c := continueLongSession(t, 1000, 32768)
	if n := len(c.model.folds); n < 2 {
		t.Fatalf("%d summariser requests; a session this long needs several", n)
	}
	t.Logf("%d requests (%d summariser's), the largest %d tokens, %d bytes", c.requests, len(c.model.folds), c.model.largest, c.model.bytes)
}

// BenchmarkContinueLongSession continues the session `retrace bench
// --turns 10000` leaves (20,000 checkpoints) against a server with a
// window of 32,768 tokens, and fails unless every request was within it.
// It takes about ten seconds, most of it writing the session, so it is a
// benchmark .ci/run runs once rather than a test:
//
//	go test ./agent -run '^$' -bench ContinueLongSession -benchtime 1x
func BenchmarkContinueLongSession(b *testing.B) {
	turns := 10000
	if s := os.Getenv("RETRACE_LONG_TURNS"); s != "" {
		if _, err := fmt.Sscan(s, &turns); err != nil {
			b.Fatalf("RETRACE_LONG_TURNS=%q: %v", s, err)
		}
	}
	for b.Loop() {
		c := continueLongSession(b, turns, 32768)
		b.ReportMetric(float64(len(c.model.folds)), "summariser-requests")
		b.ReportMetric(float64(c.model.largest), "largest-request-tokens")
		b.ReportMetric(float64(c.model.bytes), "largest-request-bytes")
	}
}

// An agent given the recent part of a long session (storage.Store's
// Recent, as a resumed session is loaded) sends the model exactly what
// it sends when given the whole, and keeps the same checkpoints: the
// summary, the messages after it and the latest turns are all it reads.
func TestAgentGoesOnFromTheRecentPart(t *testing.T) {
	ctx := context.Background()
	const window = 3000
	ws, err := tools.NewWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	run := func(path string, from state.State, text string) (state.State, []string) {
		t.Helper()
		st, err := boltstore.Open(path, boltstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		srv := llmtest.NewServer(t)
		wm := newWindowModel("none", window)
		var mu sync.Mutex
		var bodies []string
		srv.SetHandler(func(req llmserver.Request) llmserver.Response {
			mu.Lock()
			bodies = append(bodies, string(req.Raw))
			mu.Unlock()
			return wm.handle(req)
		})
		model := llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "sk-test", Model: "none"})
		ag := agent.New(storage.NewCursor(st, from), model, tools.New(ws, tools.Options{}), &approver{}, &folding{},
			agent.Options{ContextWindow: window, Workspace: "/home/dev/project"})
		s, err := ag.Send(ctx, text)
		if err != nil || s.Phase != state.Done {
			t.Fatalf("%s: phase %s: %v", text, s.Phase, err)
		}
		mu.Lock()
		defer mu.Unlock()
		return s, bodies
	}
	// A session the agent started (so it has a system prompt), then a
	// long chat, and a message that folds the older turns into a summary.
	path := filepath.Join(t.TempDir(), "retrace.db")
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Create(ctx, storage.NewSession{Title: "long"})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	hello, _ := run(path, state.New(info.ID), "hello")
	st, err = boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cur := storage.NewCursor(st, hello)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 80 {
		for _, ev := range []state.Event{
			{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: storebench.Text(rng, storebench.MessageLen)}}},
			{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: storebench.Text(rng, storebench.MessageLen)}}},
		} {
			if _, err := cur.Commit(ctx, ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	head := cur.State()
	st.Close()
	ls := longSession{path: path, id: info.ID}
	first, _ := run(ls.path, head, "sum it up")
	if first.SystemPrompt() == "" {
		t.Fatal("the session has no system prompt")
	}
	if first.SummaryThrough == 0 {
		t.Fatal("no summary was made")
	}
	for _, keep := range []int{0, 3} {
		wholeFile, recentFile := copyOf(t, ls.path), copyOf(t, ls.path)
		st, err := boltstore.Open(recentFile, boltstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		recent, err := st.Recent(ctx, ls.id, first.Version, keep)
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		if recent.HistoryFrom == 0 {
			t.Fatalf("keeping %d: the recent part holds every message", keep)
		}
		// The second message goes past the window again: the agent
		// summarises from the recent part too.
		wantEnd, wantBodies := run(wholeFile, first, strings.Repeat("and now? ", 300))
		gotEnd, gotBodies := run(recentFile, recent, strings.Repeat("and now? ", 300))
		if len(gotBodies) != len(wantBodies) || len(wantBodies) < 2 {
			t.Fatalf("keeping %d: %d requests from the recent part, %d from the whole", keep, len(gotBodies), len(wantBodies))
		}
		for i := range wantBodies {
			if gotBodies[i] != wantBodies[i] {
				t.Fatalf("keeping %d: request %d differs:\n got %.500s\nwant %.500s", keep, i+1, gotBodies[i], wantBodies[i])
			}
		}
		if wantEnd.SummaryThrough == first.SummaryThrough {
			t.Fatalf("keeping %d: the second message made no new summary", keep)
		}
		want, err := wantEnd.Window(gotEnd.HistoryFrom)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := mustJSON(t, gotEnd), mustJSON(t, want); g != w {
			t.Fatalf("keeping %d: the states differ:\n got %.800s\nwant %.800s", keep, g, w)
		}
	}
}

func copyOf(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(out, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
