package agent_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"retrace/agent"
	"retrace/agent/llmserver"
	"retrace/state"
)

// BenchmarkCancel measures how long a task takes to stop after it is
// cancelled: mid-stream (the model call) and mid-tool (a command that would
// run for 30 s), until Send has returned with the interrupted event kept.
// Reported as ms-to-stop/op; the requirement is under 100 ms.
func BenchmarkCancel(b *testing.B) {
	c := llmserver.Chunker{}
	for name, setup := range map[string]func(r *rig) func(state.State) bool{
		"mid-stream": func(r *rig) func(state.State) bool {
			r.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("partial"), llmserver.Block()))
			return nil
		},
		"mid-tool": func(r *rig) func(state.State) bool {
			r.srv.Enqueue(plan("wait"), llmserver.ToolCallReply(call("call_s", "run_command", `{"command":"touch started; sleep 30"}`)))
			return func(s state.State) bool {
				n := len(s.Memory.ToolCalls)
				return n > 1 && !s.Memory.ToolCalls[n-1].StartedAt.IsZero()
			}
		},
	} {
		b.Run(name, func(b *testing.B) {
			var total time.Duration
			for b.Loop() {
				r := newRig(b, agent.Options{Allowed: []string{"run_command"}})
				ready := setup(r)
				ctx, cancel := context.WithCancel(context.Background())
				var cancelledAt time.Time
				stop := func() { cancelledAt = time.Now(); cancel() }
				if ready == nil {
					r.obs.onDelta = stop
				} else {
					r.obs.onState = func(s state.State) {
						if ready(s) {
							go func() { // once the command is running
								for !fileExists(r, "started") {
									runtime.Gosched()
								}
								stop()
							}()
						}
					}
				}
				_, err := r.agent().Send(ctx, "go")
				total += time.Since(cancelledAt)
				if !errors.Is(err, agent.ErrInterrupted) {
					b.Fatalf("err %v", err)
				}
				r.srv.Close()
			}
			b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms-to-stop/op")
		})
	}
}

func fileExists(r *rig, name string) bool {
	_, err := os.Stat(filepath.Join(r.ws, name))
	return err == nil
}
