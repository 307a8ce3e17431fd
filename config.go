package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/BurntSushi/toml"

	"retrace/agent/llm"
	"retrace/agent/sandbox"
	"retrace/agent/session"
	"retrace/agent/snapshot"
	"retrace/agent/tools"
	"retrace/state"
	"retrace/tui"
)

// config is how retrace reaches its model, merged from (first wins) flags,
// the environment, what a session recorded, the config file, and
// defaults. Model, BaseURL and KeyEnv are the endpoint of a session that
// recorded none; endpoint gives any session's.
type config struct {
	Model         string
	BaseURL       string
	KeyEnv        string // the variable the key is read from
	apiKey        string // never printed, stored or logged: see String
	KeySource     string // where the key came from, for messages
	ContextWindow int
	Theme         string
	AllowedTools  []string
	Sandbox       sandbox.Mode  // how run_command's commands are confined
	Reach         sandbox.Reach // what sandbox_deny, sandbox_write and sandbox_agents add to it
	Files         snapshot.Options
	MaxIterations int
	MaxReply      int    // the most one model reply may carry, in bytes; 0 is the default
	File          string // the config file read, if any
	Path          string // where the config file is (or would be)
	// Warnings are what a person should know about the file that does
	// not stop retrace: settings it does not know, ignored.
	Warnings []string
	// From says where each setting in force comes from, by its name in
	// the config file: a flag, the environment, the file, or the default.
	From map[string]string
	// Project is the project the settings were taken for (forProject):
	// its repository root. projects is what the person's config keeps
	// for each project.
	Project        string
	projects       map[string]projectPrefs
	everywhere     []string // allowed_tools: the tools allowed in every project
	projectWarning string   // what the project's file set that it may not, in a few words
	unknown        []string // those settings, each with a suggestion if one is close

	// The layers of the endpoint: flags and the environment override what
	// a session recorded; the file and the defaults only fill in.
	explicit, fallback state.Endpoint
	apiKeyFlag         string
	getenv             func(string) string
}

// String never shows the key.
func (c config) String() string {
	return fmt.Sprintf("model %s at %s (key from %s)", c.Model, c.BaseURL, c.KeySource)
}

// fileConfig is config.toml.
type fileConfig struct {
	Model         string   `toml:"model"`
	BaseURL       string   `toml:"base_url"`
	APIKeyEnv     string   `toml:"api_key_env"` // the environment variable that holds the key
	ContextWindow int      `toml:"context_window"`
	Theme         string   `toml:"theme"`
	AllowedTools  []string `toml:"allowed_tools"` // gated tools that run without asking
	MaxIterations int      `toml:"max_iterations"`
	Sandbox       string   `toml:"sandbox"` // workspace, workspace-no-network or off
	// SandboxDeny names more places confined commands may neither read
	// nor write, on top of the secret places every command is kept from;
	// SandboxWrite, more directories they may write (a build cache they
	// share with your own builds, ~/.m2); SandboxAgents lets them use
	// your SSH and GPG agents (git push over SSH).
	SandboxDeny   []string `toml:"sandbox_deny"`
	SandboxWrite  []string `toml:"sandbox_write"`
	SandboxAgents bool     `toml:"sandbox_agents"`
	// Exclude lists paths (gitignore patterns) whose changes are not
	// recorded for rollbacks, on top of .gitignore.
	Exclude []string `toml:"exclude"`
	// MaxFileMiB caps the size of a file whose content is kept for a
	// rollback.
	MaxFileMiB int `toml:"max_file_mib"`
	// MaxReplyMiB caps what one model reply may carry: its text,
	// thinking and tool calls together.
	MaxReplyMiB int `toml:"max_reply_mib"`
	// Database is where sessions are kept when neither --db nor
	// RETRACE_DB says: a file, or a postgres:// URL (store_location.go
	// reads it).
	Database string `toml:"database"`
	// Projects keeps the person's settings for one project, by its
	// repository root (config_project.go).
	Projects map[string]projectPrefs `toml:"projects"`
}

// maxReplyMiB is the largest max_reply_mib: a reply is held in memory
// several times over while it is read, stored and sent back, and no
// model writes a GiB in one reply.
const maxReplyMiB = 1024

const (
	defaultModel   = "gpt-4o-mini"
	defaultBaseURL = "https://api.openai.com/v1"
)

// modelFlags are the flags every command that talks to a model takes.
type modelFlags struct {
	model, baseURL, apiKey, configPath string
	contextWindow, maxIterations       int
}

