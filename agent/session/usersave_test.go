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

// A file the command only opened for writing is not the command's change
// when someone else put another file at its path meanwhile: the user
// saving h.txt the way editors do (a temporary file renamed over it), or
// removing gone.txt. Nor is an edit the user made before the command
// first opened the file (early.txt), when nothing touched the file after
// that open. A file the command itself replaces by rename (own.txt) is
// its own. The record leaves the user's out, and a rollback to before the
// command leaves them as the user left them.
func TestAFileReplacedDuringACommandIsTheUsers(t *testing.T) {
	r := newRig(t)
	for name, text := range map[string]string{"h.txt": "h before\n", "gone.txt": "gone before\n", "early.txt": "early before\n", "own.txt": "own before\n"} {
		if err := os.WriteFile(filepath.Join(r.ws, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	started, sync := filepath.Join(r.ws, "started"), filepath.Join(r.ws, "sync")
	for _, p := range []string{started, sync} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.ctrl.Create(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	// The command opens three files for writing and writes none, waits
	// for the user, opens early.txt, and replaces own.txt itself.
	r.srv.Enqueue(toolCall("c1", "run_command", map[string]string{"command": "exec 3<>h.txt 4>>gone.txt 5<>own.txt; echo > started; cat sync >/dev/null; " +
		"exec 6>>early.txt; echo own by the command > own.tmp && mv own.tmp own.txt"}))
	r.srv.Enqueue(llmserver.TextReply("Done."))
	if err := r.ctrl.Submit("hold the files"); err != nil {
		t.Fatal(err)
	}
	until(t, r.ctrl, func(ev session.Event) bool { _, ask := ev.(session.ApprovalNeeded); return ask })
	before := r.ctrl.Head().Version
	r.ctrl.Decide(agent.Decision{Approved: true})

	fifo(t, started, os.O_RDONLY)
	tmp := filepath.Join(r.ws, ".h.txt.swp")
	if err := os.WriteFile(tmp, []byte("h saved by the user\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(r.ws, "h.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(r.ws, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(r.ws, "early.txt"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("added by the user\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fifo(t, sync, os.O_WRONLY)
	done, _ := finish(t, r.ctrl)
	if done.Err != nil {
		t.Fatal(done.Err)
	}
	for _, name := range []string{"h.txt", "gone.txt", "early.txt"} {
		if img, ok := done.State.Files[name]; ok {
			t.Errorf("the user's change to %s is recorded as the command's: %+v", name, img)
		}
	}
	if _, ok := done.State.Files["own.txt"]; !ok {
		t.Errorf("the command's own rename over own.txt is not recorded: %v", done.State.Files)
	}
	if _, err := r.ctrl.Restore(before, session.Rollback{}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"h.txt": "h saved by the user\n", "early.txt": "early before\nadded by the user\n", "own.txt": "own before\n"} {
		if got, _ := os.ReadFile(filepath.Join(r.ws, name)); string(got) != want {
			t.Errorf("after the rollback %s holds %q, want %q", name, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(r.ws, "gone.txt")); !os.IsNotExist(err) {
		t.Errorf("the rollback brought back gone.txt, which the user removed: %v", err)
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
