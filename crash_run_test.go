package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"retrace/agent/llmserver"
	"retrace/agent/llmtest"
	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// These tests kill a real `retrace run` with SIGKILL at the points the
// agent's resume rules are about, then resume the session with another
// `retrace run --session` and check what the rules promise.

type crashEnv struct {
	t           *testing.T
	bin, db, ws string
	srv         *llmtest.Server
}

func newCrashEnv(t *testing.T) *crashEnv {
	t.Helper()
	e := &crashEnv{t: t, bin: builtBinary(t), db: filepath.Join(t.TempDir(), "retrace.db"), ws: t.TempDir(), srv: llmtest.NewServer(t)}
	t.Cleanup(func() {
		if v := e.srv.Violations(); len(v) != 0 {
			t.Errorf("requests a strict server would reject: %v", v)
		}
	})
	return e
}

func (e *crashEnv) cmd(args ...string) *exec.Cmd {
	full := append([]string{"run", "--db", e.db, "--workspace", e.ws, "--base-url", e.srv.URL(), "--model", "gpt-test"}, args...)
	c := testCommand(e.t, e.bin, full...)
	c.Env = append(os.Environ(), "XDG_CONFIG_HOME="+e.ws+"/.config", "OPENAI_API_KEY=")
	return c
}

// start runs retrace and returns its stdout as it comes.
func (e *crashEnv) start(t *testing.T, args ...string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	c := e.cmd(args...)
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	// A test that waits for output must not wait forever when it never
	// comes: the pipe is an *os.File, which takes a deadline.
	if f, ok := out.(*os.File); ok {
		if err := f.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	return c, bufio.NewReader(out)
}

func kill(t *testing.T, c *exec.Cmd) {
	t.Helper()
	if err := c.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = c.Wait()
}

// until polls cond with a deadline; nothing is left to a guessed sleep.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 20s for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (e *crashEnv) head(t *testing.T) state.State {
	t.Helper()
	if err := boltstore.Verify(context.Background(), e.db); err != nil {
		t.Fatalf("after the kill: %v", err)
	}
	st, err := boltstore.Open(e.db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	list, err := st.Sessions(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions %v %v", list, err)
	}
	s, err := st.Head(context.Background(), list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (e *crashEnv) resume(t *testing.T, id string, args ...string) {
	t.Helper()
	out, err := e.cmd(append([]string{"--session", id}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
}

// Killed while a tool ran: the call is recorded as interrupted, never run
// again, and the task goes on.
func TestKilledMidTool(t *testing.T) {
	e := newCrashEnv(t)
	ran := filepath.Join(e.ws, "ran.txt")
	e.srv.Enqueue(planCall("run it"),
		llmserver.ToolCallReply([]llmserver.Call{{ID: "call_run", Name: "run_command",
			Args: `{"command":"echo $$ > pgid; echo ran >> ran.txt; sleep 30"}`}}),
		llmserver.TextReply("The command was interrupted; I could not finish it."))
	c, _ := e.start(t, "--allow", "run_command", "run the long command")
	// The file exists as soon as the shell opens it, a moment before the
	// line is written: wait for the line, or the kill can come between.
	until(t, "the command to write ran.txt", func() bool { b, _ := os.ReadFile(ran); return strings.Contains(string(b), "ran\n") })
	kill(t, c)
	killGroup(t, filepath.Join(e.ws, "pgid"))

	s := e.head(t)
	if n := len(s.Memory.ToolCalls); n < 2 || s.Memory.ToolCalls[n-1].StartedAt.IsZero() || s.Memory.ToolCalls[n-1].Finished() {
		t.Fatalf("the killed call must be recorded as started and unfinished: %+v", s.Memory.ToolCalls)
	}
	e.resume(t, s.SessionID, "--allow", "run_command")
	s = e.head(t)
	call := s.Memory.ToolCalls[len(s.Memory.ToolCalls)-1]
	if b, _ := os.ReadFile(ran); strings.Count(string(b), "ran") != 1 {
		t.Fatalf("the command ran %d times; a crash must never run it again", strings.Count(string(b), "ran"))
	}
	if !strings.Contains(call.Error, "interrupted: retrace stopped") || s.Phase != state.Done {
		t.Fatalf("after resume: phase %s, call %+v", s.Phase, call)
	}
}

// Killed mid-stream: nothing of the half reply was kept, and the resumed
// run asks the model again.
func TestKilledMidStream(t *testing.T) {
	e := newCrashEnv(t)
	c := llmserver.Chunker{}
	e.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("half an answ"), llmserver.Block()), llmserver.TextReply("The whole answer."))
	p, out := e.start(t, "tell me")
	if got := readUntil(t, out, "half"); !strings.Contains(got, "half") {
		t.Fatalf("stdout %q", got)
	}
	kill(t, p)
	s := e.head(t)
	if s.Phase != state.Planning || len(s.History) != 2 {
		t.Fatalf("after a kill mid-stream the state is the one before the call: %s, %d messages", s.Phase, len(s.History))
	}
	e.resume(t, s.SessionID)
	if s = e.head(t); s.Phase != state.Done || s.FinalAnswer != "The whole answer." {
		t.Fatalf("after resume: %s %q", s.Phase, s.FinalAnswer)
	}
	for _, m := range s.History {
		if strings.Contains(m.Content, "half an answ") {
			t.Fatal("the half reply of the killed process is in the history")
		}
	}
}

// Killed while summarising: no summary was kept; the resumed run
// summarises again and answers.
func TestKilledMidSummary(t *testing.T) {
	e := newCrashEnv(t)
	id := e.sevenTurns(t)
	e.srv.Enqueue(llmserver.Stream(llmserver.Block()))
	p, _ := e.start(t, "--session", id, "--context-window", "600", "question 7")
	until(t, "the summary request", func() bool {
		reqs := e.srv.Requests()
		return len(reqs) == 1 && len(reqs[0].Tools) == 0
	})
	kill(t, p)
	if s := e.head(t); s.Summary != "" || s.Phase != state.Planning {
		t.Fatalf("after a kill mid-summary: summary %q phase %s", s.Summary, s.Phase)
	}
	e.srv.Enqueue(llmserver.TextReply("SUMMARY of turns 0 and 1"), llmserver.TextReply("answer 7"))
	e.resume(t, id, "--context-window", "600")
	if s := e.head(t); s.Summary != "SUMMARY of turns 0 and 1" || s.FinalAnswer != "answer 7" {
		t.Fatalf("after resume: summary %q answer %q", s.Summary, s.FinalAnswer)
	}
}

// sevenTurns writes a session of seven question-and-answer turns.
func (e *crashEnv) sevenTurns(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	st, err := boltstore.Open(e.db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	info, err := st.Create(ctx, storage.NewSession{Title: "long", Workspace: e.ws})
	if err != nil {
		t.Fatal(err)
	}
	cur := storage.NewCursor(st, state.New(info.ID))
	for i := range 7 {
		words := strings.Repeat("words and more words ", 8)
		for _, ev := range []state.Event{
			{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: fmt.Sprintf("question %d %s", i, words)}}},
			{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: fmt.Sprintf("answer %d %s", i, words)}}},
		} {
			if _, err := cur.Commit(ctx, ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	return info.ID
}

func readUntil(t *testing.T, r *bufio.Reader, want string) string {
	t.Helper()
	var b strings.Builder
	buf := make([]byte, 64)
	for !strings.Contains(b.String(), want) {
		n, err := r.Read(buf)
		b.Write(buf[:n])
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("waiting for %q on stdout, got %q: %v", want, b.String(), err)
		}
	}
	return b.String()
}

// killGroup kills the process group whose leader's pid a command wrote.
func killGroup(t *testing.T, pidFile string) {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}
