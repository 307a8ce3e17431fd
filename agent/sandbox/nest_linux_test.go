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

// Where a command can reach its launcher (mode off), stopping it does not
// hang retrace: Kill wakes the launcher, and kills it when the command
// keeps stopping it, so Done is closed either way.
func TestKillEndsAStoppedLauncher(t *testing.T) {
	defer func(was time.Duration) { killGrace = was }(killGrace)
	for _, tc := range []struct {
		name, shell string
		grace       time.Duration
	}{
		// Woken, the launcher ends the command: no grace is needed.
		{"stopped once", `kill -STOP $PPID; exec sleep 300`, time.Hour},
		// The stopper stops when the launcher is gone.
		{"stopped again and again", `l=$PPID; setsid sh -c "while kill -STOP $l 2>/dev/null; do :; done" & exec sleep 300`, 500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			killGrace = tc.grace
			p, err := Start(Command{Mode: Off, Dir: t.TempDir(), Shell: tc.shell})
			if err != nil {
				t.Fatal(err)
			}
			launcher := p.cmd.Process.Pid
			t.Cleanup(func() { syscall.Kill(launcher, syscall.SIGCONT) })
			// The launcher is stopped once /proc says so.
			for deadline := time.Now().Add(10 * time.Second); !stopped(launcher); {
				if time.Now().After(deadline) {
					p.Kill()
					t.Fatal("the command did not stop its launcher within 10 s")
				}
				time.Sleep(5 * time.Millisecond)
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

// stopped reports whether process pid is stopped, as /proc/PID/stat says.
func stopped(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] == 'T'
}
