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
