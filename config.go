package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"

	"retrace/agent/session"
	"retrace/agent/tools"
)

// config is how retrace reaches its model, merged from (first wins) flags,
// the environment, the config file, and defaults.
type config struct {
	Model         string
	BaseURL       string
	apiKey        string // never printed, stored or logged: see String
	KeySource     string // where the key came from, for messages
	ContextWindow int
	Theme         string
	AllowedTools  []string
	MaxIterations int
	File          string // the config file read, if any
	Path          string // where the config file is (or would be)
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
}

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

// loadConfig merges the sources. getenv is os.Getenv outside tests.
func loadConfig(m modelFlags, getenv func(string) string) (config, error) {
	path, explicit := m.configPath, m.configPath != ""
	if !explicit {
		path = defaultConfigPath(getenv)
	}
	var fc fileConfig
	c := config{Path: path}
	if path != "" {
		md, err := toml.DecodeFile(path, &fc)
		switch {
		case err == nil:
			c.File = path
			if undecoded := md.Undecoded(); len(undecoded) > 0 {
				return c, fmt.Errorf("config %s: unknown setting %q (known: model, base_url, api_key_env, context_window, theme, allowed_tools, max_iterations)", path, undecoded[0].String())
			}
		case errors.Is(err, fs.ErrNotExist) && !explicit:
		case errors.Is(err, fs.ErrNotExist):
			return c, fmt.Errorf("config file %s does not exist", path)
		default:
			return c, fmt.Errorf("config %s: %s", path, oneLine(err.Error()))
		}
	}
	c.Model = first(m.model, getenv("RETRACE_MODEL"), fc.Model, defaultModel)
	c.BaseURL = strings.TrimRight(first(m.baseURL, getenv("OPENAI_BASE_URL"), fc.BaseURL, defaultBaseURL), "/")
	keyEnv := first(fc.APIKeyEnv, "OPENAI_API_KEY")
	switch {
	case m.apiKey != "":
		c.apiKey, c.KeySource = m.apiKey, "--api-key"
	case getenv(keyEnv) != "":
		c.apiKey, c.KeySource = getenv(keyEnv), "$"+keyEnv
	default:
		c.KeySource = "nowhere"
	}
	c.ContextWindow = firstInt(m.contextWindow, fc.ContextWindow)
	c.MaxIterations = firstInt(m.maxIterations, fc.MaxIterations, 20)
	c.Theme, c.AllowedTools = fc.Theme, fc.AllowedTools
	return c, c.validate(keyEnv)
}

func (c config) validate(keyEnv string) error {
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("base URL %q is not an http(s) URL; an OpenAI-compatible one looks like https://api.openai.com/v1 or http://localhost:11434/v1", c.BaseURL)
	}
	if c.apiKey == "" && !isLocal(u.Hostname()) {
		return fmt.Errorf("no API key for %s: set %s, pass --api-key, or name the variable with api_key_env in the config file (local servers such as Ollama need none)", c.BaseURL, keyEnv)
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
func (c config) session(ws *tools.Workspace, allowed []string, interactive bool) session.Config {
	return session.Config{
		BaseURL: c.BaseURL, APIKey: c.apiKey, Model: c.Model,
		ContextWindow: c.ContextWindow, MaxIterations: c.MaxIterations,
		Workspace: ws, Allowed: allowed, RestartOK: interactive, ReadOnlyWhenBusy: interactive,
	}
}

var themeLine = regexp.MustCompile(`(?m)^\s*theme\s*=.*$`)

// saveTheme records the theme in the config file, keeping the rest of it
// as it was.
func (c config) saveTheme(name string) error {
	if c.Path == "" {
		return errors.New("no place for a config file: set XDG_CONFIG_HOME or HOME")
	}
	line := fmt.Sprintf("theme = %q", name)
	b, err := os.ReadFile(c.Path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		b = []byte(line + "\n")
	case err != nil:
		return err
	case themeLine.Match(b):
		b = themeLine.ReplaceAll(b, []byte(line))
	default:
		b = append(append(b, '\n'), line+"\n"...)
	}
	if err := os.MkdirAll(filepath.Dir(c.Path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(c.Path, b, 0o600)
}

// isLocal reports a host that is this machine or a private network, where
// model servers usually need no key.
func isLocal(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || strings.HasSuffix(host, ".local") || host == "host.docker.internal" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast())
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
