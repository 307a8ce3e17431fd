package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
)

// Exit codes of a launcher that did not get as far as the command's own.
const (
	exitNotConfined = 125 // the policy was unreadable or Landlock refused it
	exitNoStart     = 127 // sh could not be started
	exitOrphan      = 128 + int(parentGone)
)

// The launcher runs before main and before every package that imports this
// one is initialised, in any binary that links it: retrace, and the test
// binaries that run commands. So no binary can forget to install it, and
// the process that confines itself has done nothing else yet.
//
// It ends with syscall.Exit, not os.Exit: the launcher has nothing to
// flush, and a binary built with -race would otherwise wait a second at
// every exit for the race detector's report.
func init() {
	if len(os.Args) > 1 && os.Args[1] == launcherArg {
		syscall.Exit(launch(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == nestArg {
		syscall.Exit(nest(os.Args[2:]))
	}
}

// nestSelf is what the nested start needs to execute: this binary.
func nestSelf(nest bool) []string {
	if !nest {
		return nil
	}
	return []string{selfExe}
}

// nest is what the launcher starts in sh's place where Landlock can
// scope signals (ABI 6): it puts itself in a Landlock domain of its own,
// nested in the launcher's, then becomes sh. A process may signal or
// ptrace only processes in its own domain or one nested in it, so the
// command can neither stop nor kill its launcher, nor open the
// launcher's descriptors through /proc/PID/fd (where the status pipe
// would let it write the launcher's report of what it changed). The
// nested domain adds no rule of its own: the launcher's rules, which it
// inherits, still say what it may touch.
func nest(argv []string) int {
	runtime.LockOSThread()
	cfg := landlock.Config{Scoped: landlock.V11.Scoped}
	if err := cfg.BestEffort().Restrict(); err != nil {
		fmt.Fprintf(os.Stderr, "retrace: the command's own sandbox: %v\n", err)
		return exitNotConfined
	}
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "retrace: the command's own sandbox was given no command")
		return exitNoStart
	}
	path, err := exec.LookPath(argv[0])
	if err == nil {
		err = syscall.Exec(path, argv, os.Environ())
	}
	fmt.Fprintf(os.Stderr, "retrace: start %s: %v\n", argv[0], err)
	return exitNoStart
}

// launch is the launcher: args are the policy and the command's argv. It
// confines itself, which it can never undo, makes itself the subreaper of
// all the command starts, then starts the command as its child, leading a
// process group of its own, says its pid on the status pipe, and waits
// for it. When sh has ended it kills and reaps every process the command
// started, then says how sh ended.
//
// It stays, rather than exec the command, because it is what kills the
// command when it ends and when retrace dies. retrace's death sends it
// parentGone; a SIGKILL there would kill only the launcher, and its
// parent-death signal to sh only sh, leaving sh's children running with
// nobody to kill them. The group is sh's, not the launcher's, so that
// retrace can kill the command and still hear from the launcher how it
// ended. Being the subreaper, the launcher inherits every process the
// command leaves orphaned, even one that left sh's group (setsid): so it
// finds them all, below itself, and no zombie is left for init.
func launch(args []string) int {
	status := os.NewFile(statusFD, "status")
	// The command and what it starts must not hold the status pipe open:
	// retrace reads it to its end.
	syscall.CloseOnExec(statusFD)
	// Every signal is caught before anything else is done: the launcher
	// must outlive anything but SIGKILL, or the group would be left
	// without its keeper.
	signals := make(chan os.Signal, 16)
	signal.Notify(signals)
	var p policy
	if len(args) < 2 {
		fmt.Fprintf(status, "error the launcher needs a policy and a command, got %q\n", args)
		return exitNotConfined
	}
	if err := json.Unmarshal([]byte(args[0]), &p); err != nil {
		fmt.Fprintf(status, "error read the policy: %v\n", err)
		return exitNotConfined
	}
	// retrace may have died before the handler was in place, with the
	// signal ignored or lost: then its pid is no longer the parent.
	if os.Getppid() != p.Parent {
		return exitOrphan
	}
	if p.Confine {
		if err := p.restrict(); err != nil {
			fmt.Fprintf(status, "error Landlock: %v\n", err)
			return exitNotConfined
		}
	}
	if err := becomeSubreaper(); err != nil {
		fmt.Fprintf(status, "error %v\n", err)
		return exitNoStart
	}
	argv := args[1:]
	if p.Nest {
		argv = append([]string{selfExe, nestArg}, argv...)
	}
	cmd, watch, err := startChild(argv, p.Watch, p.Confine)
	if err != nil {
		fmt.Fprintf(status, "error start %s: %v\n", args[1], err)
		return exitNoStart
	}
	fmt.Fprintf(status, "pid %d\n", cmd.Process.Pid)
	if watch.w == nil {
		// supervise runs here, on the forking thread itself.
		return supervise(cmd, p.Parent, signals, status, watch, func(job func()) { job() })
	}
	// Landlock gives each of the launcher's threads a domain of its own,
	// and only this one's, the thread that forked the command, lets it
	// read the command's memory and signal its processes. So this thread
	// serves the watch and does the killing supervise asks for; the
	// launcher ends from supervise's goroutine.
	wakeR, wakeW, err := os.Pipe()
	if err != nil {
		// The command must not run unwatched when a watch was asked
		// for: it is ended with all it has started, and the error is
		// what retrace hears.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		_ = endAll()
		fmt.Fprintf(status, "error watch: %v\n", err)
		return exitNoStart
	}
	t := &forkingThread{wake: wakeW, jobs: make(chan func(), 1), done: make(chan struct{})}
	go func() {
		syscall.Exit(supervise(cmd, p.Parent, signals, status, watch, t.do))
	}()
	watch.w.serve(wakeR, t.run)
	// The listener failed: the command's watched calls now fail, and it
	// ends. This thread still does supervise's killing until then.
	for {
		t.run()
	}
}

// forkingThread runs jobs for supervise, on another goroutine, on the
// launcher's forking thread: the one thread whose Landlock domain
// reaches the command's processes. The thread waits in poll for the
// watch's notifications, so a job comes with a byte on wake to wake it.
type forkingThread struct {
	wake *os.File
	jobs chan func()
	done chan struct{}
}

// do runs job on the forking thread and returns once it has run.
func (t *forkingThread) do(job func()) {
	t.jobs <- job
	_, _ = t.wake.Write([]byte{0})
	<-t.done
}

// run runs the next job, waiting for it; the forking thread calls it.
func (t *forkingThread) run() {
	(<-t.jobs)()
	t.done <- struct{}{}
}

// startChild starts the command with the launcher's stdin, stdout and
// stderr, leading a new process group. Its parent-death signal is SIGKILL: should the launcher itself
// be killed, the command goes with it. The launcher's main goroutine is
// locked to its thread for as long as the child runs (init runs on the
// main thread, and launch never returns while the child lives), so the
// thread that forked it cannot end first.
//
// When workspace is set, the thread also gets the write filter before the
// fork (see watch), so the command and everything it starts inherit it,
// and the launcher's other threads, which serve it, do not.
func startChild(argv []string, workspace string, confined bool) (*exec.Cmd, watch, error) {
	runtime.LockOSThread()
	w := startWatch(workspace, confined)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, w, err
	}
	return cmd, w, nil
}

