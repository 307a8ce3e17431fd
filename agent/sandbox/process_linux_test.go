package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// run starts shell in dir under mode and returns its output and exit.
func run(t *testing.T, mode Mode, dir, shell string) (string, Exit, error) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start(Command{Mode: mode, Dir: dir, Shell: shell, Output: pw})
	pw.Close()
	if err != nil {
		pr.Close()
		t.Fatal(err)
	}
	out, _ := io.ReadAll(pr)
	pr.Close()
	e, err := p.Exit()
	if cerr := p.Close(); cerr != nil {
		t.Fatal(cerr)
	}
	return string(out), e, err
}

func TestStartExits(t *testing.T) {
	dir := t.TempDir()
	for _, mode := range []Mode{Workspace, Off} {
		for _, tc := range []struct {
			shell, out string
			exit       Exit
		}{
			{"echo hi; pwd", "hi\n" + dir + "\n", Exit{}},
			{"echo oops >&2; exit 3", "oops\n", Exit{Code: 3}},
			{"kill -9 $$", "", Exit{Signal: syscall.SIGKILL}},
			// A signal to the whole group is the command's: the
			// launcher ignores it while retrace lives.
			{"trap 'echo got TERM' TERM; kill 0; echo still here", "got TERM\nstill here\n", Exit{}},
		} {
			out, e, err := run(t, mode, dir, tc.shell)
			if err != nil || out != tc.out || e != tc.exit {
				t.Errorf("%v: %q: got %q %+v %v, want %q %+v", mode, tc.shell, out, e, err, tc.out, tc.exit)
			}
		}
	}
}

// TestStartTempDir: the command gets a temp dir of its own as $TMPDIR, and
// Close removes it.
func TestStartTempDir(t *testing.T) {
	out, _, err := run(t, Workspace, t.TempDir(), `echo "$TMPDIR"; echo x > "$TMPDIR/f" && cat "$TMPDIR/f"`)
	if err != nil {
		t.Fatal(err)
	}
	tmp, rest, _ := strings.Cut(out, "\n")
	if !strings.Contains(filepath.Base(tmp), "retrace-cmd-") || rest != "x\n" {
		t.Fatalf("output %q", out)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the temp dir %s is still there: %v", tmp, err)
	}
}

// launcher runs the launcher directly with a policy and returns its
// output, what it said on the status pipe and its exit code.
func launcher(t *testing.T, policy string, argv ...string) (string, string, int) {
	t.Helper()
	sr, sw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(selfExe, append([]string{launcherArg, policy}, argv...)...)
	cmd.ExtraFiles = []*os.File{sw}
	out, _ := cmd.Output()
	sw.Close()
	status, _ := io.ReadAll(sr)
	sr.Close()
	return string(out), string(status), cmd.ProcessState.ExitCode()
}

// TestLauncherRefuses: a launcher that cannot confine the command says so
// and does not run it.
func TestLauncherRefuses(t *testing.T) {
	if Check(Workspace).Unconfined() {
		t.Skip("skipped: no Landlock: " + Check(Workspace).Reason)
	}
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	for _, tc := range []struct{ policy, status string }{
		{"{not json", "error read the policy:"},
		{fmt.Sprintf(`{"parent":%d,"confine":true,"write":[%q]}`, os.Getpid(), filepath.Join(dir, "missing")), "error Landlock:"},
	} {
		out, status, code := launcher(t, tc.policy, "sh", "-c", "echo ran; touch "+ran)
		if out != "" || !strings.HasPrefix(status, tc.status) || code != exitNotConfined {
			t.Errorf("%s: out %q status %q exit %d", tc.policy, out, status, code)
		}
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the command ran although it could not be confined")
	}
}

// TestLauncherOrphan: a launcher whose parent is not the one the policy
// names (retrace died before it could catch the signal) runs nothing.
func TestLauncherOrphan(t *testing.T) {
	out, status, code := launcher(t, `{"parent":1}`, "sh", "-c", "echo ran")
	if out != "" || status != "" || code != exitOrphan {
		t.Fatalf("out %q status %q exit %d", out, status, code)
	}
}

// TestResultNotConfined: the launcher's "error" becomes ErrNotConfined.
func TestResultNotConfined(t *testing.T) {
	sr, sw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(sw, "error Landlock: no such file")
	sw.Close()
	cmd := exec.Command("sh", "-c", "exit 125")
	_ = cmd.Run()
	_, err = (&Process{status: sr}).result(cmd.ProcessState)
	if !errors.Is(err, ErrNotConfined) || err.Error() != "the command could not be confined and did not run: Landlock: no such file" {
		t.Fatalf("err %v", err)
	}
}

// The helper's environment variable: set, the test binary plays retrace,
// starts a command that leaves a background process, prints the group id
// and waits to be killed.
const helperEnv = "RETRACE_SANDBOX_TEST_PARENT"

func TestHelperParent(t *testing.T) {
	dir := os.Getenv(helperEnv)
	if dir == "" {
		t.Skip("a helper process for TestGroupDiesWithParent")
	}
	p, err := Start(Command{Dir: dir, Shell: "(sleep 2; echo late > late.txt) & echo started; wait", Output: os.Stdout})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("pgid %d\n", p.Pgid())
	p.Exit()
}

// TestGroupDiesWithParent kills a process that runs a command, with
// SIGKILL, and checks that the command's whole group dies with it: the
// background process that would write late.txt after two seconds too.
func TestGroupDiesWithParent(t *testing.T) {
	dir := t.TempDir()
	helper := exec.Command(os.Args[0], "-test.run=^TestHelperParent$", "-test.v")
	helper.Env = append(os.Environ(), helperEnv+"="+dir)
	stdout, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	defer helper.Wait()
	defer helper.Process.Kill()
	started := time.Now()
	pgid := 0
	lines := bufio.NewScanner(stdout)
	for pgid == 0 && lines.Scan() {
		fmt.Sscanf(lines.Text(), "pgid %d", &pgid)
	}
	for lines.Scan() && lines.Text() != "started" {
	}
	if pgid == 0 {
		t.Fatal("the helper did not start the command")
	}
	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	helper.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(-pgid, 0) == nil {
		if time.Now().After(deadline) {
			syscall.Kill(-pgid, syscall.SIGKILL)
			t.Fatalf("process group %d outlived its parent by 10s", pgid)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The group is gone, so nothing of it can write late.txt; look until
	// well past the command's delay all the same, in case something left
	// the group.
	for time.Since(started) < 4*time.Second {
		if _, err := os.Stat(filepath.Join(dir, "late.txt")); err == nil {
			t.Fatal("the command's background process outlived its parent and wrote late.txt")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
