package agent_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"retrace/agent"
	"retrace/agent/llmserver"
	"retrace/agent/llmtest"
	"retrace/state"
)

// A reply past the bound of one reply (2 MiB) fails the task as any model
// error does: the error phase, a message naming the bound and the
// server, the reply's beginning kept and no more, and a session that goes
// on with a request of ordinary size. A server streaming 24 MiB had the
// whole of it stored as the answer, and sent back with the next request.
func TestAReplyPastTheBoundFailsTheTask(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, agent.Options{})
	var m llmtest.Meter
	r.doer = &m
	c := llmserver.Chunker{}
	pieces := make([]llmserver.Event, 24)
	for i := range pieces {
		pieces[i] = c.Text(strings.Repeat("x", 1<<20))
	}
	r.srv.Enqueue(llmserver.Stream(append(append([]llmserver.Event{c.Role()}, pieces...), c.Finish("stop"), llmserver.Done())...))
	s, err := r.agent().Send(ctx, "write a long story")
	var te *agent.TaskError
	if !errors.As(err, &te) || s.Phase != state.Error {
		t.Fatalf("phase %s, err %v: want the task failed", s.Phase, err)
	}
	for _, want := range []string{"2 MiB", r.srv.URL(), "max_reply_mib"} {
		if !strings.Contains(te.Message, want) || !strings.Contains(s.ErrorMessage, want) {
			t.Errorf("error %q does not name %q", te.Message, want)
		}
	}
	if n := m.Read(); n > 10<<20 {
		t.Errorf("read %d MiB of the reply", n>>20)
	}
	head, err := r.store.Head(ctx, r.session)
	if err != nil {
		t.Fatal(err)
	}
	for i, msg := range head.History {
		if len(msg.Content)+len(msg.Reasoning) > 80<<10 {
			t.Errorf("message %d (%s) holds %d KiB", i, msg.Role, (len(msg.Content)+len(msg.Reasoning))>>10)
		}
	}
	if fi, err := os.Stat(r.dbPath); err != nil || fi.Size() > 1<<20 {
		t.Errorf("the database is %d KiB (%v)", fi.Size()>>10, err)
	}

	r.srv.Enqueue(llmserver.TextReply("A short one, then."))
	if s, err := r.agent().Send(ctx, "a short story, please"); err != nil || s.Phase != state.Done {
		t.Fatalf("the next task: phase %s, %v", s.Phase, err)
	}
	reqs := r.srv.Requests()
	if n := len(reqs[len(reqs)-1].Raw); n > 256<<10 {
		t.Errorf("the next request is %d KiB", n>>10)
	}
}

// A reply of more calls than one reply may make (128) fails the task
// with none of them run or recorded: a strict server takes the next
// request, which holds no call left unanswered. 200 calls all ran.
func TestAReplyOfTooManyCallsRunsNone(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, agent.Options{})
	calls := make([]llmserver.Call, 200)
	for i := range calls {
		calls[i] = llmserver.Call{ID: fmt.Sprintf("call_%d", i), Name: "read_file", Args: `{"path":"a.txt"}`}
	}
	r.srv.Enqueue(plan("read"), llmserver.ToolCallReply(calls))
	s, err := r.agent().Send(ctx, "read a.txt again and again")
	var te *agent.TaskError
	if !errors.As(err, &te) || s.Phase != state.Error || !strings.Contains(te.Message, "128 tool calls") || !strings.Contains(te.Message, r.srv.URL()) {
		t.Fatalf("phase %s, err %v: want the task failed, naming the cap and the server", s.Phase, err)
	}
	if n := len(s.Memory.ToolCalls); n != 1 {
		t.Errorf("%d calls in the tool log, want the plan's alone", n)
	}
	for _, msg := range s.History {
		if len(msg.ToolCalls) > 1 {
			t.Errorf("a message of %d calls was recorded", len(msg.ToolCalls))
		}
	}
	r.srv.Enqueue(llmserver.TextReply("Done differently."))
	if s, err := r.agent().Send(ctx, "then just tell me"); err != nil || s.Phase != state.Done {
		t.Fatalf("the next task: phase %s, %v", s.Phase, err)
	}
}
