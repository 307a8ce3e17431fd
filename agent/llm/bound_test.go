package llm_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"retrace/agent/llm"
	"retrace/agent/llmserver"
	"retrace/agent/llmtest"
)

const mib = 1 << 20

// times is n copies of e: one event value, written n times.
func times(n int, e llmserver.Event) llmserver.Event {
	es := make([]llmserver.Event, n)
	for i := range es {
		es[i] = e
	}
	return llmserver.Seq(es...)
}

// readCeiling is the most a reply past the default bound (2 MiB) may make
// the client read: four times the bound for one line, or for the lines of
// no data together, and a piece of a MiB besides.
const readCeiling = 10 * mib

// A reply past what one reply may carry (2 MiB by default: its text, its
// thinking and its calls' arguments together), however it comes, ends the
// request with an error that names the bound and the server: the client
// stops reading where the reply passes the bound, and keeps no more than
// the reply's first 64 KiB as its partial text. A server sending 24 MiB
// made the client read and keep all of it.
func TestAReplyPastTheBoundEndsTheRequest(t *testing.T) {
	piece := strings.Repeat("x", mib)
	args := `{"path":"big.go","content":"` + strings.Repeat("y", mib-40) + `"}`
	for _, tc := range []struct {
		name  string
		reply llmserver.Response
		what  string // what the message names as the part past the bound
	}{
		{"text in pieces of a MiB", llmserver.Stream(c.Role(), times(24, c.Text(piece)), c.Finish("stop"), llmserver.Done()), "text"},
		{"thinking", llmserver.Stream(c.Role(), times(24, c.Reasoning(piece)), c.Text("ok"), c.Finish("stop"), llmserver.Done()), "thinking"},
		{"one call's arguments", llmserver.Stream(c.RoleToolStart(0, "call_w", "write_file"), times(24, c.ToolArgs(0, piece)),
			c.Finish("tool_calls"), llmserver.Done()), "write_file"},
		{"calls each under the bound", llmserver.Stream(c.Role(), manyWholeCalls(24, args), c.Finish("tool_calls"), llmserver.Done()), "write_file"},
		{"one line of 24 MiB", llmserver.Stream(c.Role(), c.Text(strings.Repeat(piece, 24)), c.Finish("stop"), llmserver.Done()), "line"},
		{"comments", llmserver.Stream(times(24, llmserver.Comment(piece)), c.Role(), c.Text("hi"), c.Finish("stop"), llmserver.Done()), "no data"},
		{"one JSON completion", llmserver.TextCompletion(strings.Repeat(piece, 24)), "JSON reply"},
		{"an error's body", llmserver.Status(500, strings.Repeat(piece, 24)), "line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m llmtest.Meter
			h := newHarness(t, func(cfg *llm.Config) { cfg.HTTPClient = &m })
			h.srv.Enqueue(tc.reply)
			turn, err := h.stream(t, true)
			if err == nil {
				t.Fatalf("a reply of %d MiB was taken (%d bytes of text, %d calls)", 24, len(turn.Content), len(turn.Calls))
			}
			var e *llm.Error
			msg := err.Error()
			if !errors.As(err, &e) || !strings.Contains(msg, "2 MiB") || !strings.Contains(msg, h.srv.URL()) ||
				!strings.Contains(msg, tc.what) || !strings.Contains(msg, "max_reply_mib") {
				t.Fatalf("error %q: want an *llm.Error naming the 2 MiB bound, %s, %q and max_reply_mib", msg, h.srv.URL(), tc.what)
			}
			if n := m.Read(); n > readCeiling {
				t.Errorf("read %.1f MiB of the response, past %d MiB", float64(n)/mib, readCeiling/mib)
			}
			if n := len(e.Partial.Content) + len(e.Partial.Reasoning); n > 64<<10 {
				t.Errorf("kept %d bytes of the reply, past 64 KiB", n)
			}
			if len(h.srv.Requests()) != 1 || len(h.retry) != 0 {
				t.Errorf("%d requests, retries %v: a reply past the bound is not asked for again", len(h.srv.Requests()), h.retry)
			}
		})
	}
}

func manyWholeCalls(n int, args string) llmserver.Event {
	es := make([]llmserver.Event, n)
	for i := range es {
		es[i] = c.ToolWhole(i, fmt.Sprintf("call_%d", i), "write_file", args)
	}
	return llmserver.Seq(es...)
}

// A reply of more tool calls than one reply may make (128) ends the
// request, read no further than the first call past the cap: none of
// them is returned to run. 200 calls were all returned.
func TestAReplyOfTooManyCallsEndsTheRequest(t *testing.T) {
	for _, dialect := range []llmserver.Dialect{llmserver.OpenAI, llmserver.Ollama} {
		t.Run(dialect.String(), func(t *testing.T) {
			h := newHarness(t)
			cc := llmserver.Chunker{Dialect: dialect}
			es := make([]llmserver.Event, 200)
			for i := range es {
				es[i] = cc.ToolWhole(i, fmt.Sprintf("call_%d", i), "read_file", `{"path":"a.go"}`)
			}
			h.srv.Enqueue(llmserver.Stream(append(es, cc.Finish("tool_calls"), llmserver.Done())...))
			turn, err := h.stream(t, true)
			if err == nil {
				t.Fatalf("a reply of %d calls was taken", len(turn.Calls))
			}
			if msg := err.Error(); !strings.Contains(msg, "128 tool calls") || !strings.Contains(msg, h.srv.URL()) {
				t.Fatalf("error %q: want the cap of 128 calls and the server named", msg)
			}
		})
	}
}

