package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"retrace/agent/llmserver"
	"retrace/agent/llmtest"
	"retrace/storage/pgstore/pgtest"
)

// machine is one retrace installation sharing a PostgreSQL database with
// others: its own HOME (config, data) and workspace, as another machine
// would have.
type machine struct {
	t                  *testing.T
	bin, url, home, ws string
	srv                *llmtest.Server
}

func newMachine(t *testing.T, bin, url string) *machine {
	t.Helper()
	m := &machine{t: t, bin: bin, url: url, home: t.TempDir(), ws: t.TempDir(), srv: llmtest.NewServer(t)}
	return m
}

func (m *machine) cmd(args ...string) *exec.Cmd {
	c := testCommand(m.t, m.bin, append(args, "--db", m.url)...)
	c.Env = append(os.Environ(), "HOME="+m.home, "XDG_CONFIG_HOME=", "XDG_DATA_HOME=", "OPENAI_API_KEY=", "RETRACE_DB=")
	c.Dir = m.ws
	return c
}

// run is `retrace run` against this machine's model, in its workspace.
func (m *machine) run(args ...string) *exec.Cmd {
	return m.cmd(append([]string{"run", "--workspace", m.ws, "--base-url", m.srv.URL(), "--model", "gpt-test", "--allow", "run_command"}, args...)...)
}

func (m *machine) output(t *testing.T, args ...string) string {
	t.Helper()
	out, err := m.cmd(args...).CombinedOutput()
	if err != nil {
		t.Fatalf("retrace %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Two machines on one database: A runs a task; B reads the session as it
// goes and is refused a write naming A; A is killed and B goes on with
// the session at once; both see one version tree. Then B's connection is
// ended under a task: its next write fails, saying so, with nothing half
// written and nothing acknowledged lost.
func TestTwoMachinesShareASession(t *testing.T) {
	url := pgtest.NewDatabase(t)
	bin := builtBinary(t)
	a, b := newMachine(t, bin, url), newMachine(t, bin, url)
	// A session keeps the workspace it began in: B works on A's session
	// in the same checkout, at the same path, as a team's machines
	// usually have it.
	b.ws = a.ws

	// A's command waits in the workspace for a file the test makes, so
	// the task is held mid-way for as long as the test needs.
	hold := `{"command":"touch started; while [ ! -e go ]; do sleep 0.05; done"}`
	a.srv.Enqueue(planCall("wait"),
		llmserver.ToolCallReply([]llmserver.Call{{ID: "call_wait", Name: "run_command", Args: hold}}),
		llmserver.TextReply("never sent: A is killed first"))
	pa := a.run("hold the session")
	if err := pa.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pa.Process.Kill(); _ = pa.Wait() })
	until(t, "A's command to start", func() bool { _, err := os.Stat(filepath.Join(a.ws, "started")); return err == nil })

	id := strings.Fields(strings.Split(b.output(t, "sessions"), "\n")[1])[0]
	if out := b.output(t, "show", id); !strings.Contains(out, "hold the session") || !strings.Contains(out, "while [ ! -e go ]") {
		t.Errorf("B's show of A's running session:\n%s", out)
	}
	// Every version A has kept so far, as A's own log lists them.
	if la, lb := a.output(t, "log", id, "--json"), b.output(t, "log", id, "--json"); la != lb || !strings.Contains(lb, `"version": 6`) {
		t.Errorf("B's log of A's running session differs from A's, or misses v6:\n%s\n%s", lb, la)
	}
	refused, err := b.run("--session", id, "and more").CombinedOutput()
	host, _ := os.Hostname()
	if want := fmt.Sprintf("pid %d on %s", pa.Process.Pid, host); err == nil || !strings.Contains(string(refused), want) {
		t.Errorf("B's write while A holds the session: %v, want a refusal naming %q:\n%s", err, want, refused)
	}

	if err := pa.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = pa.Wait()
	killed := time.Now()
	// A's command outlives A (as any orphan would); let it end.
	if err := os.WriteFile(filepath.Join(a.ws, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// B's message replaces the task A was killed in (its call recorded as
	// interrupted by it, never run again), as it would in the interface.
	b.srv.Enqueue(llmserver.TextReply("B carries on."))
	var out []byte
	until(t, "B to take the session over", func() bool {
		out, err = b.run("--session", id, "carry on").CombinedOutput()
		return err == nil
	})
	t.Logf("B took the session over %v after A was killed", time.Since(killed).Round(time.Millisecond))
	if !strings.Contains(string(out), "interrupted: a new message replaced this unfinished task") || !strings.Contains(string(out), "B carries on.") {
		t.Errorf("B's run after A was killed:\n%s", out)
	}
	if la, lb := a.output(t, "log", id, "--json"), b.output(t, "log", id, "--json"); la != lb {
		t.Errorf("A and B see different trees:\n%s\n%s", la, lb)
	}

	// B's connection ended under a task: its next write fails, saying so.
	for _, f := range []string{"started", "go"} {
		if err := os.Remove(filepath.Join(b.ws, f)); err != nil {
			t.Fatal(err)
		}
	}
	before := b.output(t, "log", id, "--json")
	b.srv.Enqueue(planCall("wait"),
		llmserver.ToolCallReply([]llmserver.Call{{ID: "call_wait2", Name: "run_command", Args: hold}}),
		llmserver.TextReply("never kept: the claim is gone"))
	pb := b.run("--session", id, "wait again")
	var stderr strings.Builder
	pb.Stderr = &stderr
	if err := pb.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pb.Process.Kill(); _ = pb.Wait() })
	until(t, "B's command to start", func() bool { _, err := os.Stat(filepath.Join(b.ws, "started")); return err == nil })
	acked := b.output(t, "log", id, "--json")
	t.Logf("B's task is held mid-way (%v in)", time.Since(killed).Round(time.Millisecond))
	terminateClaim(t, url, id)
	terminated := time.Now()
	if err := os.WriteFile(filepath.Join(b.ws, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err = pb.Wait()
	t.Logf("B's run ended %v after its claim did", time.Since(terminated).Round(time.Millisecond))
	if err == nil || !strings.Contains(stderr.String(), "claim ended with its connection") {
		t.Errorf("B after its connection was ended: %v\n%s", err, stderr.String())
	}
	// What the task had written when the claim was lost is all there,
	// and nothing after it: the write that found the claim gone kept
	// nothing, not even in part.
	if after := b.output(t, "log", id, "--json"); after != acked || after == before {
		t.Errorf("the log after the lost claim is not what was acknowledged:\n%s\nwant\n%s", after, acked)
	}
	if out := a.output(t, "show", id); !strings.Contains(out, "wait again") {
		t.Errorf("the task's acknowledged checkpoints are gone:\n%s", out)
	}
}

// terminateClaim ends the backend that holds session id's claim, as a
// database administrator or a broken network would.
func terminateClaim(t *testing.T, url, id string) {
	t.Helper()
	var ended bool
	if err := pgtest.Connect(t, url).QueryRow(context.Background(), "SELECT pg_terminate_backend(backend_pid) FROM retrace_claims WHERE session_id = $1", id).Scan(&ended); err != nil || !ended {
		t.Fatalf("end the claim's backend: %v (ended: %v)", err, ended)
	}
}
