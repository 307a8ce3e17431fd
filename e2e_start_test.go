package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The first screen, as `go run . --demo` shows it: the welcome names the
// demo model and the way back as `go run .` (the binary is in a go-build
// directory, as go run leaves it), an unknown config setting is a notice
// and a warning on stderr, not a refusal; the first message takes the
// welcome away, and the farewell names `go run . -r ID`.
func TestFirstScreenInTmux(t *testing.T) {
	needTmux(t)
	dir := t.TempDir()
	exe := filepath.Join(dir, "go-build4242", "b001", "exe", "retrace")
	if err := os.MkdirAll(filepath.Dir(exe), 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(builtBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, b, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "config", "retrace"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config", "retrace", "config.toml"), []byte("modle = \"x\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	term := newTmux(t, fmt.Sprintf("%s %s --demo --db %s; echo EXIT=$?; sleep 30", terminalEnv(dir), exe, filepath.Join(dir, "retrace.db")))
	term.waitFor(t, "go run . -r ID")
	screen := term.screen(t)
	for _, want := range []string{"demo model", "demo-workspace", "Ctrl+S", `config: ignored unknown "modle"`} {
		if !strings.Contains(screen, want) {
			t.Fatalf("the first screen lacks %q:\n%s", want, screen)
		}
	}
	term.send(t, "hello", "Enter")
	term.waitFor(t, "Hello! I am retrace's demo model")
	if screen := term.screen(t); strings.Contains(screen, "go run . -r ID") {
		t.Fatalf("the welcome outlived the first message:\n%s", screen)
	}
	term.waitFor(t, "^S sessions")
	term.send(t, "C-c")
	term.waitFor(t, "EXIT=0")
	screen = term.screen(t)
	if !regexp.MustCompile(`resume it with: go run \. -r [0-9a-f]{8}\n`).MatchString(screen) {
		t.Fatalf("the farewell names no go run command:\n%s", screen)
	}
	if !strings.Contains(screen, `warning: config `) {
		t.Fatalf("the warning about the config file is not on the terminal:\n%s", screen)
	}
}

// `retrace PROMPT` starts a session and sends PROMPT at once, flags after
// it or not; the farewell names the binary as it was run.
func TestPromptArgumentInTmux(t *testing.T) {
	needTmux(t)
	dir := t.TempDir()
	bin := builtBinary(t)
	term := newTmux(t, fmt.Sprintf("%s %s hello there --demo --db %s; echo EXIT=$?; sleep 30", terminalEnv(dir), bin, filepath.Join(dir, "retrace.db")))
	term.waitFor(t, "Hello! I am retrace's demo model")
	term.waitFor(t, "hello there")
	term.waitFor(t, "^S sessions")
	term.send(t, "C-c")
	term.waitFor(t, "EXIT=0")
	if screen := term.screen(t); !strings.Contains(screen, "resume it with: "+bin+" -r ") {
		t.Fatalf("the farewell does not name %s:\n%s", bin, screen)
	}
}
