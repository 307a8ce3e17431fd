package sandbox

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// BenchmarkStart measures one command (sh -c true) from start to reaped:
// plain sh in a new session as run_command used to start it, then through
// the launcher in each mode. The difference is the launcher's cost per
// command: a second exec of this binary, and Landlock where it confines.
func BenchmarkStart(b *testing.B) {
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer devnull.Close()
	dir := b.TempDir()
	b.Run("sh", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command("sh", "-c", "true")
			cmd.Dir, cmd.Stdout, cmd.Stderr = dir, devnull, devnull
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, mode := range []Mode{Off, Workspace, WorkspaceNoNetwork} {
		b.Run(mode.String(), func(b *testing.B) {
			for b.Loop() {
				p, err := Start(Command{Mode: mode, Dir: dir, Shell: "true", Output: devnull})
				if err != nil {
					b.Fatal(err)
				}
				_ = p.Exit()
				if err := p.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
