package sandbox

import (
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runCommand starts c and returns its output and exit, as run does for a
// mode and a line.
func runCommand(t *testing.T, c Command) (string, Exit) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c.Output = pw
	p, err := Start(c)
	pw.Close()
	if err != nil {
		pr.Close()
		t.Fatal(err)
	}
	out, _ := io.ReadAll(pr)
	pr.Close()
	e := p.Exit()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	return string(out), e
}

func needLandlock(t *testing.T) {
	t.Helper()
	if st := Check(Workspace); st.Unconfined() {
		t.Skip("skipped: no Landlock: " + st.Reason)
	}
}

// writeFiles makes each file under base with its content, executable
// when the content starts with #!.
func writeFiles(t *testing.T, base string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(content, "#!") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
}

// A hostile repository's script overwrites every compiled package in
// its workspace's build cache (same sizes, so go takes them for sound).
// A build in another workspace is not affected: it has a cache of its
// own, which the first workspace's commands cannot write. With one cache
// shared by every workspace, the second build reads the garbage.
func TestNoBuildCacheSharedBetweenWorkspaces(t *testing.T) {
	needLandlock(t)
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("skipped: no go on PATH")
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOTOOLCHAIN", "local")
	hostile, mine := t.TempDir(), t.TempDir()
	lib := func(name string) map[string]string {
		return map[string]string{
			"go.mod": "module " + name + "\n\ngo 1.22\n",
			"lib.go": "package " + name + "\n\nimport \"unicode/utf8\"\n\nfunc Count(s string) int { return utf8.RuneCountInString(s) }\n",
		}
	}
	writeFiles(t, hostile, lib("hostile"))
	writeFiles(t, mine, lib("mine"))
	poison := `go build ./... && find "$(go env GOCACHE)" -name '*-d' -type f | while read -r f; do
  head -c "$(stat -c %s "$f")" /dev/zero > "$f.new" && mv "$f.new" "$f"
done && echo poisoned`
	out, e := runCommand(t, Command{Mode: Workspace, Dir: hostile, Shell: poison})
	if e != (Exit{}) || !strings.Contains(out, "poisoned") {
		t.Fatalf("the hostile workspace's script: %+v\n%s", e, out)
	}
	out, e = runCommand(t, Command{Mode: Workspace, Dir: mine, Shell: "go build ./... && echo built"})
	if e != (Exit{}) || !strings.Contains(out, "built") {
		t.Fatalf("a build in another workspace after the hostile one poisoned its cache: %+v\n%s", e, out)
	}
	// Nor can the hostile workspace's commands reach the other cache.
	other := workspaceCache(os.Getenv, mine)
	out, _ = runCommand(t, Command{Mode: Workspace, Dir: hostile, Shell: "echo x > '" + other + "/planted' && echo wrote"})
	if strings.Contains(out, "wrote") {
		t.Fatalf("a command in one workspace wrote another workspace's cache:\n%s", out)
	}
}

