package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"retrace/agent/fileid"
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
	// Sockets are the agents' Unix sockets a command may connect to
	// (Reach.Agents); from ABI 9 Landlock refuses any other outside the
	// sandbox.
	Sockets []string `json:"sockets"`
	// Nest has the command run in a Landlock domain nested in the
	// launcher's (see nest) where Landlock scopes signals (ABI 6), so
	// that the command cannot reach its launcher. The nested start runs
	// this binary again, which restrict then lets it execute.
	Nest bool `json:"nest"`
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

// The secret places: where a home directory keeps keys, tokens,
// passwords, browsing and shell history, and where retrace keeps its
// sessions. A confined command may neither read nor write them, whatever
// else it may read; Reach.Deny adds to them, and nothing takes one away.
// Each list is relative to its base: the home directory, or
// $XDG_CONFIG_HOME, $XDG_DATA_HOME and $XDG_CACHE_HOME, each both where
// the variable says and at its default place under home.
var (
	homeSecrets = []string{
		".ssh", ".gnupg", ".aws", ".azure", ".netrc", ".git-credentials", ".docker/config.json", ".kube",
		".password-store", ".pgpass", ".vault-token", ".pypirc", ".cargo/credentials", ".cargo/credentials.toml",
		".gem/credentials", ".terraform.d/credentials.tfrc.json", ".mozilla", ".thunderbird",
		".composer/auth.json", ".s3cfg", ".boto", ".kaggle", ".databrickscfg", ".oci", ".terraformrc",
		".bash_history", ".zsh_history", ".python_history", ".psql_history", ".mysql_history", ".node_repl_history",
		".viminfo", ".lesshst",
	}
	configSecrets = []string{
		"gcloud", "gh", "hub", "git/credentials", "containers/auth.json", "op", "1Password", "Bitwarden", "keepassxc",
		"google-chrome", "chromium", "BraveSoftware", "microsoft-edge", "vivaldi", "retrace",
		"composer/auth.json", "rclone",
	}
	dataSecrets  = []string{"keyrings", "kwalletd", "fish/fish_history", "retrace"}
	cacheSecrets = []string{"retrace", "huggingface/token"}
	// rootSecrets are the system's, which only root can read anyway:
	// password hashes, the host's SSH keys, TLS private keys. A command
	// run as root (in a container, say) would read them from /etc.
	rootSecrets = []string{
		"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/ssl/private",
		"/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key", "/etc/ssh/ssh_host_ed25519_key", "/etc/ssh/ssh_host_dsa_key",
		"/etc/wireguard", "/etc/letsencrypt", "/etc/NetworkManager/system-connections", "/etc/krb5.keytab", "/etc/pki/tls/private",
	}
)

// agentVars name the agents' sockets: whoever reaches one signs, decrypts
// or asks for secrets as the person (ssh-add -l, git push, a keyring over
// D-Bus), keys that no file of theirs gives away. Commands do not see
// them unless Reach.Agents lets them.
var agentVars = []string{"SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS"}

// Reach is what the configuration adds to a mode's confinement.
type Reach struct {
	// Deny are more places a confined command may neither read nor
	// write, on top of the secret places every command is kept from.
	Deny []string
	// Write are more directories a confined command may write: caches
	// shared with the person's own builds (~/.m2, ~/.gradle, ~/.cargo).
	Write []string
	// Agents lets commands use the SSH agent, the GPG agent and the
	// D-Bus session bus (git push over SSH), and read ~/.ssh's
	// known_hosts and config for it; the keys stay closed.
	Agents bool
}

