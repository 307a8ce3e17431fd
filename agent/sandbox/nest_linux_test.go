package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func needScoped(t *testing.T) {
	t.Helper()
	needLandlock(t)
	if st := Check(Workspace); st.ABI < abiScoped {
		t.Skipf("skipped: Landlock ABI %d cannot scope signals (ABI %d, Linux 6.12, can)", st.ABI, abiScoped)
	}
}

// The launcher's report of what a command wrote travels on a pipe the
// launcher holds; a command that could open /proc/PPID/fd/3 could write
// it a report of its own ("made" anything, a "tree" over the whole
// workspace, so that the person's own edits count as the command's and a
// rollback takes them back). Nested in a domain of its own, it cannot.
func TestCommandCannotWriteItsLaunchersReport(t *testing.T) {
	needScoped(t)
	ws := t.TempDir()
	forged := filepath.Join(ws, "forged")
	out, e := runCommand(t, Command{Mode: Workspace, Dir: ws, Shell: `ls -l /proc/$PPID/fd/ 2>&1 | head -3
printf 'tree "%s"\nmade "%s"\nwatched\nexit 0\n' "$PWD" "$PWD/forged" > /proc/$PPID/fd/3 && echo wrote the report
exit 7`})
	if strings.Contains(out, "wrote the report") || e.Code != 7 {
		t.Fatalf("the command reached its launcher's status pipe (exit %+v):\n%s", e, out)
	}
	p, err := Start(Command{Mode: Workspace, Dir: ws, Shell: `printf 'made "%s"\n' "` + forged + `" > /proc/$PPID/fd/3 2>/dev/null; :`, Output: nil})
	if err != nil {
		t.Fatal(err)
	}
	w := p.Writes()
	p.Close()
	if slices.Contains(w.Made, forged) || slices.Contains(w.Trees, ws) {
		t.Fatalf("the launcher reported what the command wrote for it: %+v", w)
	}
}

// A command cannot stop or kill its launcher: a stopped launcher would
// hang retrace, waiting for a report that never comes, and a killed one
// would leave what the command setsid'd running.
func TestCommandCannotSignalItsLauncher(t *testing.T) {
	needScoped(t)
	ws := t.TempDir()
	pidFile := filepath.Join(ws, "escapee")
	p, err := Start(Command{Mode: Workspace, Dir: ws, Shell: `setsid sh -c 'echo $$ > escapee; exec sleep 300' &
while [ ! -s escapee ]; do :; done
kill -STOP $PPID; echo stop $?; kill -KILL $PPID; echo kill $?`})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(30 * time.Second):
		p.Kill()
		t.Fatal("the command's end was not reported within 30 s: its launcher is stopped")
	}
	p.Close()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid > 0 && syscall.Kill(pid, 0) == nil {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the command's setsid child %d outlived it: its launcher was killed", pid)
	}
}

// Where a command can reach its launcher (mode off), stopping it hangs
// nothing: not Start, which waits for the launcher to say the command's
// pid, nor the end. retrace wakes a stopped launcher at once, and kills
// one the command keeps stopping when Kill's grace has passed.
func TestAStoppedLauncherHangsNothing(t *testing.T) {
	defer func(was time.Duration) { killGrace = was }(killGrace)
	for _, tc := range []struct {
		name, shell string
		grace       time.Duration
	}{
		// Woken, the launcher ends the command: no grace is needed.
		{"stopped once", `kill -STOP $PPID && echo $PPID > stopped; exec sleep 300`, time.Hour},
		// The stopper stops when the launcher is gone.
		{"stopped again and again", `l=$PPID; setsid sh -c "while kill -STOP $l 2>/dev/null; do :; done" & echo $l > stopped; exec sleep 300`, 500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			killGrace = tc.grace
			ws := t.TempDir()
			marker := filepath.Join(ws, "stopped")
			// Should the launcher stay stopped, the test ends it.
			t.Cleanup(func() {
				if b, err := os.ReadFile(marker); err == nil {
					if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); pid > 0 {
						syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			})
			started := make(chan *Process, 1)
			go func() {
				p, err := Start(Command{Mode: Off, Dir: ws, Shell: tc.shell})
				if err != nil {
					t.Error(err)
				}
				started <- p
			}()
			var p *Process
			select {
			case p = <-started:
			case <-time.After(30 * time.Second):
				t.Fatal("Start did not return within 30 s: the command stopped its launcher before it said the pid")
			}
			if p == nil {
				return
			}
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				if _, err := os.Stat(marker); err == nil {
					break
				}
				if time.Now().After(deadline) {
					p.Kill()
					t.Fatal("the command did not stop its launcher within 10 s")
				}
			}
			p.Kill()
			select {
			case <-p.Done():
			case <-time.After(30 * time.Second):
				t.Fatal("Kill did not end the command within 30 s: its launcher stays stopped")
			}
			p.Close()
		})
	}
}

// Landlock does not cover resource limits, priorities or raw sockets, so
// the filter refuses a confined command what would reach outside the
// sandbox with them: prlimit on its launcher (--nofile=1 kept the
// launcher from ending what the command left; --cpu=1 on retrace killed
// it), renice of another process, a packet socket that reads retrace's
// requests off the loopback. Its own limits and priority it may change.
func TestCommandCannotLimitOthers(t *testing.T) {
	needLandlock(t)
	ws := t.TempDir()
	script := `r=$(awk '{print $4}' /proc/$PPID/stat)
prlimit --pid $PPID --nofile=1:1 2>/dev/null && echo limited the launcher
prlimit --pid $r --cpu=100:100 2>/dev/null && echo limited retrace
renice -n 5 -p $r >/dev/null 2>&1 && echo reniced retrace
ulimit -n 100 && echo own limit
renice -n 1 -p 0 >/dev/null 2>&1 && echo own priority
nice -n 2 true && echo nice
`
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		script += `/usr/bin/python3 -c 'import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW)' 2>/dev/null && echo packet socket
/usr/bin/python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)' 2>/dev/null && echo raw socket
/usr/bin/python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_STREAM)' && echo tcp socket
`
	}
	out, _ := runCommand(t, Command{Mode: Workspace, Dir: ws, Shell: script})
	for _, bad := range []string{"limited the launcher", "limited retrace", "reniced retrace", "packet socket", "raw socket"} {
		if strings.Contains(out, bad) {
			t.Errorf("a confined command %s", bad)
		}
	}
	for _, good := range []string{"own limit", "own priority", "nice"} {
		if !strings.Contains(out, good) {
			t.Errorf("a confined command could not do this to itself: %s", good)
		}
	}
	if _, err := os.Stat("/usr/bin/python3"); err == nil && !strings.Contains(out, "tcp socket") {
		t.Errorf("a confined command could not open a TCP socket")
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}
