package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"retrace/agent/demo"
	"retrace/agent/llmserver"
	"retrace/agent/llmtest"
	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
)

const secret = "sk-SECRET-do-not-store-4242424242"

// runEnv is a clean environment for `retrace run`: no real config file, no
// key from the developer's shell, a fake model, a workspace and a database
// in temporary directories.
type runEnv struct {
	srv       *llmtest.Server
	db, ws    string
	configDir string
}

func newRunEnv(t *testing.T) *runEnv {
	t.Helper()
	e := &runEnv{srv: llmtest.NewServer(t), db: filepath.Join(t.TempDir(), "retrace.db"), ws: t.TempDir(), configDir: t.TempDir()}
	t.Setenv("XDG_CONFIG_HOME", e.configDir)
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("RETRACE_MODEL", "")
	t.Cleanup(func() {
		if v := e.srv.Violations(); len(v) != 0 {
			t.Errorf("requests a strict server would reject: %v", v)
		}
	})
	return e
}

func (e *runEnv) run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return e.runCtx(t, context.Background(), stdin, args...)
}

func (e *runEnv) runCtx(t *testing.T, ctx context.Context, stdin string, args ...string) result {
	t.Helper()
	full := append([]string{"run", "--db", e.db, "--workspace", e.ws, "--base-url", e.srv.URL(), "--model", "gpt-test"}, args...)
	var out, errOut bytes.Buffer
	code := run(ctx, full, strings.NewReader(stdin), &out, &errOut)
	return result{code, out.String(), errOut.String()}
}

func planCall(steps ...string) llmserver.Response {
	b, _ := json.Marshal(map[string]any{"steps": steps})
	return llmserver.ToolCallReply([]llmserver.Call{{ID: "call_plan", Name: "set_plan", Args: string(b)}})
}

func TestRunATask(t *testing.T) {
	e := newRunEnv(t)
	if err := os.WriteFile(filepath.Join(e.ws, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.srv.Enqueue(planCall("read main.go"),
		llmserver.ToolCallReply([]llmserver.Call{{ID: "call_r", Name: "read_file", Args: `{"path":"main.go"}`}}),
		llmserver.TextReply("main.go is the main package."))
	r := e.run(t, "", "--api-key", secret, "what is main.go?")
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if strings.TrimSpace(r.stdout) != "main.go is the main package." {
		t.Fatalf("stdout is the answer, nothing else: %q", r.stdout)
	}
	for _, want := range []string{"· planning", "1. [active] read main.go", "→ read_file", "✓ read_file", "· done", "retrace show"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, r.stderr)
		}
	}

	// The session is there to show, and to continue with its history.
	id := sessionID(t, e.db)
	if r := retrace(t, "show", id, "--db", e.db).ok(t); !strings.Contains(r.stdout, "main.go is the main package.") {
		t.Fatalf("show:\n%s", r.stdout)
	}
	e.srv.Enqueue(llmserver.TextReply("You asked about main.go."))
	t.Setenv("OPENAI_API_KEY", secret) // the environment's key, this time
	r = e.run(t, "what did I ask?\n", "--session", id[:6], "-")
	if r.code != exitOK || !strings.Contains(r.stdout, "You asked about main.go.") {
		t.Fatalf("follow-up: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := e.srv.Requests()
	if follow := reqs[len(reqs)-1].Messages; !strings.Contains(follow[1].Content, "what is main.go?") || follow[len(follow)-1].Content != "what did I ask?" {
		t.Fatalf("the follow-up must carry the history: %+v", follow)
	}

	// The key is nowhere: not in the database, an export, or any output.
	db, err := os.ReadFile(e.db)
	if err != nil {
		t.Fatal(err)
	}
	export := retrace(t, "export", id, "--db", e.db).ok(t).stdout + retrace(t, "export", id, "--format", "md", "--db", e.db).ok(t).stdout
	for where, text := range map[string]string{"database": string(db), "export": export, "stdout": r.stdout, "stderr": r.stderr} {
		if strings.Contains(text, secret) || strings.Contains(text, secret[len(secret)-12:]) {
			t.Errorf("the API key appears in the %s", where)
		}
	}
	// And in no file retrace wrote anywhere: lock files, the workspace,
	// the config directory.
	for _, dir := range []string{filepath.Dir(e.db), e.ws, e.configDir} {
		_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte(secret)) {
				t.Errorf("the API key appears in %s", path)
			}
			return nil
		})
	}
	for _, req := range reqs {
		if got := req.Header.Get("Authorization"); got != "Bearer "+secret {
			t.Fatalf("the key must reach the server, and only there: %q", got)
		}
	}
}

