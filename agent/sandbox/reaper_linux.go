package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// becomeSubreaper makes the launcher the child subreaper of everything
// the command starts: a process whose parent ends is given to the
// launcher, not to init. So nothing the command starts leaves the
// launcher's tree of descendants, however it daemonizes (setsid, a
// double fork), and endAll finds it there.
func becomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("become the command's subreaper: %w", err)
	}
	return nil
}

// proc is one process: its pid, and when it started, which tells it
// from a later process given the same pid.
type proc struct {
	pid   int
	start uint64
}

// endAll kills every process the command started and reaps them, until
// the launcher has no child left: then none is left anywhere, since
// every orphan of the command's comes to the launcher. It must run on
// the forking thread, whose Landlock domain alone reaches the command's
// processes, and only once sh's own status has been collected, which
// its waits for any child would otherwise steal.
//
// It converges on a command that keeps forking: a process with SIGKILL
// pending never runs again, so it starts nothing more. Each round kills
// every live descendant a scan of /proc finds; once a scan finds none
// that an earlier round had not killed, everything left is dying, and
// endAll waits for it rather than scan again. A process that cannot die
// (stuck in the kernel on a hung file system) keeps it waiting. One it
// may not kill (a setuid program run without no_new_privs, as in mode
// off when the watch could not be had) would keep it waiting forever:
// endAll gives up on the rest and says so.
func endAll() error {
	root := os.Getpid()
	killed := map[proc]bool{}
	for {
		if !reapEnded() {
			return nil
		}
		live, err := descendants(root)
		if err != nil {
			return fmt.Errorf("end what the command left running: %w", err)
		}
		fresh := false
		for _, p := range live {
			// ESRCH: it has died since the scan.
			if err := unix.Kill(p.pid, unix.SIGKILL); err != nil && err != unix.ESRCH {
				return fmt.Errorf("end what the command left running: kill process %d: %w", p.pid, err)
			}
			if !killed[p] {
				killed[p], fresh = true, true
			}
		}
		if !fresh {
			waitChild()
		}
	}
}

// reapEnded reaps the launcher's children that have ended, and reports
// whether any child is left. (wait4 fails only with ECHILD here, there
// being no child, or EINTR.)
func reapEnded() bool {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		switch {
		case err == unix.EINTR:
		case err != nil:
			return false
		case pid == 0:
			return true
		}
	}
}

// waitChild waits for one of the launcher's children to end, and reaps
// it.
func waitChild() {
	for {
		var ws unix.WaitStatus
		if _, err := unix.Wait4(-1, &ws, 0, nil); err != unix.EINTR {
			return
		}
	}
}

// descendants lists the live processes below root, as /proc shows them
// now: each process's stat names its parent. Zombies are left out: they
// are dead already.
func descendants(root int) ([]proc, error) {
	dir, err := os.Open("/proc")
	if err != nil {
		return nil, fmt.Errorf("list the processes: %w", err)
	}
	names, err := dir.Readdirnames(-1)
	dir.Close()
	if err != nil {
		return nil, fmt.Errorf("list the processes: %w", err)
	}
	type entry struct {
		parent int
		live   bool
		start  uint64
	}
	all := make(map[int]entry, len(names))
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		// A process that is gone since the listing is left out.
		if stat, err := os.ReadFile("/proc/" + name + "/stat"); err == nil {
			if parent, state, start, ok := parseStat(stat); ok {
				all[pid] = entry{parent: parent, live: state != 'Z' && state != 'X', start: start}
			}
		}
	}
	// below says which processes are below root: those whose chain of
	// parents reaches it. A process is marked no until its chain is
	// known, so that a cycle (which a scan taken over time could show,
	// as pids are reused) ends.
	below := map[int]bool{root: true}
	var under func(pid int) bool
	under = func(pid int) bool {
		if v, ok := below[pid]; ok {
			return v
		}
		below[pid] = false
		e, ok := all[pid]
		v := ok && under(e.parent)
		below[pid] = v
		return v
	}
	var out []proc
	for pid, e := range all {
		if e.live && pid != root && under(pid) {
			out = append(out, proc{pid: pid, start: e.start})
		}
	}
	return out, nil
}

// parseStat reads a process's parent, state and start time from its
// /proc/PID/stat; ok is false when the line is not one. The command name,
// the second field, is in parentheses and may hold anything, spaces and
// parentheses too: the fields after it are counted from its last ')'.
func parseStat(stat []byte) (parent int, state byte, start uint64, ok bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, 0, false
	}
	// From the state on: state, ppid, ..., starttime, the 22nd field of
	// the line and the 20th of these.
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return 0, 0, 0, false
	}
	parent, err1 := strconv.Atoi(f[1])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, 0, false
	}
	return parent, f[0][0], start, true
}
