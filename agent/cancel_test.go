package agent_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"retrace/agent"
	"retrace/agent/llmserver"
	"retrace/state"
)

// bodies is the model client's HTTP client with a count of the response
// bodies it opened and closed: a stream still open is a body not closed.
type bodies struct {
	mu             sync.Mutex
	opened, closed int
}

func (b *bodies) Do(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return resp, err
	}
	b.mu.Lock()
	b.opened++
	b.mu.Unlock()
	resp.Body = &watchedBody{ReadCloser: resp.Body, b: b}
	return resp, nil
}

func (b *bodies) counts() (opened, closed int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.opened, b.closed
}

type watchedBody struct {
	io.ReadCloser
	b    *bodies
	once sync.Once
}

func (w *watchedBody) Close() error {
	w.once.Do(func() {
		w.b.mu.Lock()
		w.b.closed++
		w.b.mu.Unlock()
	})
	return w.ReadCloser.Close()
}

// hangGuard is how long a cancelled Send may take before the test gives
// up on it. It is not a requirement (BenchmarkCancel holds that one): it
// only keeps an agent that ignores the cancel from hanging the suite.
const hangGuard = time.Minute

// sendCancelled runs Send in the background and waits for it to return.
func sendCancelled(t *testing.T, ag *agent.Agent, ctx context.Context, onHang func()) (state.State, error) {
	t.Helper()
	type result struct {
		s   state.State
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := ag.Send(ctx, "go")
		done <- result{s, err}
	}()
	select {
	case res := <-done:
		return res.s, res.err
	case <-time.After(hangGuard):
		onHang()
		t.Fatalf("Send went on for %v after the cancel", hangGuard)
		return state.State{}, nil
	}
}

// Cancel stops the model call: the stream the server would hold open
// forever is closed by the client, and what streamed is kept.
func TestCancelClosesTheModelStream(t *testing.T) {
	r := newRig(t, agent.Options{})
	watch := &bodies{}
	r.doer = watch
	c := llmserver.Chunker{}
	r.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("partial"), llmserver.Block()))
	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once
	r.obs.onDelta = func() { once.Do(cancel) }
	s, err := sendCancelled(t, r.agent(), ctx, r.srv.Close)
	if !errors.Is(err, agent.ErrInterrupted) || s.Phase != state.Idle {
		t.Fatalf("phase %s: %v", s.Phase, err)
	}
	if opened, closed := watch.counts(); opened != 1 || closed != 1 {
		t.Fatalf("%d streams opened, %d closed; the cancelled stream must be closed", opened, closed)
	}
	if last := s.History[len(s.History)-1]; last.Content != "partial\n\n[interrupted]" {
		t.Fatalf("last message %q", last.Content)
	}
}

// Cancel stops the running command: its process is gone when Send
// returns, though it would have run for an hour.
func TestCancelKillsTheCommand(t *testing.T) {
	r := newRig(t, agent.Options{Allowed: []string{"run_command"}})
	// exec: the shell becomes the sleep, so the pid is the command's own.
	r.srv.Enqueue(plan("wait"), llmserver.ToolCallReply(call("call_s", "run_command", `{"command":"echo $$ > pid; exec sleep 3600"}`)))
	ctx, cancel := context.WithCancel(context.Background())
	var pid atomic.Int64
	var once sync.Once
	r.obs.onState = func(s state.State) {
		if c := s.Memory.ToolCalls; len(c) < 2 || c[1].StartedAt.IsZero() {
			return
		}
		once.Do(func() {
			go func() { // once the command is running
				pid.Store(int64(waitPID(t, r)))
				cancel()
			}()
		})
	}
	s, err := sendCancelled(t, r.agent(), ctx, func() {
		if p := pid.Load(); p > 0 {
			syscall.Kill(int(p), syscall.SIGKILL)
		}
	})
	if !errors.Is(err, agent.ErrInterrupted) {
		t.Fatalf("phase %s: %v", s.Phase, err)
	}
	if err := syscall.Kill(int(pid.Load()), 0); pid.Load() <= 0 || !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("the command (pid %d) is still there after the cancel: kill -0 says %v", pid.Load(), err)
	}
	if c := s.Memory.ToolCalls[1]; !c.Finished() || !strings.Contains(c.Error, "interrupted") || len(s.OpenCalls()) != 0 {
		t.Fatalf("the call after the cancel: %+v", c)
	}
}

// waitPID waits for the command to write its pid.
func waitPID(t *testing.T, r *rig) int {
	for {
		b, err := os.ReadFile(filepath.Join(r.ws, "pid"))
		if err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Errorf("pid file %q", b)
				return 0
			}
			return pid
		}
		time.Sleep(time.Millisecond)
	}
}

// A cancel that comes after the reply arrived but before it was kept ends
// the task like any other: interrupted, at rest, with the reply kept.
// (The reply is cut off at the token limit, so the agent tells the
// observer so before it keeps it; the observer cancels then.)
func TestCancelBeforeTheReplyIsKept(t *testing.T) {
	r := newRig(t, agent.Options{})
	c := llmserver.Chunker{}
	r.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("the whole reply"), c.Finish("length"), llmserver.Done()))
	ctx, cancel := context.WithCancel(context.Background())
	r.obs.onNotice = cancel
	s, err := r.agent().Send(ctx, "go")
	if !errors.Is(err, agent.ErrInterrupted) || s.Phase != state.Idle {
		t.Fatalf("phase %s: %v", s.Phase, err)
	}
	if last := s.History[len(s.History)-1]; last.Role != state.RoleAssistant || last.Content != "the whole reply\n\n[interrupted]" {
		t.Fatalf("last message %+v", last)
	}
	if head, err := r.store.Head(context.Background(), r.session); err != nil || head.Version != s.Version || head.Phase != state.Idle {
		t.Fatalf("stored head v%d %s, agent v%d: %v", head.Version, head.Phase, s.Version, err)
	}
}