func TestRunJSON(t *testing.T) {
	e := newRunEnv(t)
	e.srv.Enqueue(llmserver.TextReply("Hello."))
	r := e.run(t, "", "--json", "hi")
	var s state.State
	if r.code != exitOK || json.Unmarshal([]byte(r.stdout), &s) != nil {
		t.Fatalf("exit %d stdout %q", r.code, r.stdout)
	}
	if s.Phase != state.Done || s.FinalAnswer != "Hello." || s.Version != 2 {
		t.Fatalf("state %+v", s)
	}
}

// run --json on a long session prints what show --json does, every
// message, although the session went on from its recent part only.
func TestRunJSONOfALongSessionIsWhole(t *testing.T) {
	e := newRunEnv(t)
	ctx := context.Background()
	st, err := boltstore.Open(e.db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Create(ctx, storage.NewSession{Title: "long", Workspace: e.ws})
	if err != nil {
		t.Fatal(err)
	}
	cur := storage.NewCursor(st, state.New(info.ID))
	for i := range 300 {
		for _, ev := range []state.Event{
			{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: fmt.Sprintf("question %d", i)}}},
			{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: fmt.Sprintf("answer %d", i)}}},
		} {
			if _, err := cur.Commit(ctx, ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := cur.Commit(ctx, state.Event{Kind: state.Summarized, Text: "questions and answers", Through: 500}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	e.srv.Enqueue(llmserver.TextReply("Hello."))
	r := e.run(t, "", "--session", info.ID, "--json", "one more")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var show, stderr bytes.Buffer
	if code := run(ctx, []string{"show", "--db", e.db, "--json", info.ID}, strings.NewReader(""), &show, &stderr); code != exitOK {
		t.Fatalf("show: %s", stderr.String())
	}
	if r.stdout != show.String() {
		t.Fatalf("run --json printed %d bytes, show --json %d: not the whole state\n%.300s", len(r.stdout), show.Len(), r.stdout)
	}
}

func TestRunApprovals(t *testing.T) {
	write := llmserver.ToolCallReply([]llmserver.Call{{ID: "call_w", Name: "write_file", Args: `{"path":"out.txt","content":"hi"}`}})
	for name, tc := range map[string]struct {
		flags   []string
		written bool
	}{
		"denied by default": {nil, false},
		"--yes":             {[]string{"--yes"}, true},
		"--allow":           {[]string{"--allow", "write_file"}, true},
	} {
		t.Run(name, func(t *testing.T) {
			e := newRunEnv(t)
			e.srv.Enqueue(planCall("write"), write, llmserver.TextReply("step done"), llmserver.TextReply("finished"))
			r := e.run(t, "", append(tc.flags, "write out.txt")...)
			_, err := os.Stat(filepath.Join(e.ws, "out.txt"))
			if r.code != exitOK || (err == nil) != tc.written {
				t.Fatalf("exit %d, written %v\n%s", r.code, err == nil, r.stderr)
			}
			if !tc.written && !strings.Contains(r.stderr, "denied: write_file") {
				t.Fatalf("the denial is not shown:\n%s", r.stderr)
			}
		})
	}
}

func TestRunFailures(t *testing.T) {
	e := newRunEnv(t)
	// A remote endpoint with no key: refused before any session exists.
	r := run(context.Background(), []string{"run", "--db", e.db, "--base-url", "https://api.example.com/v1", "hi"}, strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	if r != exitError {
		t.Fatalf("exit %d", r)
	}
	if _, err := os.Stat(e.db); err == nil {
		t.Fatal("a session was created although the key was missing")
	}
	var errOut bytes.Buffer
	run(context.Background(), []string{"run", "--db", e.db, "--base-url", "https://api.example.com/v1", "hi"}, strings.NewReader(""), &bytes.Buffer{}, &errOut)
	if !strings.Contains(errOut.String(), "no API key") || !strings.Contains(errOut.String(), "OPENAI_API_KEY") {
		t.Fatalf("message: %q", errOut.String())
	}

	e.srv.Enqueue(llmserver.Status(401, llmserver.ErrorBody("Incorrect API key provided: sk-wr***.", "invalid_request_error", "", "invalid_api_key")))
	if r := e.run(t, "", "--api-key", "sk-wrong", "hi"); r.code != exitError || !strings.Contains(r.stderr, "API key") {
		t.Fatalf("401: exit %d\n%s", r.code, r.stderr)
	}

	for _, args := range [][]string{{}, {""}, {"a", "b"}, {"--allow", "rm_rf", "x"}} {
		if r := e.run(t, "", args...); r.code != exitUsage {
			t.Fatalf("%q: exit %d", args, r.code)
		}
	}
}

func TestRunInterrupted(t *testing.T) {
	e := newRunEnv(t)
	c := llmserver.Chunker{}
	e.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("Once upon"), llmserver.Block()))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Cancel once the request is in: the stream blocks until then.
		for len(e.srv.Requests()) == 0 {
			if ctx.Err() != nil {
				return
			}
		}
		cancel()
	}()
	r := e.runCtx(t, ctx, "", "tell a story")
	if r.code != exitInterrupted || !strings.Contains(r.stderr, "interrupted") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	st, err := boltstore.Open(e.db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id := sessionID(t, e.db)
	head, err := st.Head(context.Background(), id)
	if err != nil || head.Phase != state.Idle {
		t.Fatalf("head %s, %v", head.Phase, err)
	}
	st.Close()

	// The hint says 'retrace run --session ID' goes on: it does, with no
	// prompt, asking the model to go on from what streamed.
	if !strings.Contains(r.stderr, "'retrace run --session "+id[:8]+"' goes on") {
		t.Fatalf("the hint: %s", r.stderr)
	}
	sent := len(e.srv.Requests())
	e.srv.Enqueue(llmserver.TextReply("...there was a story."))
	r = e.run(t, "", "--session", id[:8])
	if r.code != exitOK || strings.TrimSpace(r.stdout) != "...there was a story." || !strings.Contains(r.stderr, "resuming the unfinished task") {
		t.Fatalf("going on: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := e.srv.Requests()
	if len(reqs) != sent+1 {
		t.Fatalf("%d requests to go on, want 1", len(reqs)-sent)
	}
	// It ends with what the model is to answer: the person's message when
	// nothing had streamed yet, else the cut-off reply and a word to go on.
	m := reqs[sent].Messages
	last, before := m[len(m)-1], m[len(m)-2]
	cutOff := before.Role == "assistant" && strings.HasPrefix(before.Content, "Once upon") && last.Content == "Go on with the task."
	if last.Role != "user" || (last.Content != "tell a story" && !cutOff) {
		t.Fatalf("the request to go on ends with %q then %s %q", before.Content, last.Role, last.Content)
	}
	// At rest, with nothing left to go on with, it says so and asks nothing.
	r = e.run(t, "", "--session", id[:8])
	if r.code != exitOK || !strings.Contains(r.stderr, "has no unfinished task") || len(e.srv.Requests()) != sent+1 {
		t.Fatalf("nothing to go on with: exit %d\n%s", r.code, r.stderr)
	}
}

func sessionID(t *testing.T, db string) string {
	t.Helper()
	var list []struct{ ID string }
	if err := json.Unmarshal([]byte(retrace(t, "sessions", "--json", "--db", db).ok(t).stdout), &list); err != nil || len(list) == 0 {
		t.Fatalf("sessions: %v", err)
	}
	return list[0].ID
}

// The README's walk-through: a whole task against the repository's own
// model server, then `show`, then a follow-up in the same session.
func TestRunAgainstTheDemoModel(t *testing.T) {
	e := newRunEnv(t)
	srv, err := demo.Start("127.0.0.1:0", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	strict := llmtest.Strict(srv.Server) // the demo model ships without the checker
	if err := os.WriteFile(filepath.Join(e.ws, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runDemo := func(args ...string) result {
		full := append([]string{"run", "--db", e.db, "--workspace", e.ws, "--base-url", srv.URL(), "--model", "retrace-demo"}, args...)
		var out, errOut bytes.Buffer
		code := run(context.Background(), full, strings.NewReader(""), &out, &errOut)
		return result{code, out.String(), errOut.String()}
	}
	r := runDemo("--yes", "look around this repository")
	if r.code != exitOK || !strings.Contains(r.stdout, "read main.go") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"1. [active] List the files", "→ list_files", "→ read_file", "approved by --yes: write_file", "✓ write_file"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, r.stderr)
		}
	}
	if b, err := os.ReadFile(filepath.Join(e.ws, "NOTES.md")); err != nil || !strings.Contains(string(b), "Read main.go") {
		t.Fatalf("NOTES.md: %q %v", b, err)
	}
	id := sessionID(t, e.db)
	r = runDemo("--session", id, "what did you do?")
	if r.code != exitOK || !strings.Contains(r.stdout, "list_files, read_file, write_file") {
		t.Fatalf("follow-up: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if v := strict.Violations(); len(v) != 0 {
		t.Fatalf("requests a strict server would reject: %v", v)
	}
}

// A session remembers its endpoint: a follow-up with no endpoint flags,
// no OPENAI_* variables and no key goes to the (local, keyless) server
// the session was started with, as the model it was started with; a
// flag still overrides. A demo session goes on with the demo model.
func TestRunRemembersTheEndpoint(t *testing.T) {
	e := newRunEnv(t)
	e.srv.Enqueue(llmserver.TextReply("Hello."))
	r := e.run(t, "", "hi")
	if r.code != exitOK {
		t.Fatalf("first task: exit %d\n%s", r.code, r.stderr)
	}
	id := sessionID(t, e.db)
	if got := retrace(t, "show", id, "--json", "--db", e.db).ok(t).stdout; !strings.Contains(got, `"base_url": "`+e.srv.URL()+`"`) {
		t.Fatalf("the session does not record its endpoint:\n%s", got)
	}

	followUp := func(args ...string) result {
		full := append([]string{"run", "--db", e.db, "--workspace", e.ws, "--session", id[:8]}, args...)
		var out, errOut bytes.Buffer
		code := run(context.Background(), full, strings.NewReader(""), &out, &errOut)
		return result{code, out.String(), errOut.String()}
	}
	e.srv.Enqueue(llmserver.TextReply("You said hi."))
	if r := followUp("what did I say?"); r.code != exitOK || strings.TrimSpace(r.stdout) != "You said hi." {
		t.Fatalf("follow-up with nothing configured: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := e.srv.Requests()
	if got := reqs[len(reqs)-1].Model; got != "gpt-test" {
		t.Fatalf("the follow-up asked model %q, want the recorded gpt-test", got)
	}
	e.srv.Enqueue(llmserver.TextReply("Other model."))
	if r := followUp("--model", "gpt-other", "and now?"); r.code != exitOK {
		t.Fatalf("follow-up with --model: exit %d\n%s", r.code, r.stderr)
	}
	reqs = e.srv.Requests()
	if got := reqs[len(reqs)-1].Model; got != "gpt-other" {
		t.Fatalf("a flag overrides the recorded model: asked %q", got)
	}
	// The session now records the model it last talked to.
	if got := retrace(t, "show", id, "--json", "--db", e.db).ok(t).stdout; !strings.Contains(got, `"model": "gpt-other"`) {
		t.Fatalf("the session does not record the new model:\n%s", got)
	}
}

// A demo session, started against the demo model, goes on with it from
// the command line with no flags at all.
func TestRunGoesOnWithTheDemoModel(t *testing.T) {
	e := newRunEnv(t)
	t.Setenv("XDG_DATA_HOME", t.TempDir()) // the demo's sample project goes here
	// Start it as the interface's --demo does: the session records the
	// demo model by name, since its port changes every run.
	st, err := boltstore.Open(e.db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := demoWorkspace()
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Create(context.Background(), storage.NewSession{Title: "demo", Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	ev := state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "hello"}},
		Endpoint: &state.Endpoint{Model: "retrace-demo", BaseURL: demoEndpoint}}
	cur := storage.NewCursor(st, state.New(info.ID))
	for _, ev := range []state.Event{ev, {Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: "Hello!"}}}} {
		if _, err := cur.Commit(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"run", "--db", e.db, "--session", info.ID[:8], "hi again"}, strings.NewReader(""), &out, &errOut)
	if code != exitOK || !strings.Contains(out.String(), "I am retrace's demo model") || !strings.Contains(errOut.String(), "retrace-demo") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out.String(), errOut.String())
	}
}

// A server's last byte is read: a stream whose last event (the one with
// the finish_reason, as servers that send no usage end) has no newline
// after it, and a server that answers a streaming request with one JSON
// completion (tool calls included), both end in the answer, once, exit 0.
func TestRunReadsTheServersLastByte(t *testing.T) {
	for _, c := range []struct {
		name    string
		replies []llmserver.Response
	}{
		{"last event without its newline", []llmserver.Response{llmserver.TextReply("The whole answer.", llmserver.WithoutUsage(), llmserver.WithBareEnd())}},
		{"a JSON completion instead of a stream", []llmserver.Response{llmserver.TextCompletion("The whole answer.")}},
		{"a tool round, all in JSON completions", []llmserver.Response{
			llmserver.ToolCallCompletion([]llmserver.Call{{ID: "call_l", Name: "list_files", Args: `{}`}}),
			llmserver.TextCompletion("The whole answer.")}},
		{"a tool round, each stream ending bare", []llmserver.Response{
			llmserver.ToolCallReply([]llmserver.Call{{ID: "call_l", Name: "list_files", Args: `{}`}}, llmserver.WithBareEnd()),
			llmserver.TextReply("The whole answer.", llmserver.WithoutUsage(), llmserver.WithBareEnd())}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newRunEnv(t)
			e.srv.Enqueue(c.replies...)
			r := e.run(t, "", "what is it?")
			if r.code != exitOK || r.stdout != "The whole answer.\n" {
				t.Fatalf("exit %d, stdout %q\n%s", r.code, r.stdout, r.stderr)
			}
			if n := len(e.srv.Requests()); n != len(c.replies) {
				t.Fatalf("%d requests for %d replies: a whole reply was retried", n, len(c.replies))
			}
		})
	}
}

// A server that echoes the Authorization header into what it streams (a
// misconfigured proxy, a model that repeats its input) gets the key into
// nothing: not stdout or stderr, the database, show, show --json or either
// export. The key arrives in a note's arguments, in the thinking, and in
// the answer, split over deltas of 5 characters.
func TestRunNeverKeepsAnEchoedKey(t *testing.T) {
	e := newRunEnv(t)
	e.srv.SetHandler(func(req llmserver.Request) llmserver.Response {
		echo := req.Header.Get("Authorization")
		noted := false
		for _, m := range req.Messages {
			noted = noted || m.Role == "tool"
		}
		if !noted {
			return llmserver.ToolCallReply([]llmserver.Call{{ID: "call_n", Name: "note", Args: `{"key":"auth","value":` + jsonString(echo) + `}`}},
				llmserver.WithPieceSize(5), llmserver.WithReasoning("I see "+echo+" in my input"))
		}
		return llmserver.TextReply("You sent "+echo+", I think.", llmserver.WithPieceSize(5), llmserver.WithReasoning("it was "+echo))
	})
	r := e.run(t, "", "--api-key", secret, "what did you get?")
	if r.code != exitOK || !strings.Contains(r.stdout, "You sent Bearer [the API key], I think.") {
		t.Fatalf("exit %d\nstdout %q\n%s", r.code, r.stdout, r.stderr)
	}
	id := sessionID(t, e.db)
	db, err := os.ReadFile(e.db)
	if err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{
		"stdout": r.stdout, "stderr": r.stderr, "database": string(db),
		"show":        retrace(t, "show", id, "--db", e.db).ok(t).stdout,
		"show --json": retrace(t, "show", id, "--json", "--db", e.db).ok(t).stdout,
		"export":      retrace(t, "export", id, "--db", e.db).ok(t).stdout,
		"export md":   retrace(t, "export", id, "--format", "md", "--db", e.db).ok(t).stdout,
	}
	for where, text := range outputs {
		if strings.Contains(text, secret) || strings.Contains(text, secret[len(secret)-12:]) {
			t.Errorf("the API key appears in %s", where)
		}
	}
	if show := outputs["show"]; !strings.Contains(show, "auth: Bearer [the API key]") || !strings.Contains(show, "it was Bearer [the API key]") {
		t.Errorf("show does not say where the key was:\n%s", show)
	}
}

// Nothing but the new task's answer reaches stdout. A follow-up whose
// first checkpoint cannot be written (here the kernel refuses every write
// to a file: ulimit -f 0) fails on stderr, and stdout stays empty: the
// previous task's answer, still the head's, is not printed as if it were
// the new one's. With --json, no state is printed either.
func TestRunPrintsNoStaleAnswer(t *testing.T) {
	e := newRunEnv(t)
	e.srv.Enqueue(llmserver.TextReply("The first answer."))
	if r := e.run(t, "", "first"); r.code != exitOK || r.stdout != "The first answer.\n" {
		t.Fatalf("first task: exit %d %q\n%s", r.code, r.stdout, r.stderr)
	}
	id := sessionID(t, e.db)
	before, err := os.ReadFile(e.db)
	if err != nil {
		t.Fatal(err)
	}
	bin := builtBinary(t)
	for _, extra := range [][]string{nil, {"--json"}} {
		args := append([]string{"-c", `ulimit -f 0 && exec "$0" "$@"`, bin, "run", "--db", e.db, "--workspace", e.ws,
			"--base-url", e.srv.URL(), "--model", "gpt-test", "--session", id}, extra...)
		cmd := testCommand(t, "sh", append(args, "the follow-up")...)
		cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+e.configDir)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err == nil || stdout.Len() != 0 || !strings.Contains(stderr.String(), "retrace:") {
			t.Fatalf("%v: the follow-up with no writable file: %v\nstdout %q\nstderr %s", extra, err, stdout.String(), stderr.String())
		}
	}
	if after, err := os.ReadFile(e.db); err != nil || !bytes.Equal(before, after) {
		t.Fatalf("the database changed (%v)", err)
	}
}