// supervise waits for sh to end, killing its group if retrace dies
// first. Then it has every process the command started killed and
// reaped, and only then reports what the command wrote and how sh ended
// on status: once retrace hears the end, nothing of the command is
// left, and nothing can write what the report misses. onThread runs a
// job on the forking thread, which alone may signal the command's
// processes, and returns once it has run. supervise's result is the
// launcher's exit code, for a reader that gets no status.
func supervise(cmd *exec.Cmd, parent int, signals <-chan os.Signal, status *os.File, w watch, onThread func(job func())) int {
	group := cmd.Process.Pid
	done := make(chan struct{})
	go func() {
		// Wait's error only restates the exit status, read below.
		_ = cmd.Wait()
		close(done)
	}()
	for {
		select {
		case <-done:
			// Waiting needs no particular thread, and most commands
			// leave nothing behind: the forking thread is asked to
			// kill only when some child is left, and an ordinary
			// command costs one wait4.
			var err error
			if reapEnded() {
				onThread(func() { err = endAll() })
			}
			if err != nil {
				// The command's output is where the model and the
				// user will see it.
				fmt.Fprintf(os.Stderr, "retrace: %v\n", err)
			}
			w.report(status)
			e := exitOf(cmd.ProcessState)
			if e.Signal != 0 {
				fmt.Fprintf(status, "signal %d\n", int(e.Signal))
				return 128 + int(e.Signal)
			}
			fmt.Fprintf(status, "exit %d\n", e.Code)
			return e.Code
		case <-signals:
			// Once retrace is gone the launcher has a new parent.
			// A signal that comes while retrace lives is ignored:
			// retrace ends the command by killing its group. Once
			// sh has ended, endAll kills the rest.
			if os.Getppid() != parent {
				onThread(func() { _ = syscall.Kill(-group, syscall.SIGKILL) })
			}
		}
	}
}

// restrict confines the launcher, and so everything it starts, to the
// policy. The configuration handles every access right the library knows,
// so a newer kernel confines more; BestEffort drops what this kernel
// lacks. The network is handled only when it is to be closed: a
// configuration that handles it with no rules refuses every port.
// Scoping keeps the command from signalling processes outside the sandbox
// (retrace among them) and from abstract Unix sockets outside it; from
// ABI 9 it reaches no Unix socket by path outside it either, but the
// agents' sockets it is let use.
func (p policy) restrict() error {
	cfg := landlock.Config{HandledAccessFS: landlock.V11.HandledAccessFS, Scoped: landlock.V11.Scoped}
	if p.NoNetwork {
		cfg.HandledAccessNet = landlock.V11.HandledAccessNet
	}
	write := landlock.RWDirs(p.Write...)
	if p.Refer {
		write = write.WithRefer()
	}
	return cfg.BestEffort().Restrict(
		write,
		landlock.RODirs(p.Read...).IgnoreIfMissing(),
		landlock.ROFiles(p.ReadFiles...).IgnoreIfMissing(),
		landlock.RWFiles(p.Devices...).WithIoctlDev().IgnoreIfMissing(),
		landlock.ROFiles(p.Sockets...).WithResolveUnix().IgnoreIfMissing(),
		// The nested start runs this binary again, wherever it is:
		// /proc/self/exe names it even when the file has been replaced.
		landlock.ROFiles(nestSelf(p.Nest)...),
	)
}
