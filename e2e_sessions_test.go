package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// needTmux skips a test that drives the built binary in tmux when there
// is none, unless RETRACE_E2E=1 demands it (as in TestEndToEndInTmux).
func needTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("RETRACE_E2E") == "1" {
			t.Fatal("RETRACE_E2E=1 but tmux is not installed (apt-get install tmux)")
		}
		t.Skip("tmux is not installed; .ci/run installs it and runs this test")
	}
}

// e2eEnv is the environment prefix that keeps a run of the binary in dir.
func e2eEnv(dir string) string {
	return fmt.Sprintf("env -u NO_COLOR TERM=xterm-256color XDG_DATA_HOME=%s XDG_CONFIG_HOME=%s XDG_CACHE_HOME=%s",
		filepath.Join(dir, "data"), filepath.Join(dir, "config"), filepath.Join(dir, "cache"))
}

// listed is what `retrace sessions` prints for db.
func listed(t *testing.T, bin, db string) string {
	t.Helper()
	out, err := exec.Command(bin, "sessions", "--db", db).CombinedOutput()
	if err != nil {
		t.Fatalf("retrace sessions: %v\n%s", err, out)
	}
	return string(out)
}

// Plain `retrace` writes no session until the first message: while it
// waits, another process lists none, and quitting before typing leaves
// none behind and no hint to resume one.
func TestEndToEndQuitBeforeTypingLeavesNoSession(t *testing.T) {
	needTmux(t)
	dir := t.TempDir()
	bin := builtBinary(t)
	db := filepath.Join(dir, "retrace.db")
	term := newTmux(t, fmt.Sprintf("%s %s --demo --db %s; echo EXIT=$?; sleep 30", e2eEnv(dir), bin, db))
	term.waitFor(t, "Message retrace")
	if out := listed(t, bin, db); !strings.Contains(out, "no sessions") {
		t.Fatalf("before its first message the new session is listed:\n%s", out)
	}
	term.send(t, "C-c")
	term.waitFor(t, "EXIT=0")
	if s := term.screen(t); strings.Contains(s, "resumes it") {
		t.Fatalf("quitting before typing offers to resume a session:\n%s", s)
	}
	if out := listed(t, bin, db); !strings.Contains(out, "no sessions") {
		t.Fatalf("quitting before typing left a session:\n%s", out)
	}
}
