package sandbox

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// trap is a system call that can change a file: the filter sends it to
// the launcher, which notes the paths it names before letting it run.
type trap struct {
	nr uint32
	// flags is the argument holding open flags: the call is sent only
	// when they ask to write, create or truncate, so that reads, which
	// are most opens, never wait on the launcher. noArg: always sent.
	flags int
	// how is the argument pointing to openat2's struct open_how, whose
	// flags the launcher reads itself; zero when there is none.
	how int
	// paths are where the call's paths are.
	paths []pathArg
	// act is what the call does at its paths.
	act act
	// follow: the call acts on a symlink's target, so the target is
	// noted too.
	follow bool
}

// act is what a call does at the paths it names.
type act uint8

const (
	// actWrite changes the file there in place: truncates it, or
	// changes its mode or times.
	actWrite act = iota
	// actOpen opens the file there for writing, or creates one when
	// nothing is there and the open's flags hold O_CREAT. The flags are
	// in the argument flags, or open_how at how; creat, which has
	// neither, always creates.
	actOpen
	// actMake puts a new directory, link, symlink or device there.
	actMake
	// actRemove removes what is there.
	actRemove
	// actRename moves what is there, and everything under it.
	actRename
)

// pathArg says where one path of a call is: dir is the argument holding
// the directory fd it is relative to (noArg: the working directory), and
// path the argument pointing to the string (noArg: the fd is the file).
type pathArg struct{ dir, path int }

const noArg = -1

func cwdPath(path int) []pathArg     { return []pathArg{{dir: noArg, path: path}} }
func atPath(dir, path int) []pathArg { return []pathArg{{dir: dir, path: path}} }
func fdPath(fd int) []pathArg        { return []pathArg{{dir: fd, path: noArg}} }

// writeFlags are the open flags that can change a file. O_APPEND and
// O_TMPFILE need write access, so they come with one of them.
const writeFlags = unix.O_WRONLY | unix.O_RDWR | unix.O_CREAT | unix.O_TRUNC

// x32Bit marks the x32 ABI's calls on amd64, which the filter refuses:
// they would be the same calls under other numbers.
const x32Bit = 0x40000000

// Offsets in struct seccomp_data.
const (
	offNr   = 0
	offArch = 4
	offArgs = 16 // then 8 bytes per argument, the low half first
)

// filter is the BPF program the launcher installs before it starts the
// command: every trap goes to the launcher, io_uring (which would write
// files without a system call per file) and the x32 ABI fail with ENOSYS,
// and everything else runs as if there were no filter.
func filter() []unix.SockFilter {
	// A jump's targets are a number of instructions to skip (0 is the
	// next one) or one of the returns at the end, whose places are known
	// once the program is laid out.
	const (
		toAllow = -1 - iota
		toNotify
		toNoSys
	)
	type fix struct{ at, jt, jf int }
	var prog []unix.SockFilter
	var fixes []fix
	stmt := func(code int, k uint32) { prog = append(prog, unix.SockFilter{Code: uint16(code), K: k}) }
	jump := func(code int, k uint32, jt, jf int) {
		fixes = append(fixes, fix{len(prog), jt, jf})
		stmt(code, k)
	}
	ld := unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	jeq := unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	stmt(ld, offArch)
	jump(jeq, auditArch, 0, toAllow)
	stmt(ld, offNr)
	jump(unix.BPF_JMP|unix.BPF_JGE|unix.BPF_K, x32Bit, toNoSys, 0)
	jump(jeq, unix.SYS_IO_URING_SETUP, toNoSys, 0)
	for _, t := range traps {
		if t.flags == noArg {
			jump(jeq, t.nr, toNotify, 0)
			continue
		}
		// The flags are loaded over the call's number: both ways out
		// of the flags' test end the program.
		jump(jeq, t.nr, 0, 2)
		stmt(ld, uint32(offArgs+8*t.flags))
		jump(unix.BPF_JMP|unix.BPF_JSET|unix.BPF_K, writeFlags, toNotify, toAllow)
	}
	returns := map[int]int{toAllow: len(prog), toNotify: len(prog) + 1, toNoSys: len(prog) + 2}
	stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW)
	stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_USER_NOTIF)
	stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS))
	offset := func(at, target int) uint8 {
		if target >= 0 {
			return uint8(target)
		}
		return uint8(returns[target] - at - 1)
	}
	for _, f := range fixes {
		prog[f.at].Jt, prog[f.at].Jf = offset(f.at, f.jt), offset(f.at, f.jf)
	}
	return prog
}

// errNoFilter is why commands are not watched on an architecture the
// filter has no table for.
var errNoFilter = errors.New("retrace has no system call table for this architecture")

// install installs the filter on the calling thread alone, not the
// launcher's others, and returns the listener its notifications come to.
// The thread must stay locked: the command is forked from it and inherits
// the filter, and so does everything the command starts.
func install() (int, error) {
	if auditArch == 0 {
		return -1, errNoFilter
	}
	prog := filter()
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	fd, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&fprog)))
	if errno != 0 {
		return -1, fmt.Errorf("seccomp: %w", errno)
	}
	return int(fd), nil
}