func (m *modelFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&m.model, "model", "", "model name (env RETRACE_MODEL; default "+defaultModel+")")
	fs.StringVar(&m.baseURL, "base-url", "", "OpenAI-compatible endpoint (env OPENAI_BASE_URL; default "+defaultBaseURL+")")
	fs.StringVar(&m.apiKey, "api-key", "", "API key (env OPENAI_API_KEY, or the variable api_key_env names in the config file)")
	fs.StringVar(&m.configPath, "config", "", "config file (default $XDG_CONFIG_HOME/retrace/config.toml)")
	fs.IntVar(&m.contextWindow, "context-window", 0, "the model's context window in tokens (default: known for common models, else 32768)")
	fs.IntVar(&m.maxIterations, "max-iterations", 0, "model replies allowed per task before it stops with an error (default 20)")
}

// knownSettings lists config.toml's keys, from fileConfig itself, so the
// message that names them cannot fall behind.
func knownSettings() []string {
	t := reflect.TypeFor[fileConfig]()
	keys := make([]string, t.NumField())
	for i := range keys {
		keys[i] = t.Field(i).Tag.Get("toml")
	}
	return keys
}

// loadConfig merges the sources. getenv is os.Getenv outside tests.
func loadConfig(m modelFlags, getenv func(string) string) (config, error) {
	path, explicit := m.configPath, m.configPath != ""
	if !explicit {
		path = defaultConfigPath(getenv)
	}
	var fc fileConfig
	c := config{Path: path}
	if path != "" {
		md, err := decodeConfig(path, &fc)
		switch {
		case err == nil:
			c.File = path
			c.warnUnknown(md.Undecoded())
		case errors.Is(err, fs.ErrNotExist) && !explicit:
		case errors.Is(err, fs.ErrNotExist):
			return c, fmt.Errorf("config file %s does not exist", path)
		default:
			return c, fmt.Errorf("config %s: %s", path, oneLine(err.Error()))
		}
	}
	c.explicit = state.Endpoint{Model: first(m.model, getenv("RETRACE_MODEL")), BaseURL: trimURL(first(m.baseURL, getenv("OPENAI_BASE_URL")))}
	file := "config " + path
	c.From = map[string]string{
		"model":          origin(m.model, "--model", getenv("RETRACE_MODEL"), "$RETRACE_MODEL", fc.Model, file),
		"base_url":       origin(m.baseURL, "--base-url", getenv("OPENAI_BASE_URL"), "$OPENAI_BASE_URL", fc.BaseURL, file),
		"context_window": origin(strconv.Itoa(m.contextWindow), "--context-window", strconv.Itoa(fc.ContextWindow), file),
		"max_iterations": origin(strconv.Itoa(m.maxIterations), "--max-iterations", strconv.Itoa(fc.MaxIterations), file),
		"theme":          origin(fc.Theme, file),
		"allowed_tools":  origin(strings.Join(fc.AllowedTools, ","), file),
		"sandbox":        origin(fc.Sandbox, file),
		"sandbox_deny":   origin(strings.Join(fc.SandboxDeny, ","), file),
		"sandbox_write":  origin(strings.Join(fc.SandboxWrite, ","), file),
		"sandbox_agents": origin(map[bool]string{true: "true"}[fc.SandboxAgents], file),
	}
	c.fallback = state.Endpoint{Model: first(fc.Model, defaultModel), BaseURL: trimURL(first(fc.BaseURL, defaultBaseURL)), KeyEnv: first(fc.APIKeyEnv, "OPENAI_API_KEY")}
	c.apiKeyFlag, c.getenv = m.apiKey, getenv
	ep := c.endpointOf(state.Endpoint{})
	c.Model, c.BaseURL, c.KeyEnv = ep.Model, ep.BaseURL, ep.KeyEnv
	c.apiKey, c.KeySource = c.key(ep.KeyEnv)
	c.ContextWindow = firstInt(m.contextWindow, fc.ContextWindow)
	c.MaxIterations = firstInt(m.maxIterations, fc.MaxIterations, 20)
	c.Theme, c.AllowedTools, c.projects = fc.Theme, fc.AllowedTools, fc.Projects
	c.everywhere = fc.AllowedTools
	mode, err := sandbox.ParseMode(fc.Sandbox)
	if err != nil {
		return c, fmt.Errorf("config %s: %w", c.File, err)
	}
	c.Sandbox = mode
	c.Reach.Agents = fc.SandboxAgents
	for _, l := range []struct {
		name  string
		paths []string
		to    *[]string
	}{{"sandbox_deny", fc.SandboxDeny, &c.Reach.Deny}, {"sandbox_write", fc.SandboxWrite, &c.Reach.Write}} {
		for _, p := range l.paths {
			abs, err := configPath(p, getenv)
			if err != nil {
				return c, fmt.Errorf("config %s: %s: %w", c.File, l.name, err)
			}
			*l.to = append(*l.to, abs)
		}
	}
	if fc.MaxFileMiB < 0 {
		return c, fmt.Errorf("config %s: max_file_mib is %d; it is a size in MiB, 1 or more (default 10)", c.File, fc.MaxFileMiB)
	}
	c.Files = snapshot.Options{Exclude: fc.Exclude, MaxFileSize: int64(fc.MaxFileMiB) << 20}
	if fc.MaxReplyMiB < 0 || fc.MaxReplyMiB > maxReplyMiB {
		return c, fmt.Errorf("config %s: max_reply_mib is %d; it is a size in MiB, 1 to %d (default %d)", c.File, fc.MaxReplyMiB, maxReplyMiB, llm.DefaultMaxReply>>20)
	}
	c.MaxReply = fc.MaxReplyMiB << 20
	return c, c.validate()
}

