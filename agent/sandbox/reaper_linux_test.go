package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// eachLauncher runs test under each way the launcher can run a command:
// confined or not (mode off), and watched, where a goroutine supervises
// sh and the forking thread serves the watch, or unwatched, where the
// forking thread supervises sh itself.
func eachLauncher(t *testing.T, test func(t *testing.T, mode Mode)) {
	for _, mode := range []Mode{Workspace, Off} {
		for _, watched := range []bool{true, false} {
			name := mode.String() + "/watched"
			if !watched {
				name = mode.String() + "/unwatched"
			}
			t.Run(name, func(t *testing.T) {
				defer func(was bool) { watchWrites = was }(watchWrites)
				watchWrites = watched
				test(t, mode)
			})
		}
	}
}

var marks atomic.Int64

// marked is a word for a test's command to put in the scripts of the
// processes it means to leave behind, so that they show it in their
// command lines: see killShowing.
func marked(t testing.TB) string {
	t.Helper()
	mark := fmt.Sprintf("reaper-test-%d-%d", os.Getpid(), marks.Add(1))
	killShowing(t, mark)
	return mark
}

// killShowing kills every process whose command line shows mark when
// the test ends, passed or failed: a test that fails leaves nothing
// running.
func killShowing(t testing.TB, mark string) {
	t.Cleanup(func() {
		deadline := time.Now().Add(10 * time.Second)
		for left := showing(mark); len(left) > 0; left = showing(mark) {
			if time.Now().After(deadline) {
				t.Errorf("processes %v showing %s outlived the test", left, mark)
				return
			}
			for _, pid := range left {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			// A process killed a moment ago may still show its
			// command line until it has died.
			time.Sleep(5 * time.Millisecond)
		}
	})
}

// showing lists the processes whose command lines hold mark. A zombie
// has none: it shows nothing.
func showing(mark string) []int {
	names, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		return nil
	}
	var pids []int
	for _, name := range names {
		line, err := os.ReadFile(name)
		if err != nil || !bytes.Contains(line, []byte(mark)) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(name))); err == nil && pid != os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}

// leftPid reads the pid the command wrote to the file pid in ws: the
// process it means to leave behind.
func leftPid(t *testing.T, ws string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("the command wrote %q as the pid", b)
	}
	return pid
}

// gone fails the test when process pid is still there once its command
// has ended, even as a zombie: the launcher reaps what it kills before
// it says how sh ended, so nothing is left to wait for.
func gone(t *testing.T, pid int) {
	t.Helper()
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		t.Errorf("process %d outlived its command: %s", pid, bytes.TrimSpace(stat))
	}
}

// leaver is a script that sh leaves running: it says its pid on the FIFO
// started, then appends to f in the workspace for as long as it lives.
// mark is in its command line.
func leaver(mark string) string {
	return `sh -c ': ` + mark + `; echo $$ > started; while :; do date >> f; sleep 0.2; done' </dev/null >/dev/null 2>&1`
}

// What leaves sh's group is killed and reaped all the same before the
// command is said to have ended: a setsid child, which leads a session
// and a process group of its own, out of reach of a kill of sh's group;
// and a daemon that double-forks, so that its parent has exited before
// sh does and it is nobody's child in the command's tree (it is the
// launcher's, the subreaper of all the command starts).
func TestReaperEndsWhatLeftTheGroup(t *testing.T) {
	for name, start := range map[string]string{
		"setsid child": "setsid %s &",
		"daemon":       "( setsid %s & ) &",
	} {
		t.Run(name, func(t *testing.T) {
			eachLauncher(t, func(t *testing.T, mode Mode) {
				ws := realDir(t)
				p := startIn(t, mode, ws, "mkfifo started\n"+fmt.Sprintf(start, leaver(marked(t)))+"\nread pid < started && echo $pid > pid")
				if e := p.Exit(); e != (Exit{}) {
					t.Fatalf("the command ended %+v", e)
				}
				gone(t, leftPid(t, ws))
			})
		})
	}
}

// A command killed from retrace's side, as a timeout or an interruption
// kills it, takes its setsid child with it.
func TestReaperEndsSetsidChildOfKilledCommand(t *testing.T) {
	eachLauncher(t, func(t *testing.T, mode Mode) {
		ws := realDir(t)
		ready := filepath.Join(ws, "ready")
		if err := syscall.Mkfifo(ready, 0o600); err != nil {
			t.Fatal(err)
		}
		// sh waits for its child, which never ends.
		p := startIn(t, mode, ws, `mkfifo started
setsid `+leaver(marked(t))+` &
read pid < started && echo $pid > pid && cat ready >/dev/null && wait`)
		release(t, p, ready)
		p.Kill()
		if e := p.Exit(); e != (Exit{Signal: syscall.SIGKILL}) {
			t.Fatalf("the command ended %+v, want killed", e)
		}
		gone(t, leftPid(t, ws))
	})
}

// A process that keeps starting setsid children while the launcher is
// killing them all does not outrun it: a killed process starts no more,
// and the launcher looks again until it finds none it has not killed.
func TestReaperEndsAForker(t *testing.T) {
	eachLauncher(t, func(t *testing.T, mode Mode) {
		ws := realDir(t)
		mark := marked(t)
		// The forker stops after a few hundred children, so that a
		// launcher that lets it run cannot fill the machine.
		p := startIn(t, mode, ws, `mkfifo started
setsid sh -c ': `+mark+`; echo $$ > started; i=0; while [ $i -lt 300 ]; do
	setsid sh -c ": `+mark+`; while :; do sleep 1; done" </dev/null >/dev/null 2>&1 &
	i=$((i+1))
done; wait' </dev/null >/dev/null 2>&1 &
read pid < started && echo $pid > pid`)
		if e := p.Exit(); e != (Exit{}) {
			t.Fatalf("the command ended %+v", e)
		}
		gone(t, leftPid(t, ws))
		if left := showing(mark); len(left) > 0 {
			t.Errorf("%d processes the forker started outlived the command", len(left))
		}
	})
}

// A stat line is read from the command name's last ')': a name may hold
// spaces and parentheses, and one that looks like the fields after it
// must not be taken for them.
func TestParseStat(t *testing.T) {
	const rest = " 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 424242 19 20 21\n"
	for _, tc := range []struct {
		stat   string
		parent int
		state  byte
		start  uint64
		ok     bool
	}{
		{"812 (sh) S 77" + rest, 77, 'S', 424242, true},
		{"812 (a) Z 99 x) R 77" + rest, 77, 'R', 424242, true},
		{"812 (two words) Z 77" + rest, 77, 'Z', 424242, true},
		{"812 (sh) S 77 1 2\n", 0, 0, 0, false},
		{"812 sh S 77" + rest, 0, 0, 0, false},
		{"812 (sh) SS 77" + rest, 0, 0, 0, false},
		{"812 (sh) S x" + rest, 0, 0, 0, false},
	} {
		parent, state, start, ok := parseStat([]byte(tc.stat))
		if parent != tc.parent || state != tc.state || start != tc.start || ok != tc.ok {
			t.Errorf("%q: %d %q %d %v, want %d %q %d %v", tc.stat, parent, state, start, ok, tc.parent, tc.state, tc.start, tc.ok)
		}
	}
}
