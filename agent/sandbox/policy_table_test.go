package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The sandbox's policy, written down: what a confined command may read,
// what it may write, and what it may neither read nor write. The tests
// hold the code to it in both directions: every grant the code makes is
// named here (a read set widened past it fails), and every path here has
// exactly the access written (a grant that goes missing fails too).

// grant is one rule of the written policy: a directory (and everything
// in it) or a single file, readable or writable.
type grant struct {
	path  string
	write bool
	file  bool
}

// writtenPolicy is the policy for a command in ws with temp dir tmp and
// its workspace's cache, for a user whose HOME is home (laid out as
// fakeHome makes it) and whose PATH is /usr/bin, /bin and home/bin.
func writtenPolicy(home, ws, tmp, cache string) []grant {
	var out []grant
	// The system: programs, libraries, configuration, certificates, DNS,
	// and what ps, nproc and the Go runtime read. Not /run as a whole
	// (session sockets, credentials), not /var, /home, /root, /tmp.
	for _, d := range []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
		"/nix/store", "/var/lib/ca-certificates", "/run/systemd/resolve", "/run/resolvconf", "/run/NetworkManager",
		"/proc", "/sys", "/dev"} {
		if d == "/etc" && os.Geteuid() == 0 {
			out = append(out, etcForRoot()...)
			continue
		}
		out = append(out, grant{path: d})
	}
	// The home directory, less the secret places: each child that holds
	// none whole, and the children of those that do, down to the
	// secret place. So home itself is not listed: it holds .ssh.
	for _, d := range []string{"go", "bin", "other-project", ".pyenv", ".config/go", ".config/nvim",
		".cache/go-build", ".cache/pip", ".local/share/nvim", ".local/bin", ".docker/contexts"} {
		out = append(out, grant{path: filepath.Join(home, d)})
	}
	for _, f := range []string{".gitconfig", ".bashrc", ".config/git/config", ".config/git/ignore"} {
		out = append(out, grant{path: filepath.Join(home, f), file: true})
	}
	out = append(out, grant{path: "/usr/bin"}) // on PATH, as /bin and home/bin are
	// Written: the workspace, the command's own temp dir, its
	// workspace's cache, and the devices that take output.
	for _, d := range []string{ws, tmp, cache} {
		out = append(out, grant{path: d, write: true})
	}
	for _, d := range []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"} {
		out = append(out, grant{path: d, write: true, file: true})
	}
	return out
}

// etcForRoot is /etc as root may read it: all of it but the password
// hashes (shadow, gshadow and their backups), the host's SSH keys, the
// TLS private keys, VPN and Wi-Fi keys, certificates' keys and Kerberos'. /etc, /etc/ssh and /etc/ssl are split into their
// children to leave those out.
func etcForRoot() []grant {
	closed := map[string]bool{
		"/etc/shadow": true, "/etc/shadow-": true, "/etc/gshadow": true, "/etc/gshadow-": true, "/etc/ssl/private": true,
		"/etc/ssh/ssh_host_rsa_key": true, "/etc/ssh/ssh_host_ecdsa_key": true, "/etc/ssh/ssh_host_ed25519_key": true, "/etc/ssh/ssh_host_dsa_key": true,
		"/etc/wireguard": true, "/etc/letsencrypt": true, "/etc/NetworkManager/system-connections": true, "/etc/krb5.keytab": true, "/etc/pki/tls/private": true,
	}
	split := map[string]bool{"/etc": true, "/etc/ssh": true, "/etc/ssl": true, "/etc/NetworkManager": true, "/etc/pki": true, "/etc/pki/tls": true}
	var out []grant
	var add func(dir string)
	add = func(dir string) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			info, err := os.Stat(p)
			switch {
			case closed[p] || err != nil:
			case split[p]: // split even with no key in it yet: one made later stays closed
				add(p)
			default:
				out = append(out, grant{path: p, file: !info.IsDir()})
			}
		}
	}
	add("/etc")
	return out
}

// access is what a path allows a command: read, and write.
type access struct{ read, write bool }

