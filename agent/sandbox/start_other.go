//go:build !linux

package sandbox

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// command runs sh directly: without Landlock there is nothing to confine
// with, and without a parent-death signal nothing for a launcher to do.
func (p *Process) command(c Command, _ Status) (*exec.Cmd, error) {
	cmd := exec.Command("sh", "-c", c.Shell)
	cmd.Dir = c.Dir
	cmd.Env = c.environ(p.tmp)
	cmd.Stdout, cmd.Stderr = c.Output, c.Output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd, nil
}

// begin: sh leads its own session, and so its group.
func (p *Process) begin() (int, error) { return p.cmd.Process.Pid, nil }

// result is sh's own exit.
func (p *Process) result(ps *os.ProcessState) Exit { return exitOf(ps) }

// collect: without a launcher nobody watched what the command wrote.
func (p *Process) collect() {
	p.writes = Writes{Why: "retrace cannot see which files a command writes on " + runtime.GOOS}
}

// wakeStopped: without a launcher there is none to keep running.
func wakeStopped(int) {}
