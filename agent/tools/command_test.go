package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRunCommand(t *testing.T) {
	r, root := newTestRegistry(t, Options{MaxCommandTimeout: time.Minute}, map[string]string{"f.txt": "content\n"})
	for _, tc := range []struct {
		name    string
		args    map[string]any
		want    string
		err     string
		errKind error
	}{
		{"output and exit code", map[string]any{"command": "echo hi"}, "hi\nexit code: 0", "", nil},
		{"non-zero exit is a result", map[string]any{"command": "echo oops >&2; exit 3"}, "oops\nexit code: 3", "", nil},
		{"no output", map[string]any{"command": "true"}, "(no output)\nexit code: 0", "", nil},
		{"interleaved as produced", map[string]any{"command": "echo a; echo b >&2; echo c; echo d >&2"}, "a\nb\nc\nd\nexit code: 0", "", nil},
		{"runs in the root", map[string]any{"command": "pwd; cat f.txt"}, root + "\ncontent\nexit code: 0", "", nil},
		{"stdin is empty", map[string]any{"command": "cat; echo done"}, "done\nexit code: 0", "", nil},
		{"no final newline", map[string]any{"command": "printf partial"}, "partial\nexit code: 0", "", nil},
		{"invalid utf-8", map[string]any{"command": `printf 'a\377b\n'`}, "a\uFFFDb\nexit code: 0", "", nil},
		{"killed by a signal", map[string]any{"command": "kill -9 $$"}, "(no output)\nkilled by signal 9 (killed)", "", nil},
		{"no terminal to prompt on", map[string]any{"command": "(: </dev/tty) 2>/dev/null || echo none"}, "none\nexit code: 0", "", nil},
		{"timeout", map[string]any{"command": "sleep 30", "timeout_seconds": 0.05},
			"(no output)\nkilled: timed out after 50ms", "", nil},
		// A second is ample for the shell to print before the kill, even on
		// a loaded machine; 50 ms was not always.
		{"timeout keeps the output so far", map[string]any{"command": "echo started; sleep 30", "timeout_seconds": 1},
			"started\nkilled: timed out after 1s", "", nil},
		{"timeout over the limit is capped", map[string]any{"command": "echo hi", "timeout_seconds": 9999},
			"hi\n[timeout_seconds 9999 is over the limit; used 1m0s]\nexit code: 0", "", nil},
		{"empty command", map[string]any{"command": ""}, "", "command must not be empty", ErrInvalidArguments},
		{"zero timeout", map[string]any{"command": "true", "timeout_seconds": 0}, "", "timeout_seconds must be a positive number", ErrInvalidArguments},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := call(t, r, "run_command", tc.args)
			checkErr(t, err, tc.err)
			if tc.errKind != nil && !errors.Is(err, tc.errKind) {
				t.Fatalf("error %v is not %v", err, tc.errKind)
			}
			if got != tc.want {
				t.Fatalf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestRunCommandOutputCap(t *testing.T) {
	r, _ := newTestRegistry(t, Options{MaxOutputBytes: 100}, nil)
	var full strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&full, "%d\n", i)
	}
	all := full.String()
	got, err := call(t, r, "run_command", map[string]any{"command": "seq 1 1000"})
	checkErr(t, err, "")
	want := all[:50] + fmt.Sprintf("\n[… %d bytes of output cut …]\n", len(all)-100) + all[len(all)-50:] + "exit code: 0"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// TestRunCommandInterrupt cancels a command that started a background
// process and checks that Run fails as interrupted and that both the
// shell and its child are dead once it returns. The command reports its
// pids through a FIFO, so the test knows it is running without sleeping.
func TestRunCommandInterrupt(t *testing.T) {
	r, root := newTestRegistry(t, Options{}, nil)
	fifo := filepath.Join(root, "ready")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := r.Run(ctx, "run_command", `{"command":"echo before; sleep 30 & echo $$ $! > ready; wait"}`)
		done <- result{out, err}
	}()
	shPid, bgPid := readPids(t, fifo)
	cancel()
	res := <-done
	if !errors.Is(res.err, ErrInterrupted) || !errors.Is(res.err, context.Canceled) {
		t.Fatalf("err = %v, want ErrInterrupted and context.Canceled", res.err)
	}
	if want := "run_command interrupted, its process group killed: context canceled"; res.err.Error() != want {
		t.Fatalf("err = %q, want %q", res.err, want)
	}
	if res.out != "before\nkilled: interrupted" {
		t.Fatalf("out = %q", res.out)
	}
	// Run reaped the shell itself: it is gone, not even a zombie.
	if err := syscall.Kill(shPid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("shell %d: kill(0) = %v, want ESRCH", shPid, err)
	}
	waitGone(t, bgPid)
}

func TestRunCommandAlreadyCancelled(t *testing.T) {
	r, root := newTestRegistry(t, Options{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := r.Run(ctx, "run_command", `{"command":"touch ran"}`)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "ran")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the command ran")
	}
}

func TestRunCommandKillsLeftovers(t *testing.T) {
	r, root := newTestRegistry(t, Options{}, nil)
	got, err := call(t, r, "run_command", map[string]any{"command": "sleep 30 & echo $! > bg.pid; echo started"})
	checkErr(t, err, "")
	if got != "started\nexit code: 0" {
		t.Fatalf("got %q", got)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(readFileT(t, filepath.Join(root, "bg.pid"))))
	if err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
}

// TestRunCommandEscapedProcess checks that a process that left the group
// while holding the output pipe does not keep Run waiting for its end.
func TestRunCommandEscapedProcess(t *testing.T) {
	r, root := newTestRegistry(t, Options{}, nil)
	// The shell waits until the escapee has its own session (it writes
	// its pid only then), so the group kill cannot catch it first.
	cmd := `setsid sh -c 'echo $$ > esc.pid; exec sleep 30' & while [ ! -s esc.pid ]; do :; done; echo started`
	got, err := call(t, r, "run_command", map[string]any{"command": cmd})
	if b, rerr := os.ReadFile(filepath.Join(root, "esc.pid")); rerr == nil {
		if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); pid > 0 {
			defer syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	checkErr(t, err, "")
	if got != "started\nexit code: 0" {
		t.Fatalf("got %q", got)
	}
}

// readPids reads "shellpid childpid" from the FIFO; the open blocks until
// the command writes.
func readPids(t *testing.T, fifo string) (int, int) {
	t.Helper()
	f, err := os.Open(fifo)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	var a, b int
	if _, err := fmt.Sscan(line, &a, &b); err != nil {
		t.Fatalf("pids %q: %v", line, err)
	}
	return a, b
}

// waitGone fails unless the process pid is dead. A SIGKILLed process
// closes its files (which is what let Run return) a moment before it
// becomes a zombie for its new parent to reap, so this looks again until
// it is gone or a zombie, for far less time than the sleep it was running.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !dead(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d is still running", pid)
		}
		time.Sleep(time.Millisecond)
	}
}

