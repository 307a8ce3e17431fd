package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"retrace/agent/llmserver"
	"retrace/agent/llmtest"
	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// signalRounds is how many times each way of ending retrace is tried.
const signalRounds = 5

// A way to end retrace in its terminal: pid is retrace's process.
type signalEnd struct {
	name string
	end  func(t *testing.T, term *tmux, pid int)
}

var signalEnds = []signalEnd{
	{"TERM", func(t *testing.T, term *tmux, pid int) {
		if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		// The shell that ran retrace reads the terminal's mode after
		// it: raw mode left behind shows as -icanon.
		term.waitFor(t, "EXIT=")
		if s := term.screen(t); !strings.Contains(s, "MODE=icanon") {
			t.Fatalf("after SIGTERM the terminal is not restored:\n%s", s)
		}
	}},
	{"HUP by kill-server", func(t *testing.T, term *tmux, _ int) { term.must(t, "kill-server") }},
	{"HUP by kill-pane", func(t *testing.T, term *tmux, _ int) { term.must(t, "kill-pane") }},
}

// A moment to end retrace at: the command line that runs it (in a shell,
// with its data in dir) and what brings it there.
type signalMoment struct {
	name    string
	busy    bool // a task runs: it is to be recorded as interrupted
	command func(t *testing.T, bin, dir, db string) string
	reach   func(t *testing.T, term *tmux, pid int)
}

// afterRetrace is what the shell does once retrace ends: say how, and
// wait for the test to look.
const afterRetrace = "; echo EXIT=$? MODE=$(stty -a | grep -o -- '-*icanon'); sleep 30"

// The interface ends on SIGTERM and on the hang-up of its terminal, at
// rest and in the middle of a task, every time: the process is gone, the
// terminal is as it was (where one is left to look at), the session's
// claim is released, so another process can write it, and a task that
// was running is recorded as interrupted.
func TestInterfaceEndsOnSignal(t *testing.T) {
	needTmux(t)
	demo := func(t *testing.T, bin, dir, db string) string {
		return fmt.Sprintf("%s %s --demo --db %s", terminalEnv(dir), bin, db) + afterRetrace
	}
	endEveryWay(t, []signalMoment{
		{"at rest", false, demo, func(t *testing.T, term *tmux, _ int) {
			term.waitFor(t, "Message retrace")
			term.send(t, "hello", "Enter")
			term.waitFor(t, "Hello! I am retrace's demo model")
			term.waitFor(t, "^S sessions")
		}},
		{"during a task", true, demo, func(t *testing.T, term *tmux, _ int) {
			term.waitFor(t, "Message retrace")
			term.send(t, "look around this project", "Enter")
			term.waitFor(t, "Approve write_file?")
		}},
	})
}

// `retrace run` ends the same ways, while the model streams, and at rest
// while it waits for its prompt on a terminal, where the read that
// blocks is deaf to a context.
func TestRunEndsOnSignal(t *testing.T) {
	needTmux(t)
	srv := llmtest.NewServer(t)
	c := llmserver.Chunker{}
	endEveryWay(t, []signalMoment{
		{"at rest", false, func(t *testing.T, bin, dir, db string) string {
			return fmt.Sprintf("%s %s run --db %s -", terminalEnv(dir), bin, db) + afterRetrace
		}, waitReadingStdin},
		{"during a task", true, func(t *testing.T, bin, dir, db string) string {
			srv.Enqueue(llmserver.Stream(c.Role(), c.Text("Once upon"), llmserver.Block()))
			return fmt.Sprintf("%s OPENAI_API_KEY= %s run --db %s --workspace %s --base-url %s --model gpt-test 'tell a story'",
				terminalEnv(dir), bin, db, dir, srv.URL()) + afterRetrace
		}, func(t *testing.T, term *tmux, _ int) { term.waitFor(t, "Once upon") }},
	})
}

