package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"retrace/agent/llmserver"
	"retrace/agent/llmtest"
)

// BenchmarkManyFilesCommand is a session whose command made 100,000 small
// files (RETRACE_BENCH_FILES for another count), then wrote one file: the
// command's own time, the rest of its task (the scans, the checkpoint,
// the model's turns), `show`, a rollback of the one file written after,
// and a rollback of the whole command, each in seconds; then the content
// cache's files and size after the command.
func BenchmarkManyFilesCommand(b *testing.B) {
	n := 100_000
	if s := os.Getenv("RETRACE_BENCH_FILES"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		srv := llmtest.NewServer(b)
		db, ws, cache := filepath.Join(b.TempDir(), "retrace.db"), b.TempDir(), b.TempDir()
		b.Setenv("XDG_CONFIG_HOME", b.TempDir())
		b.Setenv("XDG_CACHE_HOME", cache)
		b.Setenv("OPENAI_API_KEY", "")
		b.Setenv("OPENAI_BASE_URL", "")
		b.Setenv("RETRACE_MODEL", "")
		cli := func(args ...string) string {
			var out, errOut bytes.Buffer
			if code := run(context.Background(), args, strings.NewReader(""), &out, &errOut); code != exitOK {
				b.Fatalf("retrace %s: exit %d\n%s", strings.Join(args, " "), code, errOut.String())
			}
			return out.String()
		}
		task := func(args ...string) {
			cli(append([]string{"run", "--db", db, "--workspace", ws, "--base-url", srv.URL(), "--model", "gpt-test", "--api-key", secret, "--yes"}, args...)...)
		}
		// Wall time and this process's CPU time: on a shared machine the
		// second says what the step costs when the first also counts the
		// waits for a CPU another job holds.
		secs := func(name string, f func()) {
			t0, c0 := time.Now(), processCPU(b)
			f()
			b.ReportMetric(time.Since(t0).Seconds(), name+"-s")
			b.ReportMetric((processCPU(b) - c0).Seconds(), name+"-cpu-s")
		}
		// The command times itself, so that what retrace adds around it
		// can be told from what the file system takes to make the files.
		cmd := fmt.Sprintf(`s=$(date +%%s%%N); awk 'BEGIN{for(i=0;i<%d;i++){d="gen/d" int(i/1000); if(i%%1000==0) system("mkdir -p " d); f=d "/f" i ".txt"; print "file " i > f; close(f)}}'; echo command-ns=$(($(date +%%s%%N)-s))`, n)
		srv.Enqueue(llmserver.ToolCallReply([]llmserver.Call{{ID: "c1", Name: "run_command", Args: fmt.Sprintf(`{"command":%q,"timeout_seconds":600}`, cmd)}}),
			llmserver.TextReply("Made them."))
		t0 := time.Now()
		task("make the files")
		taskTime := time.Since(t0)
		var list []struct{ ID string }
		if err := json.Unmarshal([]byte(cli("sessions", "--json", "--db", db)), &list); err != nil || len(list) != 1 {
			b.Fatalf("sessions: %v", err)
		}
		id := list[0].ID
		files, size := treeSize(b, cache)
		var head struct {
			Version int
			Files   map[string]json.RawMessage `json:"files"`
			Memory  struct {
				ToolCalls []struct{ Result string } `json:"tool_calls"`
			} `json:"memory"`
		}
		if err := json.Unmarshal([]byte(cli("show", id, "--db", db, "--json")), &head); err != nil || len(head.Memory.ToolCalls) != 1 {
			b.Fatalf("show --json: %v", err)
		}
		_, ns, _ := strings.Cut(head.Memory.ToolCalls[0].Result, "command-ns=")
		ns, _, _ = strings.Cut(ns, "\n")
		cmdNS, err := strconv.ParseInt(strings.TrimSpace(ns), 10, 64)
		if err != nil {
			b.Fatalf("the command's own time in %q: %v", head.Memory.ToolCalls[0].Result, err)
		}
		if len(head.Files) != n {
			b.Fatalf("the session recorded %d changed files, want %d", len(head.Files), n)
		}
		b.ReportMetric(float64(cmdNS)/1e9, "command-s")
		b.ReportMetric((taskTime - time.Duration(cmdNS)).Seconds(), "task-but-command-s")
		srv.Enqueue(fileCall("w1", "write_file", map[string]string{"path": "NOTES.md", "content": "one note\n"}), llmserver.TextReply("Noted."))
		task("--session", id, "take a note")
		secs("show", func() { cli("show", id, "--db", db) })
		secs("rollback-one", func() { cli("rollback", id, strconv.Itoa(head.Version), "--db", db) })
		// --force: the files past the command's budget were recorded
		// without content or a stamp, so nothing vouches that they are
		// still the command's, and a rollback asks before removing them.
		secs("rollback-all", func() { cli("rollback", id, "1", "--db", db, "--force") })
		b.ReportMetric(float64(files), "cache-files")
		b.ReportMetric(float64(size)/1e6, "cache-MB")
	}
}

// treeSize counts the files under dir and their bytes.
func treeSize(b *testing.B, dir string) (files int, size int64) {
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			files++
			size += info.Size()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return files, size
}

// processCPU is the CPU time, user and system, this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
