package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"retrace/agent/llmserver"
	"retrace/state"
	"retrace/state/transcript/inerttest"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// The inertness matrix of the command line: every command that prints
// text from the store, the model or the server, fed every class of
// hostile text (inerttest.Classes), run through run() as a shell would.
// Text output must hold nothing a terminal acts on and show each hostile
// field as its stand-ins; JSON output must stay valid JSON that decodes
// to the very text stored, with nothing a terminal acts on left raw.
// Which commands it covers is checked against the command table
// (inert_commands_test.go); what no test here names is still inert, as
// every command prints through the sinks' inert writers.

// field is the hostile text of one field: its tag, then the class's text.
func field(tag string, c inerttest.Class) string { return tag + c.Text }

// stored is what a field holds once stored: JSON, and so the store, keeps
// UTF-8 only, and each byte that is not becomes U+FFFD.
func stored(tag string, c inerttest.Class) string {
	return tag + strings.ToValidUTF8(c.Text, "\uFFFD")
}

// answeredAt is the version of hostileStore's session that holds the
// plan and the final answer; the head holds the failure.
const answeredAt = 10

// hostileStore writes a session whose every text field holds c, each
// behind its own tag: title, model, workspace, system prompt, messages, a
// plan with a goal, a gated call approved for the session (name, id,
// arguments, result, error), a note, a final answer, a summary, then a
// second turn that failed.
func hostileStore(t *testing.T, c inerttest.Class) (db, id string) {
	t.Helper()
	h := func(tag string) string { return field(tag, c) }
	db = filepath.Join(t.TempDir(), "retrace.db")
	ctx := context.Background()
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	info, err := st.Create(ctx, storage.NewSession{Title: h("title:"), Model: h("model:"), Workspace: h("workspace:"), CreatedAt: at})
	if err != nil {
		t.Fatal(err)
	}
	call := &state.ToolCall{ID: h("callid:")}
	asst := func(s string) []state.Message { return []state.Message{{Role: state.RoleAssistant, Content: s}} }
	events := []state.Event{
		{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleSystem, Content: h("system:")}, {Role: state.RoleUser, Content: h("user:")}}},
		{Kind: state.PlanSet, Plan: []state.Step{{Text: h("step:")}}, Goal: h("goal:")},
		{Kind: state.AssistantMessage, Messages: []state.Message{{Role: state.RoleAssistant, Content: h("reply:"),
			ToolCalls: []state.ToolRequest{{ID: h("callid:"), Name: h("callname:"), Arguments: h("args:")}}}}},
		{Kind: state.ApprovalRequested, Tool: call},
		{Kind: state.ApprovalGiven, Tool: call, Always: true},
		{Kind: state.ToolStarted, Tool: call},
		{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: h("callid:"), Result: h("result:"), Error: h("toolerr:"), DurationMS: 3}},
		{Kind: state.NoteSet, NoteKey: h("notekey:"), NoteValue: h("notevalue:")},
		{Kind: state.StepCompleted, Step: 0, Messages: asst("stepdone")},
		{Kind: state.Answered, Messages: asst(h("final:"))},
		{Kind: state.Summarized, Text: h("summary:"), Through: 6},
		{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: h("user2:")}}},
		{Kind: state.Failed, Text: h("failed:")},
	}
	cur := storage.NewCursor(st, state.New(info.ID))
	for i, ev := range events {
		ev.At = at.Add(time.Duration(i) * time.Second)
		if _, err := cur.Commit(ctx, ev); err != nil {
			t.Fatalf("event %d (%s): %v", i+1, ev.Kind, err)
		}
	}
	return db, info.ID
}

// sectionOf is the part of show's output under a heading, up to the next
// blank line.
func sectionOf(out, heading string) string {
	start := strings.Index(out, "\n"+heading+"\n")
	if start < 0 {
		return ""
	}
	rest := out[start+1:]
	if end := strings.Index(rest, "\n\n"); end >= 0 {
		return rest[:end]
	}
	return rest
}