// warnUnknown names the settings of the file that retrace does not know.
// They are ignored, not refused: a typo in one line, or a setting of a
// newer retrace, should not stop the start, and the warning says which
// setting was meant.
func (c *config) warnUnknown(keys []toml.Key) {
	seen, known := map[string]bool{}, knownSettings()
	for _, k := range keys {
		name := k[0] // an unknown table's keys go with the table
		inKnown := slices.Contains(known, name)
		if inKnown {
			name = k.String() // a known table's key is named whole
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		q := strconv.Quote(name)
		if near := closest(name, known); near != "" && !inKnown {
			q += fmt.Sprintf(" (did you mean %q?)", near)
		}
		c.unknown = append(c.unknown, q)
	}
	if len(c.unknown) == 0 {
		return
	}
	what := "unknown setting " + c.unknown[0] + " is ignored"
	if len(c.unknown) > 1 {
		what = "unknown settings " + strings.Join(c.unknown, ", ") + " are ignored"
	}
	c.Warnings = append(c.Warnings, fmt.Sprintf("config %s: %s; the settings are %s", c.File, what, strings.Join(known, ", ")))
}

// notice is the warnings in a few words, for the interface's status line.
func (c config) notice() string {
	if len(c.unknown) == 0 {
		if c.projectWarning != "" {
			return c.projectWarning
		}
		return ""
	}
	return "config: ignored unknown " + strings.Join(c.unknown, ", ")
}

// loadConfig loads the configuration for a command, saying its warnings
// on stderr.
func (c *cli) loadConfig(m modelFlags) (config, error) {
	cfg, err := loadConfig(m, os.Getenv)
	for _, w := range cfg.Warnings {
		fmt.Fprintf(c.stderr, "warning: %s\n", w)
	}
	return cfg, err
}

func trimURL(u string) string { return strings.TrimRight(u, "/") }

// endpointOf is the endpoint of a session that recorded rec: what flags
// and the environment name, else what the session recorded, else the
// config file's and the defaults. The recorded key variable goes with the
// recorded base URL only.
func (c config) endpointOf(rec state.Endpoint) state.Endpoint {
	ep := state.Endpoint{
		Model:   first(c.explicit.Model, rec.Model, c.fallback.Model),
		BaseURL: first(c.explicit.BaseURL, rec.BaseURL, c.fallback.BaseURL),
	}
	ep.KeyEnv = c.fallback.KeyEnv
	if rec.KeyEnv != "" && ep.BaseURL == rec.BaseURL {
		ep.KeyEnv = rec.KeyEnv
	}
	return ep
}

// key is the API key and where it came from: --api-key, else the
// variable the endpoint names.
func (c config) key(env string) (key, source string) {
	switch {
	case c.apiKeyFlag != "":
		return c.apiKeyFlag, "--api-key"
	case c.getenv(env) != "":
		return c.getenv(env), "$" + env
	}
	return "", "nowhere"
}

// endpoint resolves a session's endpoint, starting the demo model when
// the session talks to it.
func (c config) endpoint(rec state.Endpoint, dm *demoModel) (session.Endpoint, error) {
	ep := c.endpointOf(rec)
	out := session.Endpoint{Endpoint: ep, URL: ep.BaseURL}
	if ep.BaseURL == demoEndpoint {
		url, err := dm.url()
		if err != nil {
			return out, err
		}
		out.URL = url
		return out, nil
	}
	if err := checkURL(ep.BaseURL); err != nil {
		return out, err
	}
	out.APIKey, _ = c.key(ep.KeyEnv)
	return out, nil
}

// checkURL refuses a base URL that is not an http(s) URL.
func checkURL(base string) error {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("base URL %q is not an http(s) URL; an OpenAI-compatible one looks like https://api.openai.com/v1 or http://localhost:11434/v1", base)
	}
	return nil
}