// endless is a stdin that never ends, counting what was read of it.
type endless struct{ read int }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	e.read += len(p)
	return len(p), nil
}

// A prompt over state.MaxMessage is refused with a message that says the
// limit and what to do instead, exit 2, before anything is created: from
// the arguments, and from a stdin that is read no further than the limit
// (a 50 MB prompt once took 44 s, 1 GB and five 52 MB requests).
func TestRunRefusesAHugePrompt(t *testing.T) {
	e := newRunEnv(t)
	in := &endless{}
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"run", "--db", e.db, "--base-url", e.srv.URL(), "--model", "gpt-test", "-"}, in, &out, &errOut)
	if code != exitUsage || !strings.Contains(errOut.String(), "over 256 KiB") || in.read > state.MaxMessage+64<<10 {
		t.Fatalf("exit %d, %d bytes read of stdin: %s", code, in.read, errOut.String())
	}
	if r := e.run(t, "", strings.Repeat("a", state.MaxMessage+1)); r.code != exitUsage || !strings.Contains(r.stderr, "over 256 KiB") {
		t.Fatalf("an argument one byte over: exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(e.db); err == nil || len(e.srv.Requests()) != 0 {
		t.Fatalf("a refused prompt created the database or sent %d requests", len(e.srv.Requests()))
	}
	// Exactly at the limit it goes, with its newline from stdin dropped.
	e.srv.Enqueue(llmserver.TextReply("Long."))
	if r := e.run(t, strings.Repeat("a", state.MaxMessage)+"\n", "-"); r.code != exitOK {
		t.Fatalf("a prompt of exactly the limit: exit %d: %s", r.code, r.stderr)
	}
	if m := e.srv.Requests()[0].Messages; len(m[len(m)-1].Content) != state.MaxMessage {
		t.Fatalf("sent %d bytes", len(m[len(m)-1].Content))
	}
}

