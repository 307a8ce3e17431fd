package session_test

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"retrace/agent"
	"retrace/agent/llmserver"
	"retrace/agent/session"
	"retrace/storage"
)

// A file the user saves while an agent command runs is not the command's
// change: the tool call's record leaves it out, and a rollback to before
// the command takes back what the command wrote and leaves the user's
// save alone.
func TestASaveDuringACommandIsTheUsers(t *testing.T) {
	r := newRig(t)
	mine := filepath.Join(r.ws, "mine.txt")
	if err := os.WriteFile(mine, []byte("the user's first text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Two FIFOs hold the command: it says it runs on "started", then
	// waits on "sync" for the user's save to be over.
	started, sync := filepath.Join(r.ws, "started"), filepath.Join(r.ws, "sync")
	for _, p := range []string{started, sync} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	r.srv.Enqueue(toolCall("c1", "run_command", map[string]string{"command": "echo one > cmd.txt; echo > started; cat sync >/dev/null; echo two >> cmd.txt"}))
	r.srv.Enqueue(llmserver.TextReply("Done."))
	if err := r.ctrl.Submit("build it"); err != nil {
		t.Fatal(err)
	}
	until(t, r.ctrl, func(ev session.Event) bool { _, ask := ev.(session.ApprovalNeeded); return ask })
	before := r.ctrl.Head().Version
	r.ctrl.Decide(agent.Decision{Approved: true})

	// Once the command runs, the user saves, then lets it go on.
	fifo(t, started, os.O_RDONLY)
	if err := os.WriteFile(mine, []byte("saved by the user while the command ran\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo(t, sync, os.O_WRONLY)
	done, _ := finish(t, r.ctrl)
	if done.Err != nil {
		t.Fatal(done.Err)
	}
	if _, ok := done.State.Files["mine.txt"]; ok {
		t.Fatalf("the user's save is recorded as the command's: %+v", done.State.Files["mine.txt"])
	}
	if _, ok := done.State.Files["cmd.txt"]; !ok {
		t.Fatalf("the command's own file is not recorded: %v", done.State.Files)
	}
	if _, err := r.ctrl.Restore(before, session.Rollback{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(mine); string(got) != "saved by the user while the command ran\n" {
		t.Fatalf("after the rollback mine.txt holds %q", got)
	}
	if _, err := os.Stat(filepath.Join(r.ws, "cmd.txt")); !os.IsNotExist(err) {
		t.Fatalf("cmd.txt is still there: %v", err)
	}
}

// fifo opens the FIFO at p with flag, which waits for the command at its
// other end, reads what comes, and closes it.
func fifo(t *testing.T, p string, flag int) {
	t.Helper()
	opened := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(p, flag, 0)
		if err == nil {
			if flag == os.O_RDONLY {
				_, err = io.ReadAll(f)
			}
			f.Close()
		}
		opened <- err
	}()
	select {
	case err := <-opened:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second): // a bound on a hang, not a speed
		t.Fatalf("the command never reached %s", p)
	}
}
