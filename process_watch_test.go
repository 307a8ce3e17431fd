package main

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// orphanEnv names the file TestOrphanHelper reports to; set, the helper
// runs.
const orphanEnv = "RETRACE_ORPHAN_REPORT"

// A test binary killed outright (a timeout, kill -9) runs no cleanup: what
// it started still goes. A process from testCommand dies with it, and a
// tmux server's watchdog ends the server, what runs in its pane, and its
// socket's directory.
func TestWhatATestStartedDiesWithIt(t *testing.T) {
	needTmux(t)
	report := filepath.Join(t.TempDir(), "report")
	helper := testCommand(t, os.Args[0], "-test.run=^TestOrphanHelper$")
	// The helper is killed outright, so its TestMain cannot remove the
	// temporary directories it makes: they go under this test's own.
	helper.Env = append(os.Environ(), orphanEnv+"="+report, "TMPDIR="+t.TempDir())
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	var fields []string
	until(t, "the helper's report", func() bool {
		b, _ := os.ReadFile(report)
		fields = strings.Fields(string(b))
		return strings.HasSuffix(string(b), "\n") && len(fields) == 3
	})
	socket := fields[0]
	pids := make([]int, 2) // the plain process, the pane's
	for i, f := range fields[1:] {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("report %q: %v", fields, err)
		}
		pids[i] = pid
		t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	}
	t.Cleanup(func() { _, _ = testCommand(t, "tmux", "-S", socket, "kill-server").CombinedOutput() })

	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	for _, pid := range pids {
		waitExited(t, pid)
	}
	until(t, "the server's socket directory to go", func() bool {
		_, err := os.Stat(filepath.Dir(socket))
		return errors.Is(err, os.ErrNotExist)
	})
	if out, err := testCommand(t, "tmux", "-S", socket, "list-sessions").CombinedOutput(); err == nil {
		t.Fatalf("the tmux server outlived the test that started it:\n%s", out)
	}
}

// TestOrphanHelper is TestWhatATestStartedDiesWithIt's child: it starts a
// process and a terminal, says which, and waits to be killed.
func TestOrphanHelper(t *testing.T) {
	report := os.Getenv(orphanEnv)
	if report == "" {
		t.Skip("run by TestWhatATestStartedDiesWithIt")
	}
	sleeper := testCommand(t, "sleep", "300")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	term := newTmux(t, "sleep 300")
	panes := term.panes()
	if len(panes) != 1 {
		t.Fatalf("panes %v", panes)
	}
	line := term.socket + " " + strconv.Itoa(sleeper.Process.Pid) + " " + strconv.Itoa(panes[0]) + "\n"
	if err := os.WriteFile(report, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Minute) // waits to be killed, which comes long before
	t.Fatal("the helper was not killed")
}
