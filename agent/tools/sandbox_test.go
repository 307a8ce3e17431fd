package tools

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"retrace/agent/sandbox"
)

// sandboxed makes a registry whose workspace is proj/ws under a temp dir
// that also holds outside/secret.txt, so "cd .." and "../outside" both
// lead out of the workspace and to the secret.
func sandboxed(t *testing.T, mode sandbox.Mode) (r *Registry, root, ws string) {
	t.Helper()
	root = t.TempDir()
	writeTree(t, root, map[string]string{"outside/secret.txt": "the secret\n", "proj/ws/": ""})
	w, err := NewWorkspace(filepath.Join(root, "proj", "ws"))
	if err != nil {
		t.Fatal(err)
	}
	return New(w, Options{Sandbox: mode}), root, w.Root()
}

// TestRunCommandSandbox runs, with the default options, the commands of
// the issue that wrote and read outside the workspace, and checks that
// they fail while what a build needs still works: files in the workspace
// and in $TMPDIR, and the Go toolchain.
func TestRunCommandSandbox(t *testing.T) {
	if st := sandbox.Check(sandbox.Workspace); st.Unconfined() {
		t.Skip("skipped: no Landlock: " + st.Reason)
	}
	r, root, _ := sandboxed(t, sandbox.Workspace)
	if w := r.Sandbox().Warning(); w != "" {
		t.Fatalf("warning %q with Landlock", w)
	}
	got, err := call(t, r, "run_command", map[string]any{"command": "cd .. && echo x > escaped.txt; cat ../outside/secret.txt"})
	checkErr(t, err, "")
	if strings.Contains(got, "the secret") || strings.HasSuffix(got, "exit code: 0") {
		t.Errorf("read outside the workspace: %q", got)
	}
	if _, err := os.Stat(filepath.Join(root, "proj", "escaped.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("wrote outside the workspace: %v", err)
	}
	got, err = call(t, r, "run_command", map[string]any{"command": "echo in > inside.txt && mkdir d && mv inside.txt d/ && rm -r d && echo ok"})
	checkErr(t, err, "")
	if got != "ok\nexit code: 0" {
		t.Errorf("writing in the workspace: %q", got)
	}
	got, err = call(t, r, "run_command", map[string]any{"command": `echo "${TMPDIR:?unset}" && echo t > "$TMPDIR/t" && cat "$TMPDIR/t"`})
	checkErr(t, err, "")
	tmp, rest, _ := strings.Cut(got, "\n")
	if rest != "t\nexit code: 0" || !filepath.IsAbs(tmp) || tmp == os.TempDir() {
		t.Errorf("writing in $TMPDIR: %q", got)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the command's temp dir %s outlived it: %v", tmp, err)
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("skipped the toolchain: no go on PATH")
	}
	got, err = call(t, r, "run_command", map[string]any{"command": "go version"})
	checkErr(t, err, "")
	if !strings.HasPrefix(got, "go version go") || !strings.HasSuffix(got, "exit code: 0") {
		t.Errorf("go version: %q", got)
	}
}

// TestRunCommandSandboxOff: with the sandbox off a command may do what the
// user may, and the registry says so.
func TestRunCommandSandboxOff(t *testing.T) {
	r, root, _ := sandboxed(t, sandbox.Off)
	if w := r.Sandbox().Warning(); w != `commands run unconfined: the sandbox is off (sandbox = "off")` {
		t.Fatalf("warning %q", w)
	}
	got, err := call(t, r, "run_command", map[string]any{"command": "cd .. && echo x > escaped.txt; cat ../outside/secret.txt"})
	checkErr(t, err, "")
	if got != "the secret\nexit code: 0" || readFileT(t, filepath.Join(root, "proj", "escaped.txt")) != "x\n" {
		t.Fatalf("got %q", got)
	}
}

// TestRunCommandNoNetwork connects to a listener of the test's on
// 127.0.0.1: a command may in mode workspace and may not in mode
// workspace-no-network.
func TestRunCommandNoNetwork(t *testing.T) {
	if st := sandbox.Check(sandbox.WorkspaceNoNetwork); !st.Network {
		t.Skip("skipped: no Landlock network rules: " + st.Reason)
	}
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("skipped: no perl to connect with")
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	// perl-base, part of every Debian system, has IO::Socket::INET.
	dial := fmt.Sprintf(`perl -MIO::Socket::INET -e 'IO::Socket::INET->new(PeerAddr => "%s") or die "connect: $!\n"; print "connected\n"'`, ln.Addr())
	for _, tc := range []struct {
		mode sandbox.Mode
		want string
	}{
		{sandbox.Workspace, "connected\nexit code: 0"},
		{sandbox.WorkspaceNoNetwork, "connect: Permission denied\nexit code: 13"},
	} {
		r, _, _ := sandboxed(t, tc.mode)
		got, err := call(t, r, "run_command", map[string]any{"command": dial})
		checkErr(t, err, "")
		if got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.mode, got, tc.want)
		}
	}
}
