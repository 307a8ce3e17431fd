package main

import (
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"retrace/agent/llmserver"
	"retrace/agent/llmtest"
)

// The secrets the end-to-end test gives retrace: the key on the command
// line, the key's variable, and a variable whose name says it is a
// secret, which commands are meant to see.
const (
	flagKey  = "sk-FLAG-secret-1111111111"
	envKey   = "sk-ENV-secret-2222222222"
	envToken = "tok-ENV-secret-3333333333"
)

// readRetrace is the command the model asks for: it finds retrace's pid
// (sh's parent is the sandbox launcher, whose parent is retrace) and
// writes what /proc shows it of retrace's command line and environment,
// and the token it inherited, to proc.txt in the workspace. The test
// reads that file, not the command's output: retrace scrubs the key it
// uses from a command's output, which a command could get around.
const readRetrace = `p=$(awk '{print $4}' /proc/$PPID/stat)
{
echo "pid=$p"
echo "cmdline=$(tr '\0' ' ' < /proc/$p/cmdline)"
if e=$(tr '\0' ' ' < /proc/$p/environ); then echo "environ=$e"; echo "environ read"; else echo "environ denied"; fi
if (: < /proc/$p/mem); then echo "mem opened"; else echo "mem denied"; fi
echo "token=$RETRACE_TEST_TOKEN"
} > proc.txt 2>&1`

// A command cannot find a secret in retrace's own /proc files. The
// command line is readable by anyone, and with the sandbox off the
// environment and memory are readable by root; the command line shows
// that --api-key was given but not the key, and the environment holds
// neither the key's variable nor one named as a secret. As the same user
// with the sandbox off, the environment and the memory are refused, as
// retrace makes itself undumpable. (In the sandbox Landlock decides
// what may be read; the secrets are not there either way.) The key still
// reaches the server, and the variables still reach commands: nothing
// was lost on the way.
func TestCommandsCannotReadTheKeyInRetracesProcFiles(t *testing.T) {
	for _, mode := range []string{"workspace", "off"} {
		for _, nobody := range []bool{false, true} {
			name := mode + "/as-caller"
			if nobody {
				name = mode + "/as-nobody"
			}
			t.Run(name, func(t *testing.T) {
				if nobody && os.Geteuid() != 0 {
					t.Skip("running retrace as nobody needs root")
				}
				pid, result := readRetracesProc(t, mode, nobody)
				checkProcShowsNoSecret(t, pid, result, mode, !nobody && os.Geteuid() == 0)
			})
		}
	}
}

