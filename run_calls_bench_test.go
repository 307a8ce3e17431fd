package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"retrace/agent/llmserver"
	"retrace/agent/llmtest"
)

// BenchmarkRunManyCalls is `retrace run` of a task whose replies make the
// most calls one reply may (128 read_file calls each), n replies in a
// row, then answer: the process's CPU time per call (cpu-ms/call) stays
// the same whatever n when a call costs what it brings, not what the
// tool log already holds.
//
//	go test . -run '^$' -bench RunManyCalls -benchtime 1x
func BenchmarkRunManyCalls(b *testing.B) {
	for _, n := range []int{1, 8, 16} {
		b.Run(fmt.Sprintf("replies=%d", n), func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				srv := llmtest.NewServer(b)
				db, ws := filepath.Join(b.TempDir(), "retrace.db"), b.TempDir()
				b.Setenv("XDG_CONFIG_HOME", b.TempDir())
				b.Setenv("OPENAI_API_KEY", "")
				b.Setenv("OPENAI_BASE_URL", "")
				b.Setenv("RETRACE_MODEL", "")
				if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644); err != nil {
					b.Fatal(err)
				}
				srv.Enqueue(planCall("read"))
				for r := range n {
					calls := make([]llmserver.Call, 128)
					for i := range calls {
						calls[i] = llmserver.Call{ID: fmt.Sprintf("call_%d_%d", r, i), Name: "read_file", Args: `{"path":"a.txt"}`}
					}
					srv.Enqueue(llmserver.ToolCallReply(calls))
				}
				srv.Enqueue(llmserver.TextReply("Read."))
				var out, errOut bytes.Buffer
				c0 := processCPU(b)
				code := run(context.Background(), []string{"run", "--db", db, "--workspace", ws, "--base-url", srv.URL(), "--model", "gpt-test", "--api-key", secret, "read a.txt"},
					strings.NewReader(""), &out, &errOut)
				cpu += processCPU(b) - c0
				if code != exitOK {
					b.Fatalf("exit %d: %s", code, errOut.String())
				}
			}
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N*n*128), "cpu-ms/call")
		})
	}
}