// validate checks what the command line and the file say. A missing key
// is not an error here: opening a session to read needs none, and
// sending says what to set.
func (c config) validate() error {
	if c.BaseURL != demoEndpoint {
		if err := checkURL(c.BaseURL); err != nil {
			return err
		}
	}
	if c.ContextWindow < 0 || c.MaxIterations < 1 {
		return fmt.Errorf("context window and max iterations must be positive (got %d and %d)", c.ContextWindow, c.MaxIterations)
	}
	for _, t := range c.AllowedTools {
		if !tools.IsGated(t) {
			return fmt.Errorf("config %s: allowed_tools names %q; the tools that ask first are %s", c.File, t, strings.Join(tools.Gated(), ", "))
		}
	}
	return nil
}

// session is the configuration of a session controller in ws. The
// interface may take back text it showed, and opens a session another
// process writes read-only; `retrace run` may do neither.
func (c config) session(ws *tools.Workspace, allowed []string, interactive bool, dm *demoModel) session.Config {
	return session.Config{
		Resolve:       func(rec state.Endpoint) (session.Endpoint, error) { return c.endpoint(rec, dm) },
		ContextWindow: c.ContextWindow, MaxIterations: c.MaxIterations,
		Workspace: ws, Allowed: allowed, RestartOK: interactive, ReadOnlyWhenBusy: interactive,
		Sandbox: c.Sandbox, Reach: c.Reach, Files: c.Files, MaxReply: c.MaxReply,
		Instructions: session.Instructions{UserDir: c.userDir()},
	}
}

// settings are the preferences in force, each with where it comes from,
// for the interface's /memory view. The API key is never shown: only
// where it comes from.
func (c config) settings() []tui.Setting {
	window := "the model's own"
	if c.ContextWindow > 0 {
		window = strconv.Itoa(c.ContextWindow) + " tokens"
	}
	allowed := "none (each asks first)"
	if len(c.AllowedTools) > 0 {
		allowed = strings.Join(c.AllowedTools, ", ")
	}
	theme := first(c.Theme, "dark")
	key := "not set"
	if c.apiKey != "" {
		key = "set"
	}
	instructions := "none"
	if dir := c.userDir(); dir != "" {
		instructions = filepath.Join(dir, "AGENTS.md")
	}
	return []tui.Setting{
		{Name: "model", Value: c.Model, From: c.From["model"]},
		{Name: "base_url", Value: c.BaseURL, From: c.From["base_url"]},
		{Name: "api key", Value: key, From: c.KeySource},
		{Name: "context_window", Value: window, From: c.From["context_window"]},
		{Name: "max_iterations", Value: strconv.Itoa(c.MaxIterations), From: c.From["max_iterations"]},
		{Name: "theme", Value: theme, From: c.From["theme"]},
		{Name: "allowed_tools", Value: allowed, From: c.From["allowed_tools"]},
		{Name: "sandbox", Value: c.Sandbox.String(), From: c.From["sandbox"]},
		{Name: "sandbox_deny", Value: listOrNone(c.Reach.Deny), From: c.From["sandbox_deny"]},
		{Name: "sandbox_write", Value: listOrNone(c.Reach.Write), From: c.From["sandbox_write"]},
		{Name: "sandbox_agents", Value: strconv.FormatBool(c.Reach.Agents), From: c.From["sandbox_agents"]},
		{Name: "your AGENTS.md", Value: instructions, From: "beside the config file"},
	}
}

// userDir is the directory of the person's own files, beside the config
// file: their AGENTS.md, for every project.
func (c config) userDir() string {
	if c.Path == "" {
		return ""
	}
	return filepath.Dir(c.Path)
}

// saveTheme records the theme in the config file, keeping the rest of it
// as it was. The line goes where TOML reads a top-level key: in place of
// the top level's theme line, or else above the first table (an
// approval's [projects."…"] table may end the file).
func (c config) saveTheme(name string) error {
	if c.Path == "" {
		return errors.New("no place for a config file: set XDG_CONFIG_HOME or HOME")
	}
	old, err := readConfig(c.Path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("config %s: %w", c.Path, err)
	}
	next := withTopLevel(old, "theme", strconv.Quote(name))
	var check fileConfig
	if _, err := toml.Decode(string(next), &check); err != nil || check.Theme != name {
		return fmt.Errorf("config %s: cannot set the theme in it (%v); set theme = %q by hand", c.Path, err, name)
	}
	return replaceConfig(c.Path, next)
}