// probes are paths and the access the written policy gives them, each
// side of every line it draws.
func probes(home, ws, tmp, cache string) map[string]access {
	none, read, both := access{}, access{read: true}, access{true, true}
	// The system's secrets are closed to root; to anyone else their
	// modes close them already, and the policy leaves /etc whole.
	rootNone := read
	if os.Geteuid() == 0 {
		rootNone = none
	}
	h := func(rel string) string { return filepath.Join(home, rel) }
	return map[string]access{
		filepath.Join(ws, "src", "main.go"): both,
		filepath.Join(tmp, "scratch"):       both,
		filepath.Join(cache, "ab", "cd-a"):  both,
		"/usr/bin/env":                      read,
		"/etc/hostname":                     read,
		"/proc/self/status":                 read,
		"/dev/null":                         both,
		// The home directory, read only: toolchains kept there (pyenv,
		// nvm), settings, other projects, the person's own caches.
		h("go/pkg/mod/m"):            read,
		h(".config/git/config"):      read,
		h(".config/git/ignore"):      read,
		h(".config/go/env"):          read,
		h(".config/nvim/init.lua"):   read,
		h(".gitconfig"):              read,
		h(".bashrc"):                 read,
		h("bin/tool"):                read,
		h("other-project/main.go"):   read,
		h(".pyenv/libexec/pyenv"):    read,
		h(".cache/go-build/ab/cd-a"): read,
		h(".cache/pip/http/x"):       read,
		h(".local/share/nvim/x"):     read,
		h(".local/bin/tool"):         read,
		h(".docker/contexts/meta"):   read,
		// Never: keys, tokens, credentials, password stores, browser
		// profiles, shell history, retrace's own data, settings and
		// caches; nor the listing of home itself (it holds them), the
		// rest of /run, /var and /tmp.
		home:                                                           none,
		h(".ssh/id_ed25519"):                                           none,
		h(".gnupg/private-keys-v1.d/k.key"):                            none,
		h(".aws/credentials"):                                          none,
		h(".azure/msal_token_cache.json"):                              none,
		h(".config/gcloud/credentials.db"):                             none,
		h(".config/gh/hosts.yml"):                                      none,
		h(".netrc"):                                                    none,
		h(".git-credentials"):                                          none,
		h(".config/git/credentials"):                                   none,
		h(".docker/config.json"):                                       none,
		h(".kube/config"):                                              none,
		h(".password-store/github.gpg"):                                none,
		h(".local/share/keyrings/login.keyring"):                       none,
		h(".mozilla/firefox/p/logins.json"):                            none,
		h(".config/google-chrome/Default/Cookies"):                     none,
		h(".config/chromium/Default/Cookies"):                          none,
		h(".bash_history"):                                             none,
		h(".local/share/retrace/retrace.db"):                           none,
		h(".config/retrace/config.toml"):                               none,
		h(".cache/retrace/sandbox/other/x"):                            none,
		filepath.Join(filepath.Dir(ws), "sibling-workspace", "README"): none,
		"/run/user/1000/bus":                                           none,
		"/var/log/syslog":                                              none,
		"/root/.bash_history":                                          none,
		"/etc/shadow":                                                  rootNone,
		"/etc/passwd":                                                  read,
		filepath.Join(os.TempDir(), "someone-elses-file"):              none,
	}
}