// A workspace removed and made again at the same path (another project
// cloned there) does not find the first one's cache.
func TestNoCacheOutlivesItsWorkspace(t *testing.T) {
	needLandlock(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ws := filepath.Join(t.TempDir(), "project")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	out, e := runCommand(t, Command{Mode: Workspace, Dir: ws, Shell: `mkdir -p "$GOCACHE" && echo poison > "$GOCACHE/planted" && echo planted`})
	if e != (Exit{}) || !strings.Contains(out, "planted") {
		t.Fatalf("planting: %+v\n%s", e, out)
	}
	if err := os.RemoveAll(ws); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	out, _ = runCommand(t, Command{Mode: Workspace, Dir: ws, Shell: `cat "$GOCACHE/planted" 2>/dev/null || echo clean`})
	if !strings.Contains(out, "clean") {
		t.Fatalf("a workspace made again at the same path found the cache of the one before:\n%s", out)
	}
}

// Ordinary work in the sandbox: an interpreter behind a pyenv-style shim
// and a node behind an nvm-style layout, both kept in the home
// directory; writes to the caches builds keep; a cache the configuration
// opens; git status and commit with the person's settings.
func TestOrdinaryWorkInTheSandbox(t *testing.T) {
	needLandlock(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("skipped: no git on PATH")
	}
	home, ws := t.TempDir(), t.TempDir()
	node := filepath.Join(home, ".nvm", "versions", "node", "v20.11.0")
	writeFiles(t, home, map[string]string{
		// pyenv's shims run libexec/pyenv, which runs the version's own
		// interpreter, which reads its library.
		".pyenv/shims/python3":                                          "#!/bin/sh\nexec \"$HOME/.pyenv/libexec/pyenv\" exec python3 \"$@\"\n",
		".pyenv/libexec/pyenv":                                          "#!/bin/sh\nshift\nprogram=$1; shift\nexec \"$HOME/.pyenv/versions/3.12.1/bin/$program\" \"$@\"\n",
		".pyenv/versions/3.12.1/bin/python3":                            "#!/bin/sh\ncat \"$HOME/.pyenv/versions/3.12.1/lib/python3.12/os.py\"\n",
		".pyenv/versions/3.12.1/lib/python3.12/os.py":                   "python ran\n",
		".nvm/versions/node/v20.11.0/bin/node":                          "#!/bin/sh\ncat \"$(dirname \"$0\")/../lib/node_modules/npm/package.json\"\n",
		".nvm/versions/node/v20.11.0/lib/node_modules/npm/package.json": "node ran\n",
		".gitconfig":       "[user]\n\tname = Person\n\temail = person@example.com\n[init]\n\tdefaultBranch = main\n",
		".m2/settings.xml": "<settings/>\n",
	})
	writeFiles(t, ws, map[string]string{"main.go": "package main\n"})
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("PATH", filepath.Join(home, ".pyenv", "shims")+":"+filepath.Join(node, "bin")+":"+os.Getenv("PATH"))
	script := `set -e
python3
node
mkdir -p "${XDG_CACHE_HOME:-$HOME/.cache}/pip/http" && echo wheel > "${XDG_CACHE_HOME:-$HOME/.cache}/pip/http/x" && echo pip cache written
mkdir -p "${npm_config_cache:-$HOME/.npm}" && echo tarball > "${npm_config_cache:-$HOME/.npm}/x" && echo npm cache written
mkdir -p "$HOME/.m2/repository" && echo jar > "$HOME/.m2/repository/x.jar" && echo maven repository written
git init -q . && git add main.go && git commit -qm first && git status --short && git log --format='%an %s'
`
	out, e := runCommand(t, Command{Mode: Workspace, Dir: ws, Shell: script, Reach: Reach{Write: []string{filepath.Join(home, ".m2")}}})
	for _, want := range []string{"python ran", "node ran", "pip cache written", "npm cache written", "maven repository written", "Person first"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the output", want)
		}
	}
	if e != (Exit{}) || t.Failed() {
		t.Fatalf("ordinary work: %+v\n%s", e, out)
	}
	// The person's own caches stay theirs: nothing was written there.
	for _, p := range []string{filepath.Join(home, ".cache", "pip"), filepath.Join(home, ".npm")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written: the command's cache went to the person's", p)
		}
	}
	// Without sandbox_write naming it, ~/.m2 is read only.
	out, _ = runCommand(t, Command{Mode: Workspace, Dir: ws, Shell: `cat "$HOME/.m2/settings.xml" && echo jar > "$HOME/.m2/repository/y.jar" && echo wrote`})
	if !strings.Contains(out, "<settings/>") || strings.Contains(out, "wrote") {
		t.Fatalf("~/.m2 not named in sandbox_write: read it and wrote it?\n%s", out)
	}
}

// startAgent runs an ssh-agent on a socket of its own until the test
// ends, and returns the socket.
func startAgent(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("ssh-agent"); err != nil {
		t.Skip("skipped: no ssh-agent on PATH (Debian: apt-get install openssh-client)")
	}
	sock := filepath.Join(t.TempDir(), "agent.sock")
	agent := exec.Command("ssh-agent", "-D", "-a", sock)
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = agent.Process.Kill()
		_ = agent.Wait()
	})
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			return sock
		}
		if time.Now().After(deadline) {
			t.Fatal("ssh-agent did not listen within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The SSH agent signs for whoever reaches its socket, so commands do not
// see where it is, in any mode, unless the configuration lets them; then
// they can use it, and the status says so.
func TestAgentsHiddenUnlessLetThrough(t *testing.T) {
	sock := startAgent(t)
	t.Setenv("SSH_AUTH_SOCK", sock)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/0/bus")
	t.Setenv("GPG_AGENT_INFO", "/run/user/0/gnupg/S.gpg-agent:0:1")
	// ssh-add -l: 2 when it cannot reach an agent, 1 when the agent has
	// no keys, 0 when it lists some.
	script := `echo "[$SSH_AUTH_SOCK][$DBUS_SESSION_BUS_ADDRESS][$GPG_AGENT_INFO]"; ssh-add -l >/dev/null 2>&1; echo "ssh-add $?"`
	for _, mode := range []Mode{Workspace, Off} {
		out, _ := runCommand(t, Command{Mode: mode, Dir: t.TempDir(), Shell: script})
		if !strings.Contains(out, "[][][]") || !strings.Contains(out, "ssh-add 2") {
			t.Errorf("%s: the agents reach the command:\n%s", mode, out)
		}
		out, _ = runCommand(t, Command{Mode: mode, Dir: t.TempDir(), Shell: script, Reach: Reach{Agents: true}})
		if !strings.Contains(out, "["+sock+"]") || !strings.Contains(out, "ssh-add 1") {
			t.Errorf("%s, agents let through: the command cannot use the agent:\n%s", mode, out)
		}
	}
	if w := (Status{Mode: Workspace, Files: true, ABI: 7, Agents: true}).Warning(); !strings.Contains(w, "SSH") {
		t.Errorf("with the agents let through, the warning is %q", w)
	}
	if w := (Status{Mode: Workspace, Files: true, ABI: 7}).Warning(); w != "" {
		t.Errorf("confined as asked, the warning is %q", w)
	}
}