// endEveryWay ends retrace at each moment in each way of signalEnds,
// signalRounds times: the hang it guards against came in 4 of 5 tries,
// so one try proves little.
func endEveryWay(t *testing.T, moments []signalMoment) {
	bin := builtBinary(t)
	for _, end := range signalEnds {
		for _, m := range moments {
			t.Run(end.name+" "+m.name, func(t *testing.T) {
				t.Parallel() // most of a round is waiting for retrace
				for i := range signalRounds {
					t.Logf("round %d", i+1)
					endRetrace(t, bin, m, end)
				}
			})
		}
	}
}

// endRetrace brings retrace in a terminal to moment m, ends it with end,
// and checks what TestInterfaceEndsOnSignal promises.
func endRetrace(t *testing.T, bin string, m signalMoment, end signalEnd) {
	t.Helper()
	dir, err := os.MkdirTemp(t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "retrace.db")
	term := newTmux(t, m.command(t, bin, dir, db))
	panes := term.panes()
	if len(panes) != 1 {
		t.Fatalf("panes: %v", panes)
	}
	pid := childOf(t, panes[0])
	m.reach(t, term, pid)
	end.end(t, term, pid)
	waitExited(t, pid)
	term.close()
	if _, err := os.Stat(db); os.IsNotExist(err) && !m.busy {
		return // waiting for its prompt, retrace had opened nothing
	}
	checkReleased(t, db, m.busy)
}

// checkReleased checks that the one session in db is claimed by no
// process, and that its task was recorded as interrupted when busy, or
// had ended otherwise.
func checkReleased(t *testing.T, db string, busy bool) {
	t.Helper()
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	list, err := st.Sessions(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions: %v %v", list, err)
	}
	id := list[0].ID
	if err := st.Claim(ctx, id); err != nil {
		t.Fatalf("the ended retrace still holds the session: %v", err)
	}
	head, err := storage.Latest(ctx, st, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := st.Tree(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	last := tree.Nodes[len(tree.Nodes)-1].Event
	switch {
	case busy && (last != state.Interrupted || head.Phase != state.Idle):
		t.Fatalf("the task that was running: last event %s, phase %s; want interrupted, idle", last, head.Phase)
	case !busy && head.Phase != state.Done:
		t.Fatalf("the session at rest ended in phase %s (last event %s)", head.Phase, last)
	}
}

// readSyscall is read(2)'s number, as /proc/PID/syscall shows it.
var readSyscall = map[string]string{"amd64": "0", "arm64": "63"}

// waitReadingStdin waits up to 20 s for a thread of process pid to block
// in a read of its standard input: a signal sent before is no test of
// that read (one sent before retrace even handles signals kills it the
// default way).
func waitReadingStdin(t *testing.T, _ *tmux, pid int) {
	t.Helper()
	nr, ok := readSyscall[runtime.GOARCH]
	if !ok {
		t.Fatalf("read(2)'s system call number on %s is not known here", runtime.GOARCH)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		threads, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/syscall", pid))
		for _, th := range threads {
			if b, err := os.ReadFile(th); err == nil && strings.HasPrefix(string(b), nr+" 0x0 ") {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("retrace (pid %d) never read its standard input", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// childOf is the one process whose parent is pid, looked for in /proc for
// up to 20 s.
func childOf(t *testing.T, pid int) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		entries, err := os.ReadDir("/proc")
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			child, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if parent, _, ok := procStat(child); ok && parent == pid {
				return child
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no child of process %d", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// procStat reads a process's parent and state (R, S, Z, ...) from
// /proc/pid/stat; ok is false when the process is gone.
func procStat(pid int) (parent int, status string, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, "", false
	}
	// After the name in parentheses: state, ppid.
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(fields) < 2 {
		return 0, "", false
	}
	parent, err = strconv.Atoi(fields[1])
	return parent, fields[0], err == nil
}

// waitExited waits up to 20 s for process pid, not a child of the test,
// to end. A zombie has ended: whoever adopted it may be slow to reap it.
func waitExited(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, status, ok := procStat(pid)
		if !ok || status == "Z" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d (state %s) still runs 20s after it was told to end", pid, status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
