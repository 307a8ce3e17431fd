// Package sandbox runs the model's shell commands confined to the
// workspace, and makes sure nothing they start outlives retrace.
//
// # Basics
//
// Start runs a Command (sh -c LINE in the workspace) in a Mode: Workspace,
// the default and the zero Mode; WorkspaceNoNetwork; or Off. ParseMode
// reads a mode's name from the configuration file. Check says what a mode
// gets on this machine, and Status.Warning is the sentence to show a
// person when commands are less confined than the mode asks ("commands
// run unconfined: this kernel has no Landlock ...").
//
// On Linux a command runs under a launcher: retrace itself, run again as
// /proc/self/exe with a hidden first argument. The launcher applies a
// Landlock ruleset to itself, which it cannot undo and its children
// inherit, then starts sh. Landlock is never applied to retrace itself.
// The launcher is installed by this package's init, so every binary that
// links the package has it, test binaries included.
//
// A confined command may read, write, create, remove and execute in the
// workspace, in a private temp dir made for it ($TMPDIR, removed when the
// command ends) and in its workspace's cache directory
// ($XDG_CACHE_HOME/retrace/sandbox/HASH, named by the workspace's path
// and its directory's identity: see workspaceCache), where GOCACHE, XDG_CACHE_HOME and npm's cache
// point. No two workspaces share a cache: a build's output is run
// unconfined, so a cache another project's commands can write is a way
// out. It may read and execute the system directories (/usr, /bin, /sbin,
// /lib*, /etc, /opt, /proc, /sys, /dev, the DNS configuration under
// /run), the Go toolchain, the directories on PATH, and the home
// directory less its secret places: keys, tokens, credentials, password
// stores, browser profiles, shell history and retrace's own files (see
// homeSecrets and the lists beside it; Reach.Deny adds to them). Landlock
// only allows, so carve splits each grant that holds a secret place into
// its children, down to the place. It may write /dev/null, /dev/zero,
// /dev/full, /dev/random, /dev/urandom and /dev/tty, and the directories
// Reach.Write names. Network access is open in Workspace; in
// WorkspaceNoNetwork TCP connect and bind are refused (Landlock ABI 4,
// Linux 6.7; UDP too from ABI 10). From ABI 6 a command can signal no
// process outside its sandbox, retrace included.
//
// A command sees retrace's environment less the variables Command.Hide
// names (the API key's) and the agents' (SSH_AUTH_SOCK, SSH_AGENT_PID,
// GPG_AGENT_INFO, DBUS_SESSION_BUS_ADDRESS), in every mode. Reach.Agents
// lets the agents through, with ~/.ssh's known_hosts and config, and from
// ABI 9 the right to connect to their sockets.
//
// # Which files a command wrote
//
// A file the user saves while a command runs must not be taken for the
// command's change, or a rollback would take the user's text back. So the
// launcher watches the command: before it forks sh, it installs a seccomp
// filter with a user-notification listener on the forking thread alone,
// with no_new_privs, which an unprivileged process needs for it (so a
// command gains no privileges from setuid programs in any mode). The
// filter sends the launcher every call of the command's process tree that
// can change a file: opens that write, create or truncate (the filter
// reads the flags, so reads never wait), renames, removals, links,
// mkdir, mknod, truncate, chmod and utimes. The launcher reads the path
// from the caller's memory, resolves it against the caller's working
// directory or directory fd, notes it when it is in the workspace with
// what the call does there, and lets the call run. A call that makes,
// removes or renames what is at a path is noted as such; one that writes
// a file already there (an open for writing, truncate, chmod, utimes) is
// noted with that file, as a stat of it says just before the call runs
// (see package fileid): a file at the path when the command has ended
// that is none of those it wrote, at a path it did not make or rename,
// was put there by someone else, the user saving it by rename. An open
// that finds nothing there makes the file when it may create it, and
// changes nothing when it may not. io_uring and the x32 ABI fail with
// ENOSYS. A confined command is refused (EPERM) what Landlock does not
// cover and would reach outside it: prlimit, setpriority, ioprio_set and
// the sched_set calls on any process but itself, raw and packet sockets,
// and every call of another ABI (i386 on amd64). When sh has ended and the launcher has ended all it started, it reports the paths on the status
// pipe, and refuses any call that comes later; Process.Writes gives
// them. Landlock gives each of the launcher's threads a domain of its
// own, and only the forking thread's reaches the command, so that thread
// serves the listener and does the killing.
//
// A command can dodge the watch only towards "someone else changed it":
// a path it rewrites in its memory after the launcher read it, a write
// through a descriptor it got from outside, 32-bit system calls. Its
// change then counts as the user's, which a rollback never takes back
// silently. Where the watch cannot be had (not Linux on amd64 or arm64,
// seccomp refused, more than 64 MiB of paths), Writes says so. A
// command that installs a seccomp listener of its own (some container
// runtimes do) is refused one: the kernel allows one per chain. A path
// the command only tried to make or remove, and could not, still counts.
// Where the file system cannot say which file a path holds (overlayfs),
// a file the command writes in place counts as one it made: whatever is
// at the path after is taken for its own.
//
// What the watch does not see is the writes themselves: stopping at
// every write(2) would slow every build to a crawl. So in a file the
// command opened for writing, an edit the user writes in place while it
// runs (the same file, not another renamed over it) cannot be told from
// the command's writes: the change counts as the command's.
//
// # Process groups
//
// The launcher leads a new session (no controlling terminal); sh leads a
// process group of its own in it, which holds what the command starts
// unless a process leaves it (setsid, a double-forked daemon). Before it
// forks sh the launcher makes itself a child subreaper: every process the
// command leaves orphaned is given to the launcher, not to init, so all
// the command starts stays below the launcher, in sh's group or out of
// it. The launcher's parent-death signal is caught: when retrace dies,
// even by SIGKILL, the launcher kills sh's whole group. sh has SIGKILL as
// its parent-death signal, should the launcher be killed on its own.
// Process.Kill kills the group from retrace's side; retrace does so when
// a command times out or is interrupted by a signal it handles. However
// sh ends, the launcher then kills every process below it that /proc
// shows and reaps them, round after round, until it has no child left (a
// killed process forks no more, so a command that keeps forking cannot
// outrun it), and only then reports what the command wrote and how sh
// ended: once Process.Done is closed, nothing the command started is
// left, not even a zombie. The killing is done on the forking thread,
// the one whose Landlock domain reaches the command. A command that
// leaves nothing behind costs the launcher one wait4 more.
//
// Where Landlock scopes signals (ABI 6) the launcher does not start sh
// itself but this binary again (nest), which puts itself in a Landlock
// domain nested in the launcher's and becomes sh. A process may signal
// and ptrace only its own domain and those nested in it: so the command
// can neither stop nor kill its launcher, nor open the launcher's status
// pipe through /proc/PID/fd and write its report. Where it can (mode off,
// Landlock before ABI 6), retrace undoes each stop of the launcher as it
// happens (wakeStopped), and Kill kills a launcher still not done after
// killGrace: the end always comes.
//
// # Caveats
//
// Landlock confines files, TCP ports, signals and abstract Unix sockets,
// not other system calls. A confined command can still read what the rules
// allow (the system's configuration, the home directory but its secret
// places, other projects), use up CPU and memory, and connect to Unix
// sockets by path below ABI 9 (an agent's, when it knows where: the
// variables only hide the way). It cannot list the home directory
// itself, which holds secret places, only what is in it. No-network mode
// leaves UDP open below ABI 10 (DNS, QUIC), refuses loopback TCP too (tests
// that start a server fail), and cannot stop Multipath TCP. Commands run
// with no_new_privs: sudo and other setuid programs do not gain
// privileges (in mode off too: see above). In mode off and below ABI 6 a
// command can kill its own launcher and write its report: sh dies with
// it, but what has left sh's group (setsid) then goes to init and runs
// on, still confined. A killed process stuck in the kernel (a hung file system)
// keeps the launcher, and so the command's end, waiting; one that gained
// privileges through a setuid program, possible only in mode off when
// the watch could not be had, cannot be killed, and the command's output
// says so. A process the command has another service start (systemd-run
// --user, D-Bus activation) is not its descendant and is not killed. A temp dir is left behind when retrace
// is killed while its command runs, until the next retrace starts a
// command and sweeps it. Programs that write to /tmp by name,
// ignoring $TMPDIR, and go commands that need to download modules fail
// while confined, as do tools that write caches outside XDG_CACHE_HOME
// (cargo's registry, ~/.m2, ~/.gradle) until Reach.Write names them.
// Where Landlock is missing (not Linux, a kernel before
// 5.13 or without it enabled) or the mode is Off, commands run
// unconfined, and Check says so.
package sandbox