// readRetracesProc runs `retrace run` in sandbox mode, as nobody or as
// the caller, with the key on the command line and secrets in the
// environment, its model asking for readRetrace. It returns retrace's
// pid and what the command wrote.
func readRetracesProc(t *testing.T, mode string, nobody bool) (int, string) {
	t.Helper()
	dir := t.TempDir()
	bin := builtBinary(t)
	if nobody {
		// nobody can reach none of root's temporary directories: it
		// gets its own, with a copy of the binary in it.
		for _, d := range []string{filepath.Dir(dir), dir} {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		bin = copyExecutable(t, bin, filepath.Join(dir, "retrace"))
	}
	home, ws, data := filepath.Join(dir, "home"), filepath.Join(dir, "ws"), filepath.Join(dir, "data")
	for _, d := range []string{home, ws, data} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	config := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(config, []byte("sandbox = \""+mode+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if nobody {
		chownTree(t, dir, 65534, 65534)
	}

	srv := llmtest.NewServer(t)
	srv.Enqueue(llmserver.ToolCallReply([]llmserver.Call{{ID: "call_proc", Name: "run_command", Args: jsonArgs(t, readRetrace)}}),
		llmserver.TextReply("Done."))
	c := testCommand(t, bin, "run", "--db", filepath.Join(data, "retrace.db"), "--workspace", ws, "--config", config,
		"--base-url", srv.URL(), "--model", "gpt-test", "--yes", "--api-key", flagKey, "read retrace's /proc files")
	c.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"OPENAI_API_KEY=" + envKey, "RETRACE_TEST_TOKEN=" + envToken, "RETRACE_TEST_VISIBLE=yes",
	}
	if run := os.Getenv("RETRACE_CI_RUN"); run != "" {
		c.Env = append(c.Env, "RETRACE_CI_RUN="+run) // so the CI finds what it leaves behind
	}
	if nobody {
		c.SysProcAttr.Credential = &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}
	}
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("retrace run: %v\n%s", err, out)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer "+flagKey {
		t.Errorf("the server got Authorization %q, want the key given with --api-key", got)
	}
	if got := toolResult(t, reqs[1], "call_proc"); !strings.Contains(got, "exit code: 0") {
		t.Fatalf("the command failed:\n%s", got)
	}
	b, err := os.ReadFile(filepath.Join(ws, "proc.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid, string(b)
}

// checkProcShowsNoSecret checks what readRetrace wrote of retrace's
// /proc files, pid's, in sandbox mode; root says whether the command ran
// as root.
func checkProcShowsNoSecret(t *testing.T, pid int, result, mode string, root bool) {
	// The reads happened, of retrace's own files: otherwise the test
	// would pass for a read that failed.
	if !strings.Contains(result, "pid="+strconv.Itoa(pid)+"\n") {
		t.Fatalf("the command did not find retrace's pid %d:\n%s", pid, result)
	}
	if !strings.Contains(result, " run --db ") {
		t.Fatalf("the command did not read retrace's command line:\n%s", result)
	}
	if !strings.Contains(result, " --api-key "+hiddenValue+" ") {
		t.Errorf("the command line should show that --api-key was given, its value hidden:\n%s", result)
	}
	if mode == "off" {
		for _, want := range map[bool][]string{true: {"environ read", "mem opened"}, false: {"environ denied", "mem denied"}}[root] {
			if !strings.Contains(result, want) {
				t.Errorf("want %q: with the sandbox off root, and only root, may read retrace's environment and memory:\n%s", want, result)
			}
		}
	}
	for _, s := range []string{flagKey, envKey} {
		if strings.Contains(result, s) {
			t.Errorf("the command found the secret %q in retrace's /proc files:\n%s", s, result)
		}
	}
	// The token reaches the command through its own environment, once,
	// and never through retrace's.
	if !strings.Contains(result, "token="+envToken) || strings.Count(result, envToken) != 1 {
		t.Errorf("the token should show once, as the command's own:\n%s", result)
	}
}

// Where retrace cannot run itself again (here without /proc, in a mount
// namespace of its own), it goes on as it was, and says in one line that
// the key stays readable.
func TestRetraceGoesOnWhenItCannotHideTheKey(t *testing.T) {
	unshare, err := exec.LookPath("unshare")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and unshare, to run retrace without /proc")
	}
	db := filepath.Join(t.TempDir(), "retrace.db")
	c := testCommand(t, unshare, "--mount", "--propagation", "private", "sh", "-c", `umount -l /proc && exec "$0" "$@"`,
		builtBinary(t), "sessions", "--db", db)
	c.Env = append(os.Environ(), "OPENAI_API_KEY="+envKey, "XDG_CONFIG_HOME="+t.TempDir())
	var stdout, stderr strings.Builder
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "warning: the API key stays readable") || !strings.Contains(stdout.String(), "no sessions") {
		t.Fatalf("stdout %q\nstderr %q", stdout.String(), stderr.String())
	}
}

// jsonArgs is run_command's arguments for a shell command.
func jsonArgs(t *testing.T, command string) string {
	t.Helper()
	b, err := json.Marshal(map[string]string{"command": command})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// copyExecutable copies the binary at from to to, executable by anyone.
func copyExecutable(t *testing.T, from, to string) string {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return to
}

// chownTree gives everything under dir, dir included, to uid and gid.
func chownTree(t *testing.T, dir string, uid, gid int) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, gid)
	})
	if err != nil {
		t.Fatal(err)
	}
}
