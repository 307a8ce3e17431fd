package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"retrace/agent/llmserver"
	"retrace/state"
	"retrace/storage/boltstore"
)

// lateDelay is how long the command's background process sleeps before it
// writes late.txt: long enough that the kill always comes first.
const lateDelay = 2 * time.Second

// These tests signal a real `retrace run` while run_command runs a command
// whose background process writes a file after lateDelay, and check that
// the command's whole process group dies with retrace (or with the task,
// for the signals retrace handles) and that the file never appears.
func TestSignalKillsCommand(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGHUP, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			e := newCrashEnv(t)
			e.srv.Enqueue(planCall("run it"),
				llmserver.ToolCallReply([]llmserver.Call{{ID: "call_run", Name: "run_command",
					Args: fmt.Sprintf(`{"command":"(sleep %d; echo late > late.txt) & echo $$ > sh.pid; wait"}`, int(lateDelay.Seconds()))}}))
			c := e.cmd("--allow", "run_command", "run the long command")
			var stderr bytes.Buffer
			c.Stderr = &stderr
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
			pgid := commandGroup(t, filepath.Join(e.ws, "sh.pid"))
			started := time.Now()
			t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })

			if err := c.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			code := exited(t, c.Wait)
			groupGone(t, pgid)
			// With the group gone nothing of it can write late.txt;
			// look until well past the command's delay all the same,
			// in case something left the group.
			for time.Since(started) < lateDelay+2*time.Second {
				if _, err := os.Stat(filepath.Join(e.ws, "late.txt")); err == nil {
					t.Fatalf("the command outlived retrace's %s and wrote late.txt", sig)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if sig == syscall.SIGKILL {
				return
			}
			// A signal retrace handles interrupts the task, which is
			// recorded, and the command with it.
			if code != exitInterrupted || !strings.Contains(stderr.String(), "interrupted") {
				t.Fatalf("after %s: exit %d\n%s", sig, code, stderr.String())
			}
			assertInterrupted(t, e)
		})
	}
}

// commandGroup waits for the command to write its shell's pid and returns
// the shell's process group, read from /proc while the shell runs.
func commandGroup(t *testing.T, pidFile string) int {
	t.Helper()
	pid := 0
	until(t, "the command to write its pid", func() bool {
		b, _ := os.ReadFile(pidFile)
		if !bytes.HasSuffix(b, []byte("\n")) {
			return false
		}
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return pid > 0
	})
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("the command's shell: %v", err)
	}
	// After the name in parentheses: state, ppid, pgrp.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	pgid, err := strconv.Atoi(fields[2])
	if err != nil || pgid <= 0 {
		t.Fatalf("pgrp in %q: %v", stat, err)
	}
	return pgid
}

// exited waits for retrace to end, for at most 20 s, and returns its exit
// code.
func exited(t *testing.T, wait func() error) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- wait() }()
	select {
	case err := <-done:
		var ee interface{ ExitCode() int }
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(20 * time.Second):
		t.Fatal("retrace did not end within 20s of the signal")
	}
	return 0
}

// groupGone fails unless process group pgid is empty within 10 s: killed
// processes leave at once, and a reaped group does not exist.
func groupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := syscall.Kill(-pgid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command's process group %d outlived retrace: kill(-pgid, 0) = %v", pgid, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// assertInterrupted checks that the session's head is an interruption that
// recorded the killed call as finished with an error.
func assertInterrupted(t *testing.T, e *crashEnv) {
	t.Helper()
	s := e.head(t)
	st, err := boltstore.Open(e.db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tree, err := st.Tree(context.Background(), s.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	last := tree.Nodes[len(tree.Nodes)-1]
	call := s.Memory.ToolCalls[len(s.Memory.ToolCalls)-1]
	if s.Phase != state.Idle || last.Event != state.Interrupted || !call.Finished() || !strings.Contains(call.Error, "interrupted") {
		t.Fatalf("phase %s, last event %s, call %+v", s.Phase, last.Event, call)
	}
}