// lineWith is the line of out that holds s.
func lineWith(out, s string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// shown is one field's place in a text output.
type shown struct {
	where string // the part of the output the field is printed in
	tag   string
	room  int // how much of a clipped field is printed; 0 all
}

// folded is c as the agent's one-line messages hold it: the agent puts
// the text on one line before it is stored (strings.Fields), so the
// controls that are white space (CR, VT, FF, NEL) are spaces by then.
func folded(c inerttest.Class) inerttest.Class {
	r := strings.NewReplacer("^M", " ", "^K", " ", "^L", " ", "<U+0085>", " ")
	out := c
	out.Shown = nil
	for _, s := range c.Shown {
		out.Shown = append(out.Shown, r.Replace(s))
	}
	return out
}

// checkText fails unless out holds nothing a terminal acts on (but
// newlines) and every field is shown in its place.
func checkText(t *testing.T, what, out string, c inerttest.Class, fields []shown) {
	t.Helper()
	if bad := inerttest.Problems(out, "\n"); len(bad) != 0 {
		t.Fatalf("%s carries %v:\n%s", what, bad, out)
	}
	for _, f := range fields {
		if miss := inerttest.Missing(f.where, f.tag, c, f.room); len(miss) != 0 {
			t.Errorf("%s does not show %q in:\n%s\n--- whole output:\n%s", what, miss, f.where, out)
		}
	}
}

// checkJSON fails unless out is valid JSON holding nothing raw that a
// terminal acts on, and decodes to each of want among its strings.
func checkJSON(t *testing.T, what, out string, want ...string) {
	t.Helper()
	if !json.Valid([]byte(out)) {
		t.Fatalf("%s is not valid JSON:\n%s", what, out)
	}
	if bad := inerttest.Problems(out, "\n"); len(bad) != 0 {
		t.Fatalf("%s carries %v raw:\n%q", what, bad, out)
	}
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			have[v] = true
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for k, x := range v {
				have[k] = true
				walk(x)
			}
		}
	}
	walk(v)
	for _, w := range want {
		if !have[w] {
			t.Errorf("%s does not decode to %q", what, w)
		}
	}
}

// Reading commands: show (the head and an earlier version), log,
// sessions and export --format md print every field inert and shown;
// their JSON forms decode to the stored text.
func TestInertMatrixReadCommands(t *testing.T) {
	for _, c := range inerttest.Classes {
		t.Run(c.Name, func(t *testing.T) {
			db, id := hostileStore(t, c)

			head := retrace(t, "show", id, "--system", "--db", db).ok(t).stdout
			header := head[:strings.Index(head, "\n\n")]
			tools, conv := sectionOf(head, "tool calls"), sectionOf(head, "conversation")
			checkText(t, "show", head, c, []shown{
				{header, "title:", 0}, {header, "model:", 0}, {header, "workspace:", 0},
				{sectionOf(head, "goal"), "user2:", 0},
				{sectionOf(head, "notes"), "notekey:", 0}, {sectionOf(head, "notes"), "notevalue:", 0},
				{lineWith(head, "runs without asking"), "callname:", 0},
				// A call as what it did: a name is cut at 40 characters;
				// the arguments are in full in the conversation.
				{tools, "callname:", 40}, {tools, "toolerr:", 60},
				{sectionOf(head, "summary of earlier turns"), "summary:", 0},
				{conv, "system:", 0}, {conv, "user:", 0}, {conv, "reply:", 0}, {conv, "callname:", 0}, {conv, "args:", 0},
				{conv, "callid:", 0}, {conv, "result:", 0}, {conv, "toolerr:", 0}, {conv, "final:", 0}, {conv, "user2:", 0},
				{sectionOf(head, "error"), "failed:", 0},
			})
			earlier := retrace(t, "show", id, "--version", fmt.Sprint(answeredAt), "--db", db).ok(t).stdout
			checkText(t, "show --version", earlier, c, []shown{
				{sectionOf(earlier, "goal"), "goal:", 0}, {sectionOf(earlier, "plan"), "step:", 0},
				{sectionOf(earlier, "final answer"), "final:", 0},
			})

			log := retrace(t, "log", id, "--db", db).ok(t).stdout
			checkText(t, "log", log, c, []shown{{lineWith(log, "head v13"), "title:", 0}})
			list := retrace(t, "sessions", "--db", db).ok(t).stdout
			checkText(t, "sessions", list, c, []shown{{lineWith(list, id), "title:", 40}, {lineWith(list, id), "workspace:", 0}})
			md := retrace(t, "export", id, "--format", "md", "--db", db).ok(t).stdout
			var fields []shown
			for _, tag := range []string{"title:", "model:", "workspace:", "system:", "user:", "reply:", "callname:", "callid:",
				"args:", "result:", "toolerr:", "notekey:", "notevalue:", "final:", "summary:", "user2:", "failed:"} {
				fields = append(fields, shown{md, tag, 0})
			}
			checkText(t, "export --format md", md, c, fields)

			s := func(tag string) string { return stored(tag, c) }
			checkJSON(t, "show --json", retrace(t, "show", id, "--json", "--db", db).ok(t).stdout,
				s("user2:"), s("notekey:"), s("notevalue:"), s("callname:"), s("args:"), s("result:"), s("failed:"), s("summary:"))
			checkJSON(t, "sessions --json", retrace(t, "sessions", "--json", "--db", db).ok(t).stdout, s("title:"), s("model:"), s("workspace:"))
			checkJSON(t, "log --json", retrace(t, "log", id, "--json", "--db", db).ok(t).stdout)
			checkJSON(t, "export", retrace(t, "export", id, "--db", db).ok(t).stdout,
				s("title:"), s("system:"), s("reply:"), s("callid:"), s("toolerr:"), s("final:"), s("failed:"))

			// rm quotes the title it deleted, Go-escaped.
			rm := retrace(t, "rm", id, "--db", db).ok(t).stdout
			checkText(t, "rm", rm, c, nil)
			if !strings.Contains(rm, `("title:`) {
				t.Errorf("rm does not name the title: %q", rm)
			}
		})
	}
}