// newPolicy is what command c may touch, run with temp dir tmp and the
// workspace's cache directory cache (empty: none). The home directory is
// readable, less the secret places (see secretPlaces); the system
// directories and what builds need are readable wherever they are (see
// homePaths); only the workspace, tmp, cache and what Reach.Write names
// are writable.
func newPolicy(st Status, c Command, tmp, cache string, getenv func(string) string, goBin string) policy {
	p := policy{Parent: os.Getpid(), Confine: st.Files, NoNetwork: st.Network, Refer: st.ABI >= 2}
	if watchWrites {
		p.Watch = c.Dir
	}
	if !p.Confine {
		return p
	}
	secrets := secretPlaces(getenv, c.Reach.Deny, os.Geteuid() == 0)
	// A workspace that holds a secret place (the home directory) is
	// split around it like any grant. One inside a secret place is where
	// the person chose to work: it stays whole.
	carver := newCarver(secrets)
	p.Write = carver.carve([]string{c.Dir})
	if len(p.Write) == 0 {
		p.Write = []string{c.Dir}
	}
	p.Write = append(p.Write, tmp)
	if cache != "" {
		p.Write = append(p.Write, cache)
	}
	// A directory the configuration makes writable is one the person
	// chose; a secret place in it stays closed all the same.
	extra, _ := classify(carver.carve(c.Reach.Write))
	p.Write = append(p.Write, extra...)
	read := append(slices.Clone(systemDirs), homePaths(getenv, goBin)...)
	if c.Reach.Agents {
		p.Sockets = agentSockets(getenv)
		if home := getenv("HOME"); home != "" {
			read = append(read, filepath.Join(home, ".ssh", "known_hosts"), filepath.Join(home, ".ssh", "config"))
			secrets = slices.DeleteFunc(secrets, func(s string) bool { return s == filepath.Join(home, ".ssh") })
			secrets = append(secrets, sshKeyPlaces(filepath.Join(home, ".ssh"))...)
			carver = newCarver(secrets)
		}
	}
	p.Read, p.ReadFiles = classify(carver.carve(read))
	p.Devices = devices
	p.Nest = st.ABI >= abiScoped
	return p
}

// homePaths are the places outside the system directories that commands
// read: the home directory (less its secret places, which carve takes
// out), the Go toolchain (wherever go on PATH lives), GOPATH with the
// module cache and installed tools, the go command's settings file,
// git's settings (git refuses to run when it cannot read them), and the
// directories on PATH, whose programs the model will run. A PATH entry
// that is relative or the root is skipped: it would open far more than
// programs.
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
		if p = filepath.Clean(p); p != "/" {
			out = append(out, p)
		}
	}
	add(home)
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

// secretPlaces are the absolute paths of the secret places for the
// environment getenv reads, the system's too for root, and deny's
// absolute paths after them.
func secretPlaces(getenv func(string) string, deny []string, root bool) []string {
	home := getenv("HOME")
	var out []string
	if root {
		out = append(out, rootSecrets...)
	}
	add := func(base string, rel []string) {
		for _, r := range rel {
			out = append(out, filepath.Join(base, r))
		}
	}
	if filepath.IsAbs(home) {
		add(home, homeSecrets)
	}
	for _, b := range []struct {
		env, under string
		rel        []string
	}{
		{"XDG_CONFIG_HOME", ".config", configSecrets},
		{"XDG_DATA_HOME", ".local/share", dataSecrets},
		{"XDG_CACHE_HOME", ".cache", cacheSecrets},
	} {
		def := ""
		if filepath.IsAbs(home) {
			def = filepath.Join(home, b.under)
			add(def, b.rel)
		}
		if dir := getenv(b.env); filepath.IsAbs(dir) && filepath.Clean(dir) != def {
			add(filepath.Clean(dir), b.rel)
		}
	}
	for _, p := range append([]string{getenv("GNUPGHOME"), getenv("PASSWORD_STORE_DIR")}, deny...) {
		if filepath.IsAbs(p) {
			out = append(out, filepath.Clean(p))
		}
	}
	return out
}