// withTopLevel is the config text with the top-level key set to value
// (TOML, quoted already): its line replaced when the top level has one,
// else added above the first table header, else at the end.
func withTopLevel(text []byte, key, value string) []byte {
	line := key + " = " + value
	lines := strings.Split(strings.TrimRight(string(text), "\n"), "\n")
	if len(text) == 0 {
		lines = nil
	}
	at := len(lines)
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "[") {
			at = i
			break
		}
		if k, _, ok := strings.Cut(l, "="); ok && strings.TrimSpace(k) == key {
			lines[i] = line
			return []byte(strings.Join(lines, "\n") + "\n")
		}
	}
	// Above the table, with the blank lines before it kept below the key.
	for at > 0 && strings.TrimSpace(lines[at-1]) == "" {
		at--
	}
	lines = slices.Insert(lines, at, line)
	return []byte(strings.Join(lines, "\n") + "\n")
}

// maxConfig is the largest config file read: settings, not data.
const maxConfig = 1 << 20

// readConfig reads a config file: a regular file of at most maxConfig
// bytes. A project's file comes with the repository, so it may be a FIFO
// (opened without blocking, then refused) or a link to /dev/zero
// (refused, not read until memory runs out). A missing file is
// fs.ErrNotExist.
func readConfig(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	b, err := io.ReadAll(io.LimitReader(f, maxConfig+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxConfig {
		return nil, fmt.Errorf("larger than %d KiB, which is more than settings take", maxConfig>>10)
	}
	return b, nil
}

// decodeConfig reads the config file at path into v.
func decodeConfig(path string, v any) (toml.MetaData, error) {
	b, err := readConfig(path)
	if err != nil {
		return toml.MetaData{}, err
	}
	return toml.Decode(string(b), v)
}

// replaceConfig writes the person's config whole under a temporary name,
// synced, and renames it over the old: a crash leaves the old file or
// the new, never a truncated one. A config that is a link (to a dotfiles
// repository, say) stays one: the file it names is replaced.
func replaceConfig(path string, data []byte) error {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	mode := fs.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm() // the person's choice, kept
	}
	dir := filepath.Dir(path)
	made, err := mkdirs(dir)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".new-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	// The rename, and each directory made for the file, is there after a
	// crash only once the directory that holds the name is synced.
	if err := syncDir(dir); err != nil {
		return err
	}
	for _, d := range made {
		if err := syncDir(filepath.Dir(d)); err != nil {
			return err
		}
	}
	return nil
}

// mkdirs makes dir and the parents it lacks, and returns those it made.
func mkdirs(dir string) ([]string, error) {
	var missing []string
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
	}
	return missing, os.MkdirAll(dir, 0o700)
}

// syncDir makes the names in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	serr := d.Sync()
	if cerr := d.Close(); serr == nil {
		serr = cerr
	}
	return serr
}

// listOrNone is a list setting as the /memory view shows it.
func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}

// configPath is a path the config file names: absolute, or under the
// home directory as ~/path. A relative path is refused: relative to what
// is not clear, and a sandbox rule must be.
func configPath(p string, getenv func(string) string) (string, error) {
	if rest, ok := strings.CutPrefix(p, "~"); ok && (rest == "" || rest[0] == '/') {
		home := getenv("HOME")
		if !filepath.IsAbs(home) {
			return "", fmt.Errorf("%q starts with ~, and HOME is not set", p)
		}
		p = filepath.Join(home, rest)
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q is not a full path; write it from / or ~/", p)
	}
	return filepath.Clean(p), nil
}

func defaultConfigPath(getenv func(string) string) string {
	dir := getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(dir) {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "retrace", "config.toml")
}

// origin is where a setting comes from: the source named after the
// first value set (pairs of value and source, a number 0 counting as
// unset), else the default.
func origin(pairs ...string) string {
	for i := 0; i+1 < len(pairs); i += 2 {
		if v := pairs[i]; v != "" && v != "0" {
			return pairs[i+1]
		}
	}
	return "default"
}

func first(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func firstInt(vs ...int) int {
	for _, v := range vs {
		if v != 0 {
			return v
		}
	}
	return 0
}
