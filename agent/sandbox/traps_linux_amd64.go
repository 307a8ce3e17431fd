package sandbox

import "golang.org/x/sys/unix"

// auditArch is the architecture the filter lets through; calls made in
// another (the 32-bit ABI) are not watched.
const auditArch = unix.AUDIT_ARCH_X86_64

// traps are the system calls that can change a file, with where their
// paths are: on amd64 the old calls that take a path alone as well as
// their *at forms.
var traps = []trap{
	{nr: unix.SYS_OPEN, flags: 1, paths: cwdPath(0), follow: true, act: actOpen},
	{nr: unix.SYS_CREAT, flags: noArg, paths: cwdPath(0), follow: true, act: actOpen},
	{nr: unix.SYS_OPENAT, flags: 2, paths: atPath(0, 1), follow: true, act: actOpen},
	{nr: unix.SYS_OPENAT2, flags: noArg, how: 2, paths: atPath(0, 1), follow: true, act: actOpen},
	{nr: unix.SYS_TRUNCATE, flags: noArg, paths: cwdPath(0), follow: true, act: actWrite},
	{nr: unix.SYS_RENAME, flags: noArg, paths: append(cwdPath(0), cwdPath(1)...), act: actRename},
	{nr: unix.SYS_RENAMEAT, flags: noArg, paths: append(atPath(0, 1), atPath(2, 3)...), act: actRename},
	{nr: unix.SYS_RENAMEAT2, flags: noArg, paths: append(atPath(0, 1), atPath(2, 3)...), act: actRename},
	{nr: unix.SYS_UNLINK, flags: noArg, paths: cwdPath(0), act: actRemove},
	{nr: unix.SYS_UNLINKAT, flags: noArg, paths: atPath(0, 1), act: actRemove},
	{nr: unix.SYS_RMDIR, flags: noArg, paths: cwdPath(0), act: actRemove},
	{nr: unix.SYS_MKDIR, flags: noArg, paths: cwdPath(0), act: actMake},
	{nr: unix.SYS_MKDIRAT, flags: noArg, paths: atPath(0, 1), act: actMake},
	{nr: unix.SYS_MKNOD, flags: noArg, paths: cwdPath(0), act: actMake},
	{nr: unix.SYS_MKNODAT, flags: noArg, paths: atPath(0, 1), act: actMake},
	{nr: unix.SYS_LINK, flags: noArg, paths: cwdPath(1), act: actMake},
	{nr: unix.SYS_LINKAT, flags: noArg, paths: atPath(2, 3), act: actMake},
	{nr: unix.SYS_SYMLINK, flags: noArg, paths: cwdPath(1), act: actMake},
	{nr: unix.SYS_SYMLINKAT, flags: noArg, paths: atPath(1, 2), act: actMake},
	{nr: unix.SYS_CHMOD, flags: noArg, paths: cwdPath(0), follow: true, act: actWrite},
	{nr: unix.SYS_FCHMOD, flags: noArg, paths: fdPath(0), act: actWrite},
	{nr: unix.SYS_FCHMODAT, flags: noArg, paths: atPath(0, 1), follow: true, act: actWrite},
	{nr: unix.SYS_FCHMODAT2, flags: noArg, paths: atPath(0, 1), follow: true, act: actWrite},
	{nr: unix.SYS_UTIME, flags: noArg, paths: cwdPath(0), follow: true, act: actWrite},
	{nr: unix.SYS_UTIMES, flags: noArg, paths: cwdPath(0), follow: true, act: actWrite},
	{nr: unix.SYS_UTIMENSAT, flags: noArg, paths: atPath(0, 1), follow: true, act: actWrite},
	{nr: unix.SYS_FUTIMESAT, flags: noArg, paths: atPath(0, 1), follow: true, act: actWrite},
}
