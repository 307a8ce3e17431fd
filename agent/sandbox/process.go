package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"retrace/agent/fileid"
)

// Command is one shell command to run.
type Command struct {
	Mode Mode
	// Dir is the workspace: the command runs there, and it is the one
	// directory besides the temp dir that a confined command may change.
	Dir string
	// Shell is the command line, run with sh -c.
	Shell string
	// Output gets the command's stdout and stderr. Being an *os.File it
	// is handed to the command as it is, with no copying goroutine.
	Output *os.File
	// Hide names environment variables the command must not see: the
	// API key's, so that `env` cannot put the key into a tool result,
	// and so into the session.
	Hide []string
	// Reach is what the configuration adds to the mode: places closed
	// or opened, and the agents let through.
	Reach Reach
}

// environ is retrace's environment as c sees it: without the variables
// it hides and the agents' (unless Reach.Agents lets them through), with
// TMPDIR set to its private temp dir, and set's NAME=VALUE pairs in place
// of the variables they name.
func (c Command) environ(tmp string, set ...string) []string {
	set = append(set, "TMPDIR="+tmp)
	hidden := func(name string) bool {
		return slices.Contains(c.Hide, name) || (!c.Reach.Agents && slices.Contains(agentVars, name)) ||
			slices.ContainsFunc(set, func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
	}
	env := make([]string, 0, len(os.Environ())+len(set))
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !hidden(name) {
			env = append(env, kv)
		}
	}
	return append(env, set...)
}

// Exit is how a command ended.
type Exit struct {
	Code   int            // its exit code, when it exited
	Signal syscall.Signal // the signal that killed it, or 0
}

// Writes is what a command's processes were seen to change in the
// workspace, so that a change made meanwhile by anyone else (the user
// saving a file while a build runs) is not taken for the command's.
type Writes struct {
	// Watched says every system call of the command's that could change
	// a file was seen. When it is false, Why says why not, and nothing
	// can be told of who changed what.
	Watched bool
	Why     string
	// Made are the absolute paths under the workspace where its
	// processes created something (a file, directory, link or device),
	// Removed those where they removed what was there, and Trees those
	// they renamed (either name), under which everything counts as
	// written.
	Made, Removed, Trees []string
	// Opened are the paths where they wrote a file that was there
	// already (opened it for writing, truncated it, changed its mode or
	// times), with each file they found there as it was just before
	// their first call on it. A file at such a path when the command has
	// ended that is none of these, at a path they did not make or
	// rename, was put there by someone else.
	Opened map[string][]fileid.File
}

// Process is a started command. The command (sh) leads a process group
// that holds what it starts, unless it leaves the group (setsid); Kill
// reaches the group at once, and the launcher kills the rest once sh has
// ended.
type Process struct {
	cmd  *exec.Cmd // the launcher, or sh where there is none
	pgid int       // the command's process group: sh's pid
	tmp  string
	done chan struct{}
	exit Exit
	// status is the launcher's status pipe (nil where there is no
	// launcher); statusW its write end, closed once the launcher runs.
	status  *bufio.Reader
	statusR *os.File
	statusW *os.File
	// writes is what the command wrote, once it has ended; end is the
	// launcher's last word, how sh ended.
	writes Writes
	end    [2]string
	// killOnce starts Kill's watch over the launcher once.
	killOnce sync.Once
}

// Start starts c in a new session, with stdin empty, in a private temp dir
// ($TMPDIR) made for it. On Linux it runs under the launcher, which
// confines it as Check(c.Mode) says, kills its process group when retrace
// dies, however it dies, and once sh has ended kills every process the
// command started, in its group or not. Start returns once sh runs; an error
// wrapping ErrNotConfined means the sandbox could not be set up and the
// command never ran.
func Start(c Command) (*Process, error) {
	sweepOnce.Do(func() { sweep(os.TempDir()) })
	tmp, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", tmpPrefix, os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("sandbox: make the command's temp dir: %w", err)
	}
	p := &Process{tmp: tmp, done: make(chan struct{})}
	cmd, err := p.command(c, Check(c.Mode))
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	started := make(chan error, 1)
	go p.run(cmd, started)
	if err := <-started; err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("sandbox: start the command: %w", err)
	}
	return p, nil
}

