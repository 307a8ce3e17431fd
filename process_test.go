package main

import (
	"os/exec"
	"syscall"
	"testing"
)

// testCommand is exec.Command for every process a test of this package
// starts (retrace, tmux's client, sh, go build). The process is killed
// when the test ends, and by the kernel when the test binary dies before
// its cleanups run (killed, timed out): a retrace left running would keep
// its session's claim and its terminal. Waiting for it stays the
// caller's.
//
// The parent-death signal fires when the thread that started the process
// exits; Go ends a thread only under a goroutine locked to it, which no
// test here does.
func testCommand(tb testing.TB, name string, args ...string) *exec.Cmd {
	c := exec.Command(name, args...)
	c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	tb.Cleanup(func() {
		if c.Process != nil {
			// After Wait this is a no-op: os.Process knows it ended.
			_ = c.Process.Kill()
		}
	})
	return c
}