// fakeHome is a home directory holding every probe's file, so that the
// policy (which drops paths that do not exist) names what it would on a
// real machine.
func fakeHome(t *testing.T) (home, ws, tmp, cache string) {
	t.Helper()
	base := t.TempDir()
	home, ws, tmp = filepath.Join(base, "home"), filepath.Join(base, "ws"), filepath.Join(base, "cmdtmp")
	// The cache is named by the workspace directory's identity too: it
	// must exist first.
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	cache = workspaceCache(homeEnv(home), ws)
	for p := range probes(home, ws, tmp, cache) {
		if !strings.HasPrefix(p, base) || p == home {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("probe"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return home, ws, tmp, cache
}

func homeEnv(home string) func(string) string {
	return func(k string) string {
		switch k {
		case "HOME":
			return home
		case "PATH":
			return "/usr/bin:/bin:" + filepath.Join(home, "bin")
		}
		return ""
	}
}

// allows is what a policy lets a path do, as Landlock reads its rules: a
// directory's rule covers everything beneath it; a file's, that file.
func (p policy) allows(path string) access {
	under := func(dirs []string) bool {
		return slices.ContainsFunc(dirs, func(d string) bool { return path == d || strings.HasPrefix(path, d+"/") })
	}
	write := under(p.Write) || slices.Contains(p.Devices, path)
	return access{read: write || under(p.Read) || slices.Contains(p.ReadFiles, path), write: write}
}

// The code grants exactly what the written policy does: nothing more
// (a directory added to the read set, a home path widened to its
// parent), nothing less. Paths that do not exist on this machine are left
// out of both, as the code leaves them out.
func TestPolicyIsTheWrittenOne(t *testing.T) {
	home, ws, tmp, cache := fakeHome(t)
	p := newPolicy(Status{Files: true, Network: true, ABI: 4}, Command{Dir: ws}, tmp, cache, homeEnv(home), "")
	var want, got []string
	for _, g := range writtenPolicy(home, ws, tmp, cache) {
		if _, err := os.Stat(g.path); err != nil && !g.write {
			continue
		}
		kind := "read dir "
		switch {
		case g.write && g.file:
			kind = "device   "
		case g.write:
			kind = "write dir"
		case g.file:
			kind = "read file"
		}
		want = append(want, kind+" "+g.path)
	}
	for kind, paths := range map[string][]string{"read dir ": p.Read, "read file": p.ReadFiles, "write dir": p.Write, "device   ": p.Devices} {
		for _, path := range paths {
			got = append(got, kind+" "+path)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	for _, g := range got {
		if !slices.Contains(want, g) {
			t.Errorf("the policy grants %s, which the written policy does not", g)
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("the written policy grants %s, which the policy does not", w)
		}
	}
}

// Every probe has the access the written policy gives it, no more and
// no less.
func TestPolicyProbes(t *testing.T) {
	home, ws, tmp, cache := fakeHome(t)
	p := newPolicy(Status{Files: true, Network: true, ABI: 4}, Command{Dir: ws}, tmp, cache, homeEnv(home), "")
	for path, want := range probes(home, ws, tmp, cache) {
		if got := p.allows(path); got != want {
			t.Errorf("%s: the policy allows %+v, the written policy %+v", path, got, want)
		}
	}
}

// A confined command has the written access to every probe that exists,
// as the kernel enforces it: read by cat (ls for a directory), write by
// opening to append (which changes nothing). The policy's grants are one
// thing; what Landlock makes of the launcher's rules is the other.
func TestPolicyAsTheKernelEnforcesIt(t *testing.T) {
	if Check(Workspace).Unconfined() {
		t.Skip("skipped: no Landlock: " + Check(Workspace).Reason)
	}
	home, ws, _, cache := fakeHome(t)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("PATH", "/usr/bin:/bin:"+filepath.Join(home, "bin"))
	other := filepath.Join(os.TempDir(), "retrace-someone-elses-file-"+filepath.Base(filepath.Dir(home)))
	if err := os.WriteFile(other, []byte("theirs"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(other) })
	want := probes(home, ws, "$TMPDIR", cache)
	delete(want, filepath.Join(os.TempDir(), "someone-elses-file"))
	want[other] = access{}
	var script strings.Builder
	script.WriteString(": > \"$TMPDIR/scratch\"\n")
	for p := range want {
		q := shellQuote(p)
		if strings.HasPrefix(p, "$TMPDIR") {
			q = `"` + p + `"`
		}
		script.WriteString("if [ -d " + q + " ]; then ls " + q + " >/dev/null 2>&1 && echo R; else cat " + q + " >/dev/null 2>&1 && echo R; fi\n")
		script.WriteString("[ -e " + q + " ] && [ ! -d " + q + " ] && (: >> " + q + ") 2>/dev/null && echo W\n")
		script.WriteString("echo '-- " + p + "'\n")
	}
	out, e, err := run(t, Workspace, ws, script.String())
	if err != nil || e != (Exit{}) {
		t.Fatalf("the probe script: %v %+v\n%s", err, e, out)
	}
	var got access
	for _, l := range strings.Split(out, "\n") {
		switch {
		case l == "R":
			got.read = true
		case l == "W":
			got.write = true
		case strings.HasPrefix(l, "-- "):
			p := strings.TrimPrefix(l, "-- ")
			if _, err := os.Stat(os.ExpandEnv(p)); err == nil || strings.HasPrefix(p, "$TMPDIR") {
				if w := want[p]; got != w {
					t.Errorf("%s: a confined command gets %+v, the written policy %+v", p, got, w)
				}
			}
			got = access{}
		}
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