// The bound is exact: a reply of exactly MaxReply bytes of text and
// arguments is taken, one byte more is not; MaxCalls calls are taken,
// one more are not.
func TestTheBoundsOfAReplyAreExact(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []llmserver.Event
		ok     bool
	}{
		{"text at the bound", []llmserver.Event{c.Role(), c.Text(strings.Repeat("a", 600)), c.Text(strings.Repeat("b", 400)), c.Finish("stop")}, true},
		{"text past it", []llmserver.Event{c.Role(), c.Text(strings.Repeat("a", 600)), c.Text(strings.Repeat("b", 401)), c.Finish("stop")}, false},
		{"thinking and text at the bound", []llmserver.Event{c.Role(), c.Reasoning(strings.Repeat("r", 500)), c.Text(strings.Repeat("a", 500)), c.Finish("stop")}, true},
		{"thinking and text past it", []llmserver.Event{c.Role(), c.ReasoningField(strings.Repeat("r", 501)), c.Text(strings.Repeat("a", 500)), c.Finish("stop")}, false},
		// 6 bytes of id, 9 of name, 985 of arguments.
		{"a call at the bound", []llmserver.Event{c.RoleToolStart(0, "call_1", "read_file"), c.ToolArgs(0, `{"p":"`+strings.Repeat("x", 977)+`"}`), c.Finish("tool_calls")}, true},
		{"a call past it", []llmserver.Event{c.RoleToolStart(0, "call_1", "read_file"), c.ToolArgs(0, `{"p":"`+strings.Repeat("x", 978)+`"}`), c.Finish("tool_calls")}, false},
		{"three calls", []llmserver.Event{c.Role(), manyWholeCalls(3, `{}`), c.Finish("tool_calls")}, true},
		{"four calls", []llmserver.Event{c.Role(), manyWholeCalls(4, `{}`), c.Finish("tool_calls")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(cfg *llm.Config) { cfg.MaxReply, cfg.MaxCalls = 1000, 3 })
			h.srv.Enqueue(llmserver.Stream(append(tc.events, llmserver.Done())...))
			_, err := h.stream(t, true)
			if tc.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tc.ok {
				if e := wantKind(t, err, llm.KindTooLarge); !strings.Contains(e.Error(), "1000 bytes") && !strings.Contains(e.Error(), "3 tool calls") {
					t.Fatalf("error %q names neither bound", e)
				}
			}
		})
	}
}

// What real servers send within the default bound is taken: a write_file
// of 1.5 MiB in small pieces with the id and name repeated in every
// fragment (which count once), the same call whole in one line with its
// arguments escaped, a whole JSON completion, and ten thousand keep-alive
// comments while the provider queues.
func TestLargeRepliesWithinTheBound(t *testing.T) {
	content := strings.Repeat("func f() {\n\treturn \"x\"\n}\n", 1536<<10/26)
	args := `{"path":"big.go","content":` + quoteJSON(content) + `}`
	repeated := []llmserver.Event{c.Role()}
	for i := 0; i < len(args); i += 4096 {
		piece := args[i:min(i+4096, len(args))]
		repeated = append(repeated, c.Delta(`{"tool_calls":[{"index":0,"id":"call_w","type":"function","function":{"name":"write_file","arguments":`+quoteJSON(piece)+`}}]}`))
	}
	for _, tc := range []struct {
		name  string
		reply llmserver.Response
	}{
		{"pieces", llmserver.Stream(append(repeated, c.Finish("tool_calls"), llmserver.Done())...)},
		{"one line", llmserver.Stream(c.Role(), c.ToolWhole(0, "call_w", "write_file", args), c.Finish("tool_calls"), llmserver.Done())},
		{"a completion", llmserver.ToolCallCompletion([]llmserver.Call{{ID: "call_w", Name: "write_file", Args: args}})},
		{"keep-alives", llmserver.Stream(llmserver.KeepAlive(10000, "OPENROUTER PROCESSING"), c.Role(), c.ToolWhole(0, "call_w", "write_file", args), c.Finish("tool_calls"), llmserver.Done())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.srv.Enqueue(tc.reply)
			turn, err := h.stream(t, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(turn.Calls) != 1 || turn.Calls[0].Arguments != args || turn.Calls[0].ArgsError != "" {
				t.Fatalf("%d calls", len(turn.Calls))
			}
		})
	}
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// A stream of chunks that add nothing to the reply (empty deltas, a role
// alone, each a valid event) ends the request once they pass what the
// lines of no data may take: it sent data all along, so the idle timeout
// never fired, and it read on for ever.
func TestAStreamOfEmptyChunksEndsTheRequest(t *testing.T) {
	var m llmtest.Meter
	h := newHarness(t, func(cfg *llm.Config) { cfg.HTTPClient = &m })
	h.srv.Enqueue(llmserver.Stream(times(400_000, c.Role()), c.Text("never"), c.Finish("stop"), llmserver.Done()))
	turn, err := h.stream(t, true)
	if err == nil {
		t.Fatalf("the stream was taken: %q", turn.Content)
	}
	if msg := err.Error(); !strings.Contains(msg, "add nothing to the reply") || !strings.Contains(msg, h.srv.URL()) {
		t.Fatalf("error %q: want the chunks that add nothing and the server named", msg)
	}
	if n := m.Read(); n > readCeiling {
		t.Errorf("read %.1f MiB of the response, past %d MiB", float64(n)/mib, readCeiling/mib)
	}
	// A few such chunks are how servers open and close a stream.
	h.srv.Enqueue(llmserver.Stream(times(1_000, c.Role()), c.Text("fine"), c.Finish("stop"), llmserver.Done()))
	if turn, err := h.stream(t, true); err != nil || turn.Content != "fine" {
		t.Fatalf("a thousand role chunks, then text: %q, %v", turn.Content, err)
	}
}