// Commands do not see the API key's variable: a command that prints its
// environment puts no key into its result, and so none into the session.
// The configured sandbox is said on stderr when it confines less than it
// could.
func TestRunCommandsDoNotSeeTheKey(t *testing.T) {
	e := newRunEnv(t)
	t.Setenv("OPENAI_API_KEY", secret)
	t.Setenv("MY_PROVIDER_KEY", secret+"-2")
	if err := os.MkdirAll(filepath.Join(e.configDir, "retrace"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.configDir, "retrace", "config.toml"), []byte("api_key_env = \"MY_PROVIDER_KEY\"\nsandbox = \"off\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.srv.Enqueue(llmserver.ToolCallReply([]llmserver.Call{{ID: "call_env", Name: "run_command", Args: `{"command":"env; echo marker=$OPENAI_API_KEY$MY_PROVIDER_KEY."}`}}),
		llmserver.TextReply("Done."))
	r := e.run(t, "", "--yes", "print the environment")
	if r.code != exitOK || !strings.Contains(r.stderr, `warning: commands run unconfined: the sandbox is off (sandbox = "off")`) {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	s := retrace(t, "show", sessionID(t, e.db), "--json", "--db", e.db).ok(t).stdout
	if !strings.Contains(s, "marker=.") || strings.Contains(s, secret) {
		t.Fatalf("the command's result:\n%s", s)
	}
	db, err := os.ReadFile(e.db)
	if err != nil || bytes.Contains(db, []byte(secret)) {
		t.Fatalf("the key is in the database (%v)", err)
	}
}

// Each call shows once, started and finished, when the server numbers
// its calls per reply and the same id comes back: the progress lines
// compare the tool log by place, not by id. By id, the second call_0
// showed no start and the first a second finish.
func TestRunShowsEachCallOnceWhateverItsID(t *testing.T) {
	e := newRunEnv(t)
	if err := os.WriteFile(filepath.Join(e.ws, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	read := []llmserver.Call{{ID: "call_0", Name: "read_file", Args: `{"path":"a.txt"}`}}
	e.srv.Enqueue(planCall("read twice"), llmserver.ToolCallReply(read), llmserver.ToolCallReply(read), llmserver.TextReply("Read it twice."))
	r := e.run(t, "", "read a.txt twice")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if started, finished := strings.Count(r.stderr, "→ read_file"), strings.Count(r.stderr, "✓ read_file"); started != 2 || finished != 2 {
		t.Fatalf("%d starts and %d finishes shown, want 2 and 2:\n%s", started, finished, r.stderr)
	}
}
