package taskbench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"retrace/agent/llmserver"
	"retrace/agent/session"
	"retrace/agent/snapshot"
	"retrace/agent/tools"
	"retrace/storage"
	"retrace/storage/storebench"
)

// Result is what one agent task wrote: a developer's message, one
// tool call and the answer, run by the real agent loop (agent/session's
// controller, with its claim and its workspace snapshots) against a
// scripted model, into a store with one session already in it.
type Result struct {
	Tool        string `json:"tool"`        // the one tool the model calls
	Checkpoints int    `json:"checkpoints"` // kept by the task
	// WriteBytes is /proc/self/io's write_bytes over the task: the bytes
	// of page cache the process dirtied in files, which is what the disk
	// will be sent. It counts whole 4 KiB pages (a 100-byte write to a
	// lock file counts 4096) and no socket traffic. 0 where the kernel
	// does not account it (not Linux, or a tmpfs).
	WriteBytes int64 `json:"write_bytes"`
	// WChar and SysCW are /proc/self/io's wchar and syscw: every byte
	// passed to a write system call, and how many calls, including the
	// model's HTTP traffic over loopback (the server runs in this
	// process), so they are upper bounds on what reached files.
	WChar int64 `json:"wchar"`
	SysCW int64 `json:"syscw"`
}

// Tools are the tasks Run knows: read_file reads a file and
// changes nothing; write_file writes one (allowed without asking), so the
// checkpoint after it carries the file's new content.
var Tools = []string{"read_file", "write_file"}

// Run creates a session in the store at db (made if missing), then
// measures one task of the agent in it: the message, one call of tool,
// the answer. The workspace and the snapshot cache are made in dir. mark, if not
// nil, is called with "start" just before the message is sent and with
// "end" when the task is done, so that a tracer can tell the task from
// the setup around it.
func Run(ctx context.Context, dir, db, tool string, open storebench.Opener, mark func(string)) (Result, error) {
	if mark == nil {
		mark = func(string) {}
	}
	args, ok := map[string]string{
		"read_file":  `{"path":"main.go"}`,
		"write_file": `{"path":"notes.md","content":"` + strings.Repeat("a line of notes the agent writes\\n", 32) + `"}`,
	}[tool]
	if !ok {
		return Result{}, fmt.Errorf("no task with tool %q; the tasks call one of %s", tool, strings.Join(Tools, ", "))
	}
	root := filepath.Join(dir, "workspace")
	if err := os.MkdirAll(root, 0o700); err != nil {
		return Result{}, err
	}
	src := "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n"
	if err := os.WriteFile(filepath.Join(root, "main.go"), []byte(src), 0o600); err != nil {
		return Result{}, err
	}
	ws, err := tools.NewWorkspace(root)
	if err != nil {
		return Result{}, err
	}
	srv, err := llmserver.Start("127.0.0.1:0")
	if err != nil {
		return Result{}, fmt.Errorf("start the scripted model: %w", err)
	}
	defer srv.Close()
	srv.SetHandler(func(req llmserver.Request) llmserver.Response {
		for _, m := range req.Messages {
			if m.Role == "tool" {
				return llmserver.TextReply("Done: main.go prints hello.")
			}
		}
		return llmserver.ToolCallReply([]llmserver.Call{{ID: "call_1", Name: tool, Args: args}})
	})

	st, err := open(db)
	if err != nil {
		return Result{}, err
	}
	defer st.Close()
	ctrl := session.New(ctx, st, session.Config{
		BaseURL: srv.URL(), Model: "bench", Workspace: ws, Allowed: []string{"write_file"},
		Files: snapshot.Options{CacheDir: filepath.Join(dir, "cache")},
	})
	defer ctrl.Close()
	if err := ctrl.Create(storage.NewSession{Title: "task"}); err != nil {
		return Result{}, err
	}
	before := ctrl.Head().Version

	io0, err := readProcIO()
	if err != nil {
		return Result{}, err
	}
	mark("start")
	if err := ctrl.Submit("what does main.go do?"); err != nil {
		return Result{}, err
	}
	var done *session.TaskDone
	for ev := range ctrl.Events(ctx) {
		if d, ok := ev.(session.TaskDone); ok {
			done = &d
			break
		}
	}
	io1, err := readProcIO()
	if err != nil {
		return Result{}, err
	}
	mark("end")
	switch {
	case done == nil:
		return Result{}, errors.Join(errors.New("the task did not end"), ctx.Err())
	case done.Err != nil:
		return Result{}, fmt.Errorf("the task failed: %w", done.Err)
	}
	return Result{
		Tool: tool, Checkpoints: done.State.Version - before,
		WriteBytes: io1.writeBytes - io0.writeBytes,
		WChar:      io1.wchar - io0.wchar, SysCW: io1.syscw - io0.syscw,
	}, nil
}

type procIO struct{ wchar, syscw, writeBytes int64 }

// readProcIO reads this process's write counters; where there is no
// /proc/self/io they read 0.
func readProcIO() (procIO, error) {
	b, err := os.ReadFile("/proc/self/io")
	if errors.Is(err, os.ErrNotExist) {
		return procIO{}, nil
	} else if err != nil {
		return procIO{}, fmt.Errorf("read the write counters: %w", err)
	}
	var p procIO
	for line := range strings.Lines(string(b)) {
		name, value, _ := strings.Cut(strings.TrimSpace(line), ": ")
		var n int64
		if _, err := fmt.Sscan(value, &n); err != nil {
			continue
		}
		switch name {
		case "wchar":
			p.wchar = n
		case "syscw":
			p.syscw = n
		case "write_bytes":
			p.writeBytes = n
		}
	}
	return p, nil
}
