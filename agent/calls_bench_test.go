package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"retrace/agent"
	"retrace/agent/llmserver"
	"retrace/state"
)

// BenchmarkManyCallsInOneReply measures a task whose plan reply is
// followed by one reply of n read_file calls, then the answer: every call
// is started and finished with a checkpoint of its own. The client's cap
// on calls per reply (128) is raised to n for it. It reports the
// time and the process's CPU time per call (ms/call, cpu-ms/call), which
// stay the same whatever n when the cost of a call does not grow with the
// calls before it.
//
//	go test ./agent -run '^$' -bench ManyCallsInOneReply -benchtime 1x
func BenchmarkManyCallsInOneReply(b *testing.B) {
	for _, n := range []int{100, 1000, 2000} {
		b.Run(fmt.Sprintf("calls=%d", n), func(b *testing.B) {
			var took, cpu time.Duration
			for b.Loop() {
				r := newRig(b, agent.Options{})
				r.obs.limit = 4*n + 100
				r.maxCalls = n // past the cap, to measure what a call costs
				if err := os.WriteFile(filepath.Join(r.ws, "a.txt"), []byte("a\n"), 0o644); err != nil {
					b.Fatal(err)
				}
				calls := make([]llmserver.Call, n)
				for i := range calls {
					calls[i] = llmserver.Call{ID: fmt.Sprintf("call_%d", i), Name: "read_file", Args: `{"path":"a.txt"}`}
				}
				r.srv.Enqueue(plan("read"), llmserver.ToolCallReply(calls), llmserver.TextReply("Read."))
				ag := r.agent()
				start, cpu0 := time.Now(), cpuTime(b)
				s, err := ag.Send(context.Background(), "read a.txt many times")
				took += time.Since(start)
				cpu += cpuTime(b) - cpu0
				if err != nil || s.Phase != state.Done {
					b.Fatalf("phase %s: %v", s.Phase, err)
				}
				if got := len(s.Memory.ToolCalls); got != n+1 {
					b.Fatalf("%d calls in the tool log, want %d", got, n+1)
				}
			}
			perCall := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N*n) }
			b.ReportMetric(perCall(took), "ms/call")
			b.ReportMetric(perCall(cpu), "cpu-ms/call")
		})
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
