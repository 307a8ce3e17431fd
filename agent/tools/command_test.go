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
	"sync"
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
	// seq 1 1000 writes 3,893 bytes: the first 50 and the last 50 are kept.
	got, err := call(t, r, "run_command", map[string]any{"command": "seq 1 1000"})
	checkErr(t, err, "")
	want := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20" +
		"\n[… 3793 bytes of output cut …]\n" +
		"\n989\n990\n991\n992\n993\n994\n995\n996\n997\n998\n999\n1000\n" +
		"exit code: 0"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// The output cap at its edge: as many bytes as the cap are kept whole,
// one more and the middle byte goes.
func TestRunCommandOutputCapEdge(t *testing.T) {
	r, _ := newTestRegistry(t, Options{MaxOutputBytes: 10}, nil)
	for _, tc := range []struct{ out, want string }{
		{"012345678", "012345678\nexit code: 0"},
		{"0123456789", "0123456789\nexit code: 0"},
		{"0123456789A", "01234\n[… 1 byte of output cut …]\n6789A\nexit code: 0"},
	} {
		got, err := call(t, r, "run_command", map[string]any{"command": "printf " + tc.out})
		checkErr(t, err, "")
		if got != tc.want {
			t.Errorf("%d bytes: got %q, want %q", len(tc.out), got, tc.want)
		}
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
	// The shell was reaped (by the sandbox launcher, its parent) before
	// Run returned: it is gone, not even a zombie.
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
		{"one byte cut", 4, []string{"abcde"}, "ab\n[… 1 byte of output cut …]\nde"},
		// The head ends on a whole rune and the tail starts on one.
		{"head a whole rune", 4, []string{"ééé"}, "é\n[… 2 bytes of output cut …]\né"},
		// Room for less than a rune at each end: both halves are dropped
		// rather than shown as replacement characters.
		{"cap smaller than a rune", 2, []string{"ééé"}, "\n[… 6 bytes of output cut …]\n"},
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

// stallingWriter takes what the copy of a pipe gives it, but holds the
// first write until drain has stopped the copy (set the pipe's read
// deadline, or closed it): output still in the pipe then is what only
// drain's final read can save.
type stallingWriter struct {
	pr      *os.File
	stalled chan struct{}
	mu      sync.Mutex
	got     []byte
}

func (w *stallingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	first := w.got == nil
	w.got = append(w.got, p...)
	w.mu.Unlock()
	if first {
		close(w.stalled)
		rc, err := w.pr.SyscallConn()
		if err != nil {
			return 0, err
		}
		// RawConn.Read fails at once when the deadline has passed or the
		// file is closed; until then it calls f, which asks for no read.
		for rc.Read(func(uintptr) bool { return true }) == nil {
			time.Sleep(time.Millisecond)
		}
	}
	return len(p), nil
}

func (w *stallingWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.got)
}

// TestDrainKeepsWhatTheCopyLeft: output the copy had not read when the
// grace ran out is read by drain itself, not lost.
func TestDrainKeepsWhatTheCopyLeft(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	out := &stallingWriter{pr: pr, stalled: make(chan struct{})}
	drained := make(chan struct{})
	go func() {
		io.Copy(out, pr)
		close(drained)
	}()
	if _, err := pw.WriteString("first\n"); err != nil {
		t.Fatal(err)
	}
	<-out.stalled
	if _, err := pw.WriteString("second\n"); err != nil {
		t.Fatal(err)
	}
	drain(pr, out, drained, time.Millisecond)
	if got := out.String(); got != "first\nsecond\n" {
		t.Fatalf("got %q", got)
	}
}

// TestReadAvailableBound: the final read takes at most 128 KiB (an
// escaped process may write without end), all of it when there is less.
func TestReadAvailableBound(t *testing.T) {
	for _, tc := range []struct{ inPipe, want int }{
		{100 << 10, 100 << 10},
		{128 << 10, 128 << 10},
		{160 << 10, 128 << 10},
	} {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		// Room for 256 KiB, so the writes below do not block.
		if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, pw.Fd(), syscall.F_SETPIPE_SZ, 256<<10); e != 0 {
			t.Fatalf("F_SETPIPE_SZ: %v", e)
		}
		if _, err := pw.Write(bytes.Repeat([]byte("x"), tc.inPipe)); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		readAvailable(pr, &out)
		if out.Len() != tc.want {
			t.Errorf("%d bytes in the pipe: read %d, want %d", tc.inPipe, out.Len(), tc.want)
		}
		pr.Close()
		pw.Close()
	}
}

// TestReadAvailableAtEnd: a pipe whose writer has gone ends the final
// read once it is empty.
func TestReadAvailableAtEnd(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	if _, err := pw.WriteString("last words"); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	var out bytes.Buffer
	readAvailable(pr, &out)
	if out.String() != "last words" {
		t.Fatalf("got %q", out.String())
	}
}
