package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// secretsFDVar marks the process run again (see secrets.go): it names
// the descriptor of the memory file that holds the secrets. It is gone
// from the environment before anything runs, so nothing retrace starts
// inherits it.
const secretsFDVar = "RETRACE_SECRETS_FD"

// selfExe is the binary this process runs, even when the file has since
// been replaced.
const selfExe = "/proc/self/exe"

// seals close the memory file once it is written: nothing can change
// what the process run again reads. Only a memory file takes seals, so
// they also tell that file from whatever else a descriptor may be.
const seals = unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE

// maxSecrets bounds what is read from the memory file: more than a
// command line and an environment can hold together.
const maxSecrets = 16 << 20

// moveSecrets moves the secrets out of what /proc shows of this process,
// running it again when there are any, and returns the arguments for
// run, secrets included. main calls it before anything else, and never
// in the sandbox launcher, which is this binary too but ends in its init.
// When retrace cannot run again it goes on as it is, saying so.
func moveSecrets(stderr io.Writer) []string {
	if fd, ok := os.LookupEnv(secretsFDVar); ok {
		// With the sandbox off a command runs as the same user, who
		// may read a dumpable process's memory, where the secrets now
		// are, through /proc/PID/mem or ptrace, unless Yama forbids it,
		// which not every system enables. Undumpable, only root may.
		if err := undumpable(); err != nil {
			fmt.Fprintf(stderr, "warning: %v; a command retrace runs may read its memory, the API key with it\n", err)
		}
		args, err := takeSecrets(fd)
		if err != nil {
			fmt.Fprintf(stderr, "warning: cannot take back the secrets moved out of retrace's command line and environment at start: %v\n", err)
			return os.Args[1:]
		}
		return args
	}
	argv, env, s := splitSecrets(os.Args, os.Environ(), configKeyEnv(os.Args[1:], os.Getenv))
	if s.empty() {
		return os.Args[1:]
	}
	err := execWithout(argv, env, s)
	// At least the environment is then closed to a command of the same
	// user; the command line stays open to all.
	_ = undumpable()
	fmt.Fprintf(stderr, "warning: the API key stays readable to the commands retrace runs, in /proc/%d/cmdline or environ: retrace could not restart itself without it: %v\n", os.Getpid(), err)
	return os.Args[1:]
}

// execWithout runs retrace again in this process, as argv with environ,
// and hands it s in a sealed memory file named by secretsFDVar. It
// returns only when it cannot.
func execWithout(argv, environ []string, s secrets) error {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode the secrets: %w", err)
	}
	// Not close-on-exec: it is for the process run again.
	fd, err := unix.MemfdCreate("retrace-secrets", unix.MFD_ALLOW_SEALING)
	if err != nil {
		return fmt.Errorf("memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "retrace secrets")
	defer f.Close() // reached only when the exec failed
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("write the secrets' memory file: %w", err)
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, seals); err != nil {
		return fmt.Errorf("seal the secrets' memory file: %w", err)
	}
	err = syscall.Exec(selfExe, argv, append(environ, secretsFDVar+"="+strconv.Itoa(fd)))
	return fmt.Errorf("exec %s: %w", selfExe, err)
}

// takeSecrets reads the secrets from the memory file whose descriptor
// is fdText, closes it, and puts them back: the variables into the
// environment, the arguments into those returned.
func takeSecrets(fdText string) ([]string, error) {
	if err := os.Unsetenv(secretsFDVar); err != nil {
		return nil, fmt.Errorf("unset %s: %w", secretsFDVar, err)
	}
	fd, err := strconv.Atoi(fdText)
	if err != nil || fd < 0 {
		return nil, fmt.Errorf("%s=%q names no file descriptor", secretsFDVar, fdText)
	}
	// A descriptor that is not the sealed memory file (a stray value,
	// set by hand) is left alone: not read, not closed.
	if got, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0); err != nil || got&seals != seals {
		return nil, fmt.Errorf("%s=%d is not the sealed memory file retrace hands its secrets over in", secretsFDVar, fd)
	}
	f := os.NewFile(uintptr(fd), "retrace secrets")
	b, err := io.ReadAll(io.NewSectionReader(f, 0, maxSecrets))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("read the secrets' memory file: %w", err)
	}
	var s secrets
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("decode the secrets: %w", err)
	}
	return s.restore(os.Args, os.Setenv)
}

// undumpable makes this process undumpable: its memory, and its /proc
// files that ptrace guards (environ, mem, fd), are closed to processes of
// the same user; root still reaches them.
func undumpable() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("make retrace undumpable: %w", err)
	}
	return nil
}