// dead reports whether pid is gone or a zombie.
func dead(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the command name, which is in parentheses.
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X')
}

func TestHeadTail(t *testing.T) {
	for _, tc := range []struct {
		name   string
		max    int
		writes []string
		want   string
	}{
		{"fits", 10, []string{"abc", "def"}, "abcdef"},
		{"exactly full", 6, []string{"abc", "def"}, "abcdef"},
		{"cut middle", 6, []string{"0123456789"}, "012\n[… 4 bytes of output cut …]\n789"},
		{"cut across writes", 4, []string{"ab", "cd", "ef", "gh", "ij"}, "ab\n[… 6 bytes of output cut …]\nij"},
		{"runes not split", 6, []string{"ééééé"}, "é\n[… 6 bytes of output cut …]\né"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHeadTail(tc.max)
			for _, w := range tc.writes {
				if n, err := h.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if got := h.String(); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestDrainPipeHeldOpen plays a process that escaped the group: it keeps
// the write end open, so the pipe never ends. drain must return anyway,
// with what was written.
func TestDrainPipeHeldOpen(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	if _, err := pw.WriteString("early\n"); err != nil {
		t.Fatal(err)
	}
	out := newHeadTail(1 << 10)
	drained := make(chan struct{})
	go func() {
		io.Copy(out, pr)
		close(drained)
	}()
	drain(pr, out, drained, time.Millisecond)
	if got := out.String(); got != "early\n" {
		t.Fatalf("got %q", got)
	}
}

// TestReadAvailable checks the final read takes what the pipe holds and
// does not wait for more while a writer keeps it open.
func TestReadAvailable(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	if _, err := pw.WriteString("buffered"); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	readAvailable(pr, &out)
	if out.String() != "buffered" {
		t.Fatalf("got %q", out.String())
	}
}
