package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"syscall"
	"time"

	"retrace/agent/sandbox"
)

const (
	// interruptGrace is how long an interrupted command's output may take
	// to drain once its process group is dead. Run must return promptly.
	interruptGrace = 20 * time.Millisecond
	// exitGrace is the same for a command that ended by itself or timed
	// out. It only matters when a process escaped the group (setsid) and
	// still holds the output pipe; the output is not waited for past it.
	exitGrace = 100 * time.Millisecond
	// maxFinalRead bounds what is read from the pipe once the grace is
	// over: twice the usual pipe capacity.
	maxFinalRead = 128 << 10
)

// commandArgs are run_command's arguments.
type commandArgs struct {
	Command        string   `json:"command"`
	TimeoutSeconds *float64 `json:"timeout_seconds"`
}

// runCommand is run_command. The command runs in the sandbox (Options'
// Sandbox mode), in a new session, so it has no controlling terminal to
// steal from the TUI (a prompt fails at once instead of stopping the
// command), and in a process group of its own: a single kill reaches
// everything it started. That kill is also how it ends: once sh exits, by
// timeout or by interruption, whatever it left running is killed, so
// nothing outlives the call; and the sandbox kills the group if retrace
// dies first.
func (r *Registry) runCommand(ctx context.Context, a *commandArgs) (string, error) {
	if a.Command == "" {
		return "", invalidArgs("run_command", errors.New("command must not be empty"))
	}
	timeout, note, err := r.commandTimeout(a.TimeoutSeconds)
	if err != nil {
		return "", invalidArgs("run_command", err)
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("run_command %w before it started: %w", ErrInterrupted, context.Cause(ctx))
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return "", fmt.Errorf("run_command: create pipe: %w", err)
	}
	// One pipe for both streams keeps them interleaved as written, and
	// being an *os.File it goes to the child as is, with no copying
	// goroutine for Wait to wait on.
	proc, err := sandbox.Start(sandbox.Command{Mode: r.opts.Sandbox, Dir: r.ws.Root(), Shell: a.Command, Output: pw, Hide: r.opts.HideEnv, Reach: r.opts.Reach})
	pw.Close()
	if err != nil {
		pr.Close()
		return "", fmt.Errorf("run_command: %w", err)
	}
	out := newHeadTail(r.opts.MaxOutputBytes)
	drained := make(chan struct{})
	go func() {
		io.Copy(out, pr)
		close(drained)
	}()
	status, interrupted := waitCommand(ctx, proc, timeout)
	proc.Kill()
	recordWrites(ctx, proc)
	grace := exitGrace
	if interrupted {
		grace = interruptGrace
	}
	drain(pr, out, drained, grace)
	if err := proc.Close(); err != nil {
		note += fmt.Sprintf("[%v]\n", err)
	}
	res := out.String()
	if res == "" {
		res = "(no output)"
	}
	res = ensureNewline(res) + note + status
	if interrupted {
		return res, fmt.Errorf("run_command %w, its process group killed: %w", ErrInterrupted, context.Cause(ctx))
	}
	return res, nil
}

// waitCommand waits for the command to exit, to time out or to be
// interrupted, and says how it ended in the line that closes the result.
func waitCommand(ctx context.Context, proc *sandbox.Process, timeout time.Duration) (status string, interrupted bool) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-proc.Done():
		return exitStatus(proc.Exit()), false
	case <-timer.C:
		proc.Kill()
		<-proc.Done()
		return fmt.Sprintf("killed: timed out after %s", timeout), false
	case <-ctx.Done():
		proc.Kill()
		<-proc.Done()
		return "killed: interrupted", true
	}
}

// drain waits up to grace for the copy of the output pipe to reach its
// end. Past that, a process outside the group holds the pipe open: the
// copy is stopped and what is already in the pipe is read here without
// waiting for more. So output written before the kill is never lost to a
// goroutine that was slow to run, and no process can keep Run waiting.
func drain(pr *os.File, out io.Writer, drained <-chan struct{}, grace time.Duration) {
	defer pr.Close()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-drained:
		return
	case <-timer.C:
	}
	// An expired deadline stops the copy before its next read, leaving
	// unread data in the pipe rather than dropping it.
	if err := pr.SetReadDeadline(time.Now()); err != nil {
		pr.Close()
		<-drained
		return
	}
	<-drained
	readAvailable(pr, out)
}

// readAvailable copies what the pipe holds now, up to maxFinalRead bytes
// (an escaped process may write without end), without blocking.
func readAvailable(pr *os.File, out io.Writer) {
	rc, err := pr.SyscallConn()
	if err != nil || pr.SetReadDeadline(time.Time{}) != nil {
		return
	}
	buf := make([]byte, 32<<10)
	rc.Read(func(fd uintptr) bool {
		for total := 0; total < maxFinalRead; {
			// The pipe is non-blocking: os.Pipe made it so for the
			// poller. EAGAIN (nothing left) and EOF both end the loop.
			n, err := syscall.Read(int(fd), buf)
			if n <= 0 || err != nil {
				break
			}
			out.Write(buf[:n])
			total += n
		}
		return true
	})
}

// exitStatus is the last line of a finished command's result.
func exitStatus(e sandbox.Exit) string {
	if e.Signal != 0 {
		return fmt.Sprintf("killed by signal %d (%s)", int(e.Signal), e.Signal)
	}
	return fmt.Sprintf("exit code: %d", e.Code)
}

// commandTimeout is the limit for one command: the default, or what the
// model asked for up to the maximum. A capped request adds a note to the
// result, so the model knows why a long build was cut short.
func (r *Registry) commandTimeout(seconds *float64) (time.Duration, string, error) {
	if seconds == nil {
		return r.opts.CommandTimeout, "", nil
	}
	s := *seconds
	switch {
	case !(s > 0) || math.IsInf(s, 0):
		return 0, "", fmt.Errorf("timeout_seconds must be a positive number of seconds, got %v", s)
	case s >= r.opts.MaxCommandTimeout.Seconds():
		max := r.opts.MaxCommandTimeout
		if s == max.Seconds() {
			return max, "", nil
		}
		return max, fmt.Sprintf("[timeout_seconds %v is over the limit; used %s]\n", s, max), nil
	}
	return time.Duration(s * float64(time.Second)), "", nil
}