// run starts cmd and reaps it. The parent-death signal that ties the
// launcher to retrace is sent when the thread that forked it ends, not
// the process; and the Go runtime ends a thread when a goroutine exits
// while locked to it. So the fork happens on a thread locked to this
// goroutine until the launcher is reaped: no other goroutine can get the
// thread and end it while the command runs.
func (p *Process) run(cmd *exec.Cmd, started chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err := cmd.Start()
	if p.statusW != nil {
		p.statusW.Close()
	}
	if err != nil {
		p.closeStatus()
		started <- err
		return
	}
	p.cmd = cmd
	go wakeStopped(cmd.Process.Pid)
	if p.pgid, err = p.begin(); err != nil {
		// The launcher has ended, or is about to, without sh.
		_ = cmd.Wait()
		p.closeStatus()
		started <- err
		return
	}
	started <- nil
	// The launcher's report may be longer than the pipe holds: it is
	// read while the launcher runs, not after.
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		p.collect()
	}()
	// Wait's error only restates the exit status, read below.
	_ = cmd.Wait()
	<-collected
	p.exit = p.result(cmd.ProcessState)
	p.closeStatus()
	close(p.done)
}

func (p *Process) closeStatus() {
	if p.statusR != nil {
		p.statusR.Close()
	}
}

// Writes says which workspace paths the command's processes changed.
// Call it once Done is closed.
func (p *Process) Writes() Writes {
	<-p.done
	return p.writes
}

// Done is closed once the command has ended and been reaped, and with it
// every process it started: the launcher says how sh ended only after
// that. Only a launcher that was killed (the command can kill it) leaves
// the command's processes running: Kill or Close ends what is left in
// its group.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exit waits for the command to end and says how it did.
func (p *Process) Exit() Exit {
	<-p.done
	return p.exit
}

// Kill kills every process in the command's group, at once and without a
// chance to linger: waiting for sh to pass a signal on would let its
// children run on. The launcher then ends what is left (see doc.go). A
// launcher the command keeps stopping (see wakeStopped) and is still not
// done after killGrace is killed, so that Done is closed whatever the
// command did, at worst leaving what it setsid'd running.
func (p *Process) Kill() {
	// ESRCH (the group is already gone) is the expected case after a
	// clean exit; nothing else can go wrong with our own child's group.
	_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	p.killOnce.Do(func() {
		grace := killGrace
		go func() {
			timer := time.NewTimer(grace)
			defer timer.Stop()
			select {
			case <-p.done:
			case <-timer.C:
				_ = p.cmd.Process.Kill()
			}
		}()
	})
}

// killGrace is how long Kill lets the launcher end what the command left
// before it kills the launcher itself.
var killGrace = 10 * time.Second

// Pgid is the command's process group id.
func (p *Process) Pgid() int { return p.pgid }

// Close kills what is left of the command's group and removes its temp
// dir. Call it once Done is closed.
func (p *Process) Close() error {
	p.Kill()
	if err := os.RemoveAll(p.tmp); err != nil {
		return fmt.Errorf("sandbox: remove the command's temp dir: %w", err)
	}
	return nil
}

// tmpPrefix starts the name of every command's temp dir, followed by the
// pid of the retrace that made it.
const tmpPrefix = "retrace-cmd-"

var sweepOnce sync.Once

// sweep removes the temp dirs in dir that commands of a retrace no longer
// running left behind: a retrace killed while its command ran cannot
// remove its temp dir, and the command, confined, cannot remove it either.
// It is done once per process, before the first command; what it cannot
// remove is left alone.
func sweep(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), tmpPrefix)
		pid, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
		if !ok || !e.IsDir() || err != nil || pid <= 0 {
			continue
		}
		if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			_ = os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// exitOf reads how a process ended from its wait status.
func exitOf(ps *os.ProcessState) Exit {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return Exit{Signal: ws.Signal()}
	}
	return Exit{Code: ps.ExitCode()}
}
