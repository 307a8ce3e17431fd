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
		return "", Exit{}, err
	}
	out, _ := io.ReadAll(pr)
	pr.Close()
	e := p.Exit()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	return string(out), e, nil
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

// said makes a Process whose launcher said lines on its status pipe.
func said(t *testing.T, lines string) *Process {
	t.Helper()
	sr, sw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sr.Close() })
	if _, err := sw.WriteString(lines); err != nil {
		t.Fatal(err)
	}
	sw.Close()
	return &Process{statusR: sr, status: bufio.NewReader(sr)}
}

// TestBegin reads the launcher's first word: sh's pid, or why there is no
// sh, as ErrNotConfined.
func TestBegin(t *testing.T) {
	for _, tc := range []struct {
		said string
		pid  int
		err  string
	}{
		{"pid 12\n", 12, ""},
		{"error Landlock: no such file\n", 0, "the command could not be confined and did not run: Landlock: no such file"},
		{"", 0, "the command could not be confined and did not run: the launcher ended before it started sh"},
		{"pid x\n", 0, `the command could not be confined and did not run: the launcher said "pid x"`},
	} {
		pid, err := said(t, tc.said).begin()
		if pid != tc.pid || (err == nil) != (tc.err == "") || err != nil && (err.Error() != tc.err || !errors.Is(err, ErrNotConfined)) {
			t.Errorf("%q: %d, %v", tc.said, pid, err)
		}
	}
}

// TestResult reads the launcher's last word, or takes the launcher's own
// end when it said none.
func TestResult(t *testing.T) {
	killed := exec.Command("sh", "-c", "kill -9 $$")
	_ = killed.Run()
	for _, tc := range []struct {
		said string
		want Exit
	}{
		{"exit 3\n", Exit{Code: 3}},
		{"signal 15\n", Exit{Signal: syscall.SIGTERM}},
		{"", Exit{Signal: syscall.SIGKILL}},
		{"exit\n", Exit{Signal: syscall.SIGKILL}},
	} {
		p := said(t, tc.said)
		p.collect()
		if got := p.result(killed.ProcessState); got != tc.want {
			t.Errorf("%q: %+v, want %+v", tc.said, got, tc.want)
		}
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
	// Two writers of late.txt: one in sh's group, one in a session of
	// its own that a kill of the group does not reach. The second opens
	// the file before it says it has started, and writes through the
	// descriptor, which no watch stops once the launcher is gone.
	// Its command line shows dir, by which the test kills it if it
	// fails.
	p, err := Start(Command{Dir: dir, Output: os.Stdout, Shell: "(sleep 2; echo late > late.txt) & " +
		"setsid sh -c ': " + dir + "; exec 3>>late.txt; echo started; sleep 2; echo late >&3' </dev/null & wait"})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("pgid %d\n", p.Pgid())
	_ = p.Exit()
}

// TestGroupDiesWithParent kills a process that runs a command, with
// SIGKILL, and checks that the command's whole group dies with it: the
// background process that would write late.txt after two seconds too,
// and the one that left the group with setsid.
func TestGroupDiesWithParent(t *testing.T) {
	dir := t.TempDir()
	killShowing(t, dir)
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
	// The helper's "pgid" and the command's "started" come in either
	// order.
	pgid, running := 0, false
	for lines := bufio.NewScanner(stdout); (pgid == 0 || !running) && lines.Scan(); {
		fmt.Sscanf(lines.Text(), "pgid %d", &pgid)
		running = running || lines.Text() == "started"
	}
	if pgid == 0 || !running {
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
	// well past the command's delay for the writer that left the group.
	for time.Since(started) < 4*time.Second {
		if late, err := os.ReadFile(filepath.Join(dir, "late.txt")); err == nil && len(late) > 0 {
			t.Fatal("the command's background process outlived its parent and wrote late.txt")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSweep removes the temp dirs of retrace processes that are gone and
// keeps those of live ones and everything else.
func TestSweep(t *testing.T) {
	dir := t.TempDir()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{ // name: kept
		fmt.Sprintf("%s%d-123", tmpPrefix, gone.Process.Pid): false,
		fmt.Sprintf("%s%d-123", tmpPrefix, os.Getpid()):      true,
		"other-dir": true,
		fmt.Sprintf("%s%d-file", tmpPrefix, gone.Process.Pid): true,
	}
	for name := range names {
		if strings.HasSuffix(name, "file") {
			if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Join(dir, name, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	sweep(dir)
	for name, kept := range names {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != kept {
			t.Errorf("%s: kept %v, want %v", name, err == nil, kept)
		}
	}
}