// jsonString is s as a JSON string: how a model's tool call carries
// hostile text in its arguments.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// retrace run, with the model's every reply hostile: the plan, a note, a
// call to a tool that does not exist, a call whose arguments are not
// JSON, what it says before them, the thinking and the answer. Stdout
// (what the model says) and stderr (the progress) are inert and show each.
func TestInertMatrixRunProgress(t *testing.T) {
	for _, c := range inerttest.Classes {
		t.Run(c.Name, func(t *testing.T) {
			e := newRunEnv(t)
			h := func(tag string) string { return field(tag, c) }
			e.srv.Enqueue(
				llmserver.ToolCallReply([]llmserver.Call{{ID: "call_plan", Name: "set_plan", Args: `{"steps":[` + jsonString(h("step:")) + `]}`}}),
				llmserver.ToolCallReply([]llmserver.Call{
					{ID: "call_note", Name: "note", Args: `{"key":` + jsonString(h("notekey:")) + `,"value":` + jsonString(h("notevalue:")) + `}`},
					{ID: "call_x", Name: h("callname:"), Args: `{"a":1}`},
					{ID: "call_bad", Name: "read_file", Args: h("badargs:")},
				}, llmserver.WithText(h("working:"))),
				llmserver.TextReply(h("answer:"), llmserver.WithReasoning(h("thinking:"))),
			)
			r := e.run(t, "", "look")
			if r.code != exitOK {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			checkText(t, "what the model says, on stdout", r.stdout, c, []shown{{r.stdout, "working:", 0}, {r.stdout, "answer:", 0}})
			checkText(t, "the progress on stderr", r.stderr, c, []shown{
				{lineWith(r.stderr, "1. [active]"), "step:", 0},
				{lineWith(r.stderr, "note "), "notekey:", 0}, {lineWith(r.stderr, "note "), "notevalue:", 40},
				{lineWith(r.stderr, "→ "), "callname:", 0}, {lineWith(r.stderr, "✗ callname:"), "callname:", 0},
				{lineWith(r.stderr, "thinking: "), "thinking:", 0},
			})
			bad := lineWith(r.stderr, "not valid JSON")
			checkText(t, "the error for arguments that are not JSON", bad, folded(c), []shown{{bad, "badargs:", 40}})
		})
	}
}

// retrace run against a server whose error bodies are hostile: the retry
// line, the error line of the progress and the command's last line say
// what the server said, inert.
func TestInertMatrixRunServerErrors(t *testing.T) {
	for _, c := range inerttest.Classes {
		t.Run(c.Name, func(t *testing.T) {
			e := newRunEnv(t)
			e.srv.Enqueue(
				llmserver.WithHeaders(llmserver.Status(500, llmserver.ErrorBody(field("retry:", c), "server_error", "", nil)), "retry-after-ms", "1"),
				llmserver.Status(400, field("refused:", c)),
			)
			r := e.run(t, "", "look")
			if r.code != exitError {
				t.Fatalf("exit %d, want %d\n%s", r.code, exitError, r.stderr)
			}
			last := outputLines(r.stderr)[len(outputLines(r.stderr))-1]
			checkText(t, "stderr", r.stderr, c, []shown{
				{lineWith(r.stderr, "retrying"), "retry:", 0},
				{lineWith(r.stderr, "  error: "), "refused:", 0},
				{last, "refused:", 0},
			})
		})
	}
}

func outputLines(s string) []string { return strings.Split(strings.TrimRight(s, "\n"), "\n") }

// retrace run --json: the final state on stdout is valid JSON with the
// model's text escaped, nothing raw.
func TestInertMatrixRunJSON(t *testing.T) {
	for _, c := range inerttest.Classes {
		t.Run(c.Name, func(t *testing.T) {
			e := newRunEnv(t)
			e.srv.Enqueue(llmserver.TextReply(field("answer:", c)))
			r := e.run(t, "", "--json", "look")
			if r.code != exitOK {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			checkJSON(t, "run --json", r.stdout, stored("answer:", c))
		})
	}
}

// The notices of a headless task (the session's own remarks, which may
// quote an error) are printed inert.
func TestInertMatrixRunNotice(t *testing.T) {
	for _, c := range inerttest.Classes {
		t.Run(c.Name, func(t *testing.T) {
			var out, errOut strings.Builder
			p := newProgress(&out, &errOut, false, state.New("s1"))
			p.Notice(field("notice:", c))
			checkText(t, "a notice", errOut.String(), c, []shown{{errOut.String(), "notice:", 0}})
		})
	}
}

// retrace run --session on a finished session, with no prompt, has no
// task to run: the answer the session holds is not printed as if it were
// new (only a task the command ran puts an answer on stdout), and what it
// says on stderr is inert.
func TestInertMatrixRunAtRest(t *testing.T) {
	for _, c := range inerttest.Classes {
		t.Run(c.Name, func(t *testing.T) {
			e := newRunEnv(t)
			e.srv.Enqueue(llmserver.TextReply(field("answer:", c)))
			e.run(t, "", "look")
			r := e.run(t, "", "--session", sessionID(t, e.db))
			if r.code != exitOK || r.stdout != "" || !strings.Contains(r.stderr, "no unfinished task") {
				t.Fatalf("exit %d, stdout %q\n%s", r.code, r.stdout, r.stderr)
			}
			checkText(t, "retrace run at rest", r.stderr, c, nil)
		})
	}
}

// An ambiguous session prefix names the sessions it matches with their
// titles, on stderr: each title shown, nothing in it obeyed.
func TestInertMatrixAmbiguousPrefix(t *testing.T) {
	for _, c := range inerttest.Classes {
		t.Run(c.Name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "retrace.db")
			st, err := boltstore.Open(db, boltstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			byFirst := map[byte]int{}
			prefix := ""
			for prefix == "" {
				info, err := st.Create(context.Background(), storage.NewSession{Title: field("title:", c)})
				if err != nil {
					t.Fatal(err)
				}
				if byFirst[info.ID[0]]++; byFirst[info.ID[0]] == 2 {
					prefix = info.ID[:1]
				}
			}
			st.Close()
			r := retrace(t, "show", prefix, "--db", db)
			if r.code != exitError || !strings.Contains(r.stderr, "ambiguous") {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			checkText(t, "the ambiguous prefix error", r.stderr, c, []shown{{r.stderr, "title:", 0}})
		})
	}
}
