package sandbox

import (
	"os"
	"path/filepath"
	"slices"
)

// policy is what the launcher is told: whose death ends the command and
// what the command may touch. It travels as JSON in the launcher's
// arguments, so the launcher itself looks nothing up.
type policy struct {
	// Parent is retrace's pid. The launcher's parent changes only when
	// retrace dies, and then the command must die too.
	Parent int `json:"parent"`
	// Confine is false in mode off or without Landlock: the launcher
	// then only ties the command's life to retrace's.
	Confine   bool `json:"confine"`
	NoNetwork bool `json:"no_network"`
	// Refer lets files move between the writable directories; asking
	// for it below ABI 2 would make the library give up on Landlock.
	Refer     bool     `json:"refer"`
	Write     []string `json:"write"`      // directories: everything, executing included
	Read      []string `json:"read"`       // directories: read, list, execute
	ReadFiles []string `json:"read_files"` // single files: read, execute
	Devices   []string `json:"devices"`    // device files: read and write
	// Watch is the workspace: the launcher notes which paths under it
	// the command's processes write (see watcher). Empty: not watched.
	Watch string `json:"watch"`
}

// watchWrites says whether commands' writes are watched; only a
// benchmark that measures what the watch costs turns it off.
var watchWrites = true

// systemDirs hold the programs, libraries and configuration that almost
// every command reads: the shell itself, compilers, CA certificates, DNS
// configuration (which /etc/resolv.conf often links into /run). /proc and
// /sys are read by ps, nproc and the Go runtime; Landlock keeps a command
// from reading another domain's /proc/PID/environ or mem, as it keeps it
// from ptrace. /run/user and the rest of /run are left out: they hold
// session sockets and credentials (a container registry's auth.json).
var systemDirs = []string{
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
	"/nix/store", "/var/lib/ca-certificates",
	"/run/systemd/resolve", "/run/resolvconf", "/run/NetworkManager",
	"/proc", "/sys", "/dev",
}

// devices are written as well as read: output thrown away, randomness.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// newPolicy is what a command in dir may touch. tmp is its private temp
// dir and cache the Go build cache confined commands share (empty: none).
// The home directory is not readable: it holds keys, tokens, other
// projects and retrace's own database. Only what builds need from it is:
// see homePaths.
func newPolicy(st Status, dir, tmp, cache string, getenv func(string) string, goBin string) policy {
	p := policy{Parent: os.Getpid(), Confine: st.Files, NoNetwork: st.Network, Refer: st.ABI >= 2}
	if watchWrites {
		p.Watch = dir
	}
	if !p.Confine {
		return p
	}
	p.Write = []string{dir, tmp}
	if cache != "" {
		p.Write = append(p.Write, cache)
	}
	p.Read, p.ReadFiles = classify(append(slices.Clone(systemDirs), homePaths(getenv, goBin)...))
	p.Devices = devices
	return p
}

// homePaths are the places outside the system directories that builds
// read: the Go toolchain (wherever go on PATH lives), GOPATH with the
// module cache and installed tools, the go command's settings file, git's
// settings (git refuses to run when it cannot read them), and the
// directories on PATH, whose programs the model will run. PATH entries
// that are relative, the root or the home directory itself are skipped:
// they would open far more than programs.
func homePaths(getenv func(string) string, goBin string) []string {
	home := getenv("HOME")
	config := getenv("XDG_CONFIG_HOME")
	if config == "" && home != "" {
		config = filepath.Join(home, ".config")
	}
	var out []string
	add := func(p string) {
		if !filepath.IsAbs(p) {
			return
		}
		if p = filepath.Clean(p); p != "/" && p != filepath.Clean(home) {
			out = append(out, p)
		}
	}
	if goBin != "" && filepath.Base(filepath.Dir(goBin)) == "bin" {
		add(filepath.Dir(filepath.Dir(goBin)))
	}
	add(getenv("GOROOT"))
	gopath := filepath.SplitList(getenv("GOPATH"))
	if len(gopath) == 0 && home != "" {
		gopath = []string{filepath.Join(home, "go")}
	}
	for _, p := range gopath {
		add(p)
	}
	add(getenv("GOMODCACHE"))
	add(getenv("GOENV"))
	if config != "" {
		add(filepath.Join(config, "go"))
		add(filepath.Join(config, "git"))
	}
	if home != "" {
		add(filepath.Join(home, ".gitconfig"))
	}
	for _, p := range filepath.SplitList(getenv("PATH")) {
		add(p)
	}
	return out
}

// classify sorts paths into directories and files, dropping those that do
// not exist: Landlock takes different rights for each, and the launcher
// should not have to stat anything.
func classify(paths []string) (dirs, files []string) {
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		info, err := os.Stat(p)
		switch {
		case err != nil:
		case info.IsDir():
			dirs = append(dirs, p)
		default:
			files = append(files, p)
		}
	}
	return dirs, files
}

// goCache is the Go build cache for confined commands. A build needs a
// writable cache (with a read-only one, go build fails with "package fmt
// is not in std"), but letting a command write the person's own cache
// would let it plant a compiled package that their next build outside
// the sandbox links: a way out. So confined commands share a cache of
// their own, which only ever feeds other confined builds.
func goCache(getenv func(string) string) string {
	base := getenv("XDG_CACHE_HOME")
	if base == "" {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "retrace", "go-build")
}
