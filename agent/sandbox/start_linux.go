package sandbox

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"retrace/agent/fileid"
)

// The launcher is retrace itself, run again as /proc/self/exe with
// launcherArg as its first argument (see launcher_linux.go). /proc/self/exe
// is the binary this process runs even when the file has since been
// replaced, say by a build of retrace that a command ran.
const (
	selfExe     = "/proc/self/exe"
	launcherArg = "__sandbox-exec"
	// nestArg starts the launcher's child, which nests the command in a
	// Landlock domain of its own before it becomes sh (see nest).
	nestArg = "__sandbox-nest"
	// statusFD is where the launcher says how the command ended: the
	// one extra file it is given.
	statusFD = 3
	// parentGone is the launcher's parent-death signal. It must be one
	// the launcher can catch: SIGKILL would kill the launcher alone and
	// leave the command's group running.
	parentGone = syscall.SIGTERM
)

// command builds the launcher's command line for c.
func (p *Process) command(c Command, st Status) (*exec.Cmd, error) {
	var set []string
	cache := ""
	if st.Files {
		if cache = workspaceCache(os.Getenv, c.Dir); cache != "" {
			if err := os.MkdirAll(cache, 0o700); err != nil {
				return nil, fmt.Errorf("sandbox: make the workspace's cache directory: %w", err)
			}
			set = cacheEnv(cache)
		}
	}
	env := c.environ(p.tmp, set...)
	goBin := toolchain()
	pol, err := json.Marshal(newPolicy(st, c, p.tmp, cache, os.Getenv, goBin))
	if err != nil {
		return nil, fmt.Errorf("sandbox: encode the policy: %w", err)
	}
	if p.statusR, p.statusW, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("sandbox: create the status pipe: %w", err)
	}
	// The report of what the command wrote is bounded by the launcher
	// (maxWrittenBytes of paths, quoted); this bounds the rest.
	p.status = bufio.NewReader(io.LimitReader(p.statusR, 3*maxWrittenBytes))
	return &exec.Cmd{
		Path:       selfExe,
		Args:       []string{"retrace-sandbox", launcherArg, string(pol), "sh", "-c", c.Shell},
		Dir:        c.Dir,
		Env:        env,
		Stdout:     c.Output,
		Stderr:     c.Output,
		ExtraFiles: []*os.File{p.statusW},
		// A new session: no controlling terminal to steal from the TUI
		// (a prompt fails at once instead of stopping the command).
		SysProcAttr: &syscall.SysProcAttr{Setsid: true, Pdeathsig: parentGone},
	}, nil
}

// begin reads the launcher's first word: sh's pid, which is the
// command's process group, or why the command could not start.
func (p *Process) begin() (int, error) {
	kind, value := p.word()
	switch kind {
	case "pid":
		if pid, err := strconv.Atoi(value); err == nil && pid > 0 {
			return pid, nil
		}
	case "error":
		return 0, fmt.Errorf("%w: %s", ErrNotConfined, value)
	case "":
		return 0, fmt.Errorf("%w: the launcher ended before it started sh", ErrNotConfined)
	}
	return 0, fmt.Errorf("%w: the launcher said %q", ErrNotConfined, kind+" "+value)
}

// collect reads the rest of what the launcher says: what the command
// wrote, then how it ended. A report cut short (a launcher killed), or
// with a line it cannot read, leaves the writes unwatched.
func (p *Process) collect() {
	p.writes = Writes{Why: "the launcher ended before it said what the command wrote"}
	var w Writes
	for {
		kind, value := p.word()
		switch kind {
		case "":
			return
		case "made", "removed", "tree":
			path, err := strconv.Unquote(value)
			if err != nil {
				w.Why = fmt.Sprintf("the launcher said %q", kind+" "+value)
				continue
			}
			switch kind {
			case "made":
				w.Made = append(w.Made, path)
			case "removed":
				w.Removed = append(w.Removed, path)
			default:
				w.Trees = append(w.Trees, path)
			}
		case "opened":
			path, f, err := parseOpened(value)
			if err != nil {
				w.Why = fmt.Sprintf("the launcher said %q", kind+" "+value)
				continue
			}
			if w.Opened == nil {
				w.Opened = map[string][]fileid.File{}
			}
			w.Opened[path] = append(w.Opened[path], f)
		case "watched":
			if w.Why == "" {
				w.Watched = true
			}
			p.writes = w
		case "unwatched":
			p.writes = Writes{Why: value}
		case "exit", "signal":
			p.end = [2]string{kind, value}
		default:
			w.Why = fmt.Sprintf("the launcher said %q", kind+" "+value)
		}
	}
}

// parseOpened reads the value of an "opened" line: a quoted path, then
// the file's device, inode, birth, size, mode, mtime and ctime.
func parseOpened(value string) (string, fileid.File, error) {
	var f fileid.File
	q, err := strconv.QuotedPrefix(value)
	if err != nil {
		return "", f, err
	}
	path, err := strconv.Unquote(q)
	if err != nil {
		return "", f, err
	}
	var rest string
	n, _ := fmt.Sscan(value[len(q):], &f.Dev, &f.Ino, &f.Birth, &f.Size, &f.Mode, &f.Mtime, &f.Ctime, &rest)
	if n != 7 {
		return "", f, fmt.Errorf("%d numbers after the path, want 7", n)
	}
	return path, f, nil
}

// result is how sh ended, as the launcher said last. A launcher that
// said nothing was killed before sh ended (sh, its parent-death signal
// SIGKILL, went with it): its own end is the command's.
func (p *Process) result(ps *os.ProcessState) Exit {
	kind, value := p.end[0], p.end[1]
	n, err := strconv.Atoi(value)
	switch {
	case err != nil:
	case kind == "exit":
		return Exit{Code: n}
	case kind == "signal":
		return Exit{Signal: syscall.Signal(n)}
	}
	return exitOf(ps)
}

// word reads one line of the status pipe as its first word and the rest.
func (p *Process) word() (kind, value string) {
	line, _ := p.status.ReadString('\n')
	kind, value, _ = strings.Cut(strings.TrimSpace(line), " ")
	return kind, value
}

// toolchain is the go command on PATH with its symlinks resolved, so that
// /usr/bin/go -> ../lib/go-1.26/bin/go names the real toolchain, or "".
func toolchain() string {
	p, err := exec.LookPath("go")
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return p
}

// wakeStopped keeps the launcher of a command running. A command that
// can reach it (mode off, Landlock before ABI 6, where it is not nested
// in a domain of its own) could stop it with SIGSTOP, before it says the
// command's pid or while it ends what the command left, and retrace
// would wait for ever. So every stop of process pid, the launcher, is
// undone as soon as it happens, until the launcher has been reaped. A
// pidfd names it, so that a later process given the same pid is never
// taken for it.
func wakeStopped(pid int) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	for {
		var info unix.Siginfo
		// Only stops: the exit is os/exec's to collect. Once it has,
		// there is no child left to wait for, and waitid says so.
		err := unix.Waitid(unix.P_PIDFD, fd, &info, unix.WSTOPPED, nil)
		switch {
		case err == unix.EINTR:
		case err != nil:
			return
		default:
			_ = unix.PidfdSendSignal(fd, unix.SIGCONT, nil, 0)
		}
	}
}
