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
// and everything else runs as if there were no filter. A confined
// command is also refused (EPERM) what Landlock does not cover and
// would reach outside the sandbox: limits, priorities and CPUs of any
// process but itself (prlimit --cpu=1 on retrace kills it, --nofile=1
// on the launcher keeps it from ending what the command left), raw and
// packet sockets (root could read retrace's requests off the loopback),
// and the other ABIs of the machine (i386 on amd64), whose calls this
// filter would not see.
func filter(confined bool) []unix.SockFilter {
	// A jump's targets are a number of instructions to skip (0 is the
	// next one) or one of the returns at the end, whose places are known
	// once the program is laid out.
	const (
		toAllow = -1 - iota
		toNotify
		toNoSys
		toPerm
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
	arg := func(i int) uint32 { return uint32(offArgs + 8*i) }
	otherArch := toAllow
	if confined {
		otherArch = toNoSys
	}
	stmt(ld, offArch)
	jump(jeq, auditArch, 0, otherArch)
	stmt(ld, offNr)
	jump(unix.BPF_JMP|unix.BPF_JGE|unix.BPF_K, x32Bit, toNoSys, 0)
	jump(jeq, unix.SYS_IO_URING_SETUP, toNoSys, 0)
	if confined {
		// Calls whose first argument is a pid: only 0, the caller.
		for _, nr := range []uint32{unix.SYS_PRLIMIT64, unix.SYS_SCHED_SETAFFINITY, unix.SYS_SCHED_SETSCHEDULER,
			unix.SYS_SCHED_SETPARAM, unix.SYS_SCHED_SETATTR} {
			jump(jeq, nr, 0, 2)
			stmt(ld, arg(0))
			jump(jeq, 0, toAllow, toPerm)
		}
		// setpriority(which, who): only PRIO_PROCESS of the caller.
		jump(jeq, unix.SYS_SETPRIORITY, 0, 4)
		stmt(ld, arg(0))
		jump(jeq, unix.PRIO_PROCESS, 0, toPerm)
		stmt(ld, arg(1))
		jump(jeq, 0, toAllow, toPerm)
		// ioprio_set(which, who): the caller, or its own group; never
		// a user's every process.
		jump(jeq, unix.SYS_IOPRIO_SET, 0, 4)
		stmt(ld, arg(0))
		jump(jeq, ioprioWhoUser, toPerm, 0)
		stmt(ld, arg(1))
		jump(jeq, 0, toAllow, toPerm)
		// socket(domain, type, protocol): no packet or raw sockets.
		jump(jeq, unix.SYS_SOCKET, 0, 6)
		stmt(ld, arg(0))
		jump(jeq, unix.AF_PACKET, toPerm, 0)
		stmt(ld, arg(1))
		stmt(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, 0xf)
		jump(jeq, unix.SOCK_RAW, toPerm, 0)
		jump(jeq, unix.SOCK_PACKET, toPerm, toAllow)
	}
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
	returns := map[int]int{toAllow: len(prog), toNotify: len(prog) + 1, toNoSys: len(prog) + 2, toPerm: len(prog) + 3}
	stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW)
	stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_USER_NOTIF)
	stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS))
	stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM))
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

// ioprioWhoUser is ioprio_set's IOPRIO_WHO_USER: every process of a user.
const ioprioWhoUser = 3

// errNoFilter is why commands are not watched on an architecture the
// filter has no table for.
var errNoFilter = errors.New("retrace has no system call table for this architecture")

// install installs the filter on the calling thread alone, not the
// launcher's others, and returns the listener its notifications come to.
// The thread must stay locked: the command is forked from it and inherits
// the filter, and so does everything the command starts.
func install(confined bool) (int, error) {
	if auditArch == 0 {
		return -1, errNoFilter
	}
	prog := filter(confined)
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	fd, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&fprog)))
	if errno != 0 {
		return -1, fmt.Errorf("seccomp: %w", errno)
	}
	return int(fd), nil
}