// sshKeyPlaces are what ~/.ssh holds besides known_hosts and config: the
// keys, which stay closed when Reach.Agents opens those two.
func sshKeyPlaces(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return []string{dir}
	}
	var out []string
	for _, e := range entries {
		if n := e.Name(); n != "known_hosts" && n != "config" {
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out
}

// agentSockets are the Unix sockets agentVars name.
func agentSockets(getenv func(string) string) []string {
	var out []string
	if s := getenv("SSH_AUTH_SOCK"); filepath.IsAbs(s) {
		out = append(out, s)
	}
	if s, _, _ := strings.Cut(getenv("GPG_AGENT_INFO"), ":"); filepath.IsAbs(s) {
		out = append(out, s)
	}
	// unix:path=/run/user/1000/bus[,guid=...]; an abstract address needs
	// no path, and Landlock's scoping (ABI 6) refuses it all the same.
	for _, a := range strings.Split(getenv("DBUS_SESSION_BUS_ADDRESS"), ";") {
		for _, kv := range strings.Split(strings.TrimPrefix(a, "unix:"), ",") {
			if s, ok := strings.CutPrefix(kv, "path="); ok && filepath.IsAbs(s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// carve returns paths that together cover what grants cover, less every
// place in deny and everything beneath one. Landlock only allows, so a
// grant that holds a denied place is replaced by its children, level by
// level down to the denied place, which is left out. Paths are compared
// as the kernel resolves them: a rule on a symlink covers its target, and
// a secret reached through a link is the same secret. What does not exist
// is left out.
func carve(grants, deny []string) []string { return newCarver(deny).carve(grants) }

// carver carves grants around one set of denied places. It runs before
// every command, so it resolves each path once: a few hundred lstat calls
// otherwise, most of them for secret places this machine does not have.
type carver struct {
	denied   []string // each denied place as named and as resolved
	resolved map[string]resolved
}

// resolved is a path with its symlinks resolved, and whether it exists.
type resolved struct {
	path   string
	exists bool
}

func newCarver(deny []string) *carver {
	c := &carver{resolved: map[string]resolved{"/": {"/", true}}}
	for _, d := range deny {
		if !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		c.denied = append(c.denied, d)
		if r := c.resolve(d); r.path != d {
			c.denied = append(c.denied, r.path)
		}
	}
	return c
}

func (c *carver) carve(grants []string) []string {
	var out []string
	expanded := map[string]bool{}
	var walk func(p, r string)
	walk = func(p, r string) {
		if slices.ContainsFunc(c.denied, func(d string) bool { return within(r, d) }) {
			return
		}
		if !slices.ContainsFunc(c.denied, func(d string) bool { return within(d, r) }) {
			out = append(out, p)
			return
		}
		// A link back to a directory already split (~/loop -> ~) adds
		// nothing its first split did not.
		if expanded[r] {
			return
		}
		expanded[r] = true
		entries, err := os.ReadDir(r)
		if err != nil {
			return
		}
		for _, e := range entries {
			child := filepath.Join(p, e.Name())
			if e.Type()&os.ModeSymlink == 0 {
				walk(child, filepath.Join(r, e.Name()))
			} else if rc := c.resolve(child); rc.exists {
				walk(child, rc.path)
			}
		}
	}
	for _, g := range grants {
		if !filepath.IsAbs(g) {
			continue
		}
		g = filepath.Clean(g)
		if r := c.resolve(g); r.exists {
			walk(g, r.path)
		}
	}
	return out
}

// resolve is p with its symlinks resolved as far as it exists: a secret
// place not made yet, under a linked directory, is where the link leads.
// Each path on the way is looked at once per carver.
func (c *carver) resolve(p string) resolved {
	if r, ok := c.resolved[p]; ok {
		return r
	}
	parent := c.resolve(filepath.Dir(p))
	r := resolved{path: filepath.Join(parent.path, filepath.Base(p))}
	if parent.exists {
		info, err := os.Lstat(r.path)
		r.exists = err == nil
		if r.exists && info.Mode()&os.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(r.path)
			r.path, r.exists = target, err == nil
			if err != nil {
				r.path = filepath.Join(parent.path, filepath.Base(p))
			}
		}
	}
	c.resolved[p] = r
	return r
}

// within reports whether p is dir or beneath it.
func within(p, dir string) bool {
	return p == dir || dir == "/" || (strings.HasPrefix(p, dir) && p[len(dir)] == '/')
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

// workspaceCache is the cache directory of the confined commands that
// run in workspace ws: their Go build cache ($GOCACHE), and
// $XDG_CACHE_HOME and npm's cache for the rest. A build needs a writable
// cache (with a read-only one, go build fails with "package fmt is not in
// std"), but a cache shared by two workspaces is a way out: a hostile
// repository's script plants a compiled package in it, and the next build
// in another project links it into a binary the person runs unconfined.
// So each workspace has its own, named by the hash of its path and the
// directory's identity (device, inode and, where the file system keeps
// it, birth time), and its commands may write no other.
func workspaceCache(getenv func(string) string, ws string) string {
	base := getenv("XDG_CACHE_HOME")
	if !filepath.IsAbs(base) {
		home := getenv("HOME")
		if !filepath.IsAbs(home) {
			return ""
		}
		base = filepath.Join(home, ".cache")
	}
	// The directory's identity goes into the name with its path: a
	// project removed and another cloned at the same path, or a symlink
	// moved to another, must not find the first one's cache.
	key := filepath.Clean(ws)
	if id, err := fileid.Stat(ws); err == nil {
		key += fmt.Sprintf("\x00%d %d %d", id.Dev, id.Ino, id.Birth)
	}
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(base, "retrace", "sandbox", hex.EncodeToString(sum[:8]))
}

// cacheEnv points the caches of what commands run into the workspace's
// cache directory.
func cacheEnv(cache string) []string {
	return []string{
		"XDG_CACHE_HOME=" + cache,
		"GOCACHE=" + filepath.Join(cache, "go-build"),
		"npm_config_cache=" + filepath.Join(cache, "npm"),
	}
}
