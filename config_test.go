package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"retrace/agent/llmserver"
	"retrace/agent/sandbox"
	"retrace/state"
)

func TestConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "retrace", "config.toml")
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`model = "file-model"
base_url = "https://file.example/v1/"
api_key_env = "FILE_KEY"
context_window = 4096
theme = "light"
allowed_tools = ["run_command"]
`)
	env := map[string]string{"XDG_CONFIG_HOME": dir, "FILE_KEY": "k-file"}
	getenv := func(k string) string { return env[k] }

	c, err := loadConfig(modelFlags{}, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "file-model" || c.BaseURL != "https://file.example/v1" || c.apiKey != "k-file" || c.KeySource != "$FILE_KEY" ||
		c.ContextWindow != 4096 || c.Theme != "light" || len(c.AllowedTools) != 1 || c.MaxIterations != 20 || c.File != file {
		t.Fatalf("from the file: %+v", c)
	}

	env["RETRACE_MODEL"], env["OPENAI_BASE_URL"] = "env-model", "https://env.example/v1"
	c, _ = loadConfig(modelFlags{}, getenv)
	if c.Model != "env-model" || c.BaseURL != "https://env.example/v1" {
		t.Fatalf("the environment beats the file: %+v", c)
	}

	c, _ = loadConfig(modelFlags{model: "flag-model", baseURL: "http://localhost:11434/v1", apiKey: "k-flag", maxIterations: 5}, getenv)
	if c.Model != "flag-model" || c.BaseURL != "http://localhost:11434/v1" || c.apiKey != "k-flag" || c.MaxIterations != 5 {
		t.Fatalf("flags beat everything: %+v", c)
	}
	if strings.Contains(c.String(), "k-flag") {
		t.Fatal("String shows the key")
	}

	delete(env, "XDG_CONFIG_HOME")
	env["HOME"] = t.TempDir()
	c, err = loadConfig(modelFlags{}, func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "k-env"
		}
		return getenv(k)
	})
	if err != nil || c.Model != "env-model" || c.apiKey != "k-env" || c.File != "" {
		t.Fatalf("no config file at all: %+v %v", c, err)
	}
}

func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.toml")
	getenv := func(string) string { return "" }
	for name, tc := range map[string]struct {
		file, want string
		flags      modelFlags
	}{
		"a bad base URL":                    {"", "not an http(s) URL", modelFlags{baseURL: "localhost:11434", apiKey: "k"}},
		"a wrong value for a known setting": {`model = 3`, "c.toml", modelFlags{apiKey: "k"}},
		"a negative size cap":               {`max_file_mib = -1`, "max_file_mib is -1", modelFlags{apiKey: "k"}},
		"a negative reply cap":              {`max_reply_mib = -1`, "max_reply_mib is -1; it is a size in MiB, 1 to 1024 (default 2)", modelFlags{apiKey: "k"}},
		"a reply cap past a GiB":            {`max_reply_mib = 1025`, "max_reply_mib is 1025", modelFlags{apiKey: "k"}},
		"not TOML":                          {`model = `, "c.toml", modelFlags{apiKey: "k"}},
		"an unknown allowed tool":           {`allowed_tools = ["rm"]`, `"rm"`, modelFlags{apiKey: "k"}},
		"a missing --config file":           {"-", "does not exist", modelFlags{apiKey: "k"}},
		"an unknown sandbox mode":           {`sandbox = "strict"`, `"strict"; the modes are workspace, workspace-no-network, off`, modelFlags{apiKey: "k"}},
		"a relative sandbox_deny":           {`sandbox_deny = ["secrets"]`, `sandbox_deny: "secrets" is not a full path; write it from / or ~/`, modelFlags{apiKey: "k"}},
		"a ~ path with no HOME":             {`sandbox_write = ["~/.m2"]`, `sandbox_write: "~/.m2" starts with ~, and HOME is not set`, modelFlags{apiKey: "k"}},
		"~user is no path":                  {`sandbox_write = ["~bob/.m2"]`, `"~bob/.m2" is not a full path`, modelFlags{apiKey: "k"}},
	} {
		t.Run(name, func(t *testing.T) {
			tc.flags.configPath = file
			if tc.file == "-" {
				tc.flags.configPath = filepath.Join(dir, "missing.toml")
			} else if err := os.WriteFile(file, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := loadConfig(tc.flags, getenv)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
	// A missing key is no error when loading: opening a session to read
	// needs none. Sending does, to a remote endpoint: the endpoint says
	// what to set. Local servers need none.
	empty := filepath.Join(dir, "empty.toml")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := loadConfig(modelFlags{configPath: empty}, getenv)
	if err != nil {
		t.Fatalf("no key, remote endpoint: loading refused: %v", err)
	}
	ep, err := c.endpoint(state.Endpoint{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ep.KeyProblem(); err == nil || !strings.Contains(err.Error(), "no API key for https://api.openai.com/v1: set OPENAI_API_KEY") {
		t.Fatalf("sending with no key: %v", err)
	}
	for _, host := range []string{"http://localhost:8080/v1", "http://127.0.0.1:1234/v1", "http://192.168.1.20:11434/v1", "http://[::1]:8000/v1", "http://gpu.local/v1"} {
		c, err := loadConfig(modelFlags{baseURL: host, configPath: empty}, getenv)
		if err != nil {
			t.Fatal(err)
		}
		if ep, _ := c.endpoint(state.Endpoint{}, nil); ep.KeyProblem() != nil {
			t.Errorf("%s needs no key: %v", host, ep.KeyProblem())
		}
	}
}

// A session remembers its endpoint: a resumed one talks to the model it
// recorded unless a flag or the environment names another; the config
// file and the defaults only fill in. The recorded key variable goes with
// the recorded base URL.
func TestEndpointOfASession(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(file, []byte("model = \"file-model\"\nbase_url = \"https://file.example/v1\"\napi_key_env = \"FILE_KEY\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"FILE_KEY": "k-file", "LOCAL_KEY": "k-local"}
	getenv := func(k string) string { return env[k] }
	recorded := state.Endpoint{Model: "qwen", BaseURL: "http://localhost:11434/v1", KeyEnv: "LOCAL_KEY"}
	for _, c := range []struct {
		name  string
		flags modelFlags
		env   map[string]string
		rec   state.Endpoint
		want  state.Endpoint
		key   string
	}{
		{"a new session: the file", modelFlags{}, nil, state.Endpoint{},
			state.Endpoint{Model: "file-model", BaseURL: "https://file.example/v1", KeyEnv: "FILE_KEY"}, "k-file"},
		{"a resumed session: what it recorded", modelFlags{}, nil, recorded, recorded, "k-local"},
		{"a flag's model over the recorded one", modelFlags{model: "llama"}, nil, recorded,
			state.Endpoint{Model: "llama", BaseURL: "http://localhost:11434/v1", KeyEnv: "LOCAL_KEY"}, "k-local"},
		{"the environment's base URL: the file's key variable", modelFlags{}, map[string]string{"OPENAI_BASE_URL": "https://env.example/v1/"}, recorded,
			state.Endpoint{Model: "qwen", BaseURL: "https://env.example/v1", KeyEnv: "FILE_KEY"}, "k-file"},
		{"--api-key over every variable", modelFlags{apiKey: "k-flag"}, nil, recorded, recorded, "k-flag"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.flags.configPath = file
			for k, v := range c.env {
				env[k] = v
			}
			defer func() {
				for k := range c.env {
					delete(env, k)
				}
			}()
			cfg, err := loadConfig(c.flags, getenv)
			if err != nil {
				t.Fatal(err)
			}
			ep, err := cfg.endpoint(c.rec, nil)
			if err != nil || ep.Endpoint != c.want || ep.URL != c.want.BaseURL || ep.APIKey != c.key {
				t.Fatalf("got %+v at %s with key %q (%v); want %+v with %q", ep.Endpoint, ep.URL, ep.APIKey, err, c.want, c.key)
			}
		})
	}
	// A recorded base URL that is not a URL is refused when the session
	// is opened, with the reason.
	cfg, _ := loadConfig(modelFlags{configPath: file}, getenv)
	if _, err := cfg.endpoint(state.Endpoint{Model: "m", BaseURL: "localhost:11434"}, nil); err == nil || !strings.Contains(err.Error(), "not an http(s) URL") {
		t.Fatalf("a bad recorded URL: %v", err)
	}
}

// testConfig is the configuration flags would give: model at baseURL with
// key, no config file, nothing from the environment.
func testConfig(t testing.TB, model, baseURL, key string) config {
	t.Helper()
	empty := filepath.Join(t.TempDir(), "empty.toml")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := loadConfig(modelFlags{model: model, baseURL: baseURL, apiKey: key, configPath: empty}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The sandbox setting reaches the session: the default confines commands
// to the workspace, and the file may ask for no network or none at all.
func TestConfigSandbox(t *testing.T) {
	dir := t.TempDir()
	for text, want := range map[string]sandbox.Mode{
		"":                                 sandbox.Workspace,
		`sandbox = "workspace"`:            sandbox.Workspace,
		`sandbox = "workspace-no-network"`: sandbox.WorkspaceNoNetwork,
		`sandbox = "off"`:                  sandbox.Off,
	} {
		file := filepath.Join(dir, "c.toml")
		if err := os.WriteFile(file, []byte(text+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := loadConfig(modelFlags{configPath: file, apiKey: "k"}, func(string) string { return "" })
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if got := c.session(nil, nil, false, nil).Sandbox; c.Sandbox != want || got != want {
			t.Errorf("%q: config %v, session %v; want %v", text, c.Sandbox, got, want)
		}
	}
}

// sandbox_deny, sandbox_write and sandbox_agents reach the session's
// tools, ~ read as the home directory.
func TestConfigSandboxReach(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.toml")
	body := "sandbox_deny = [\"~/work/secrets\", \"/srv/keys/\"]\nsandbox_write = [\"~/.m2\"]\nsandbox_agents = true\n"
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": "/home/u"}
	c, err := loadConfig(modelFlags{configPath: file, apiKey: "k"}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	r := c.session(nil, nil, false, nil).Reach
	if strings.Join(r.Deny, " ") != "/home/u/work/secrets /srv/keys" || strings.Join(r.Write, " ") != "/home/u/.m2" || !r.Agents {
		t.Fatalf("the session's reach: %+v", r)
	}
}

// exclude and max_file_mib reach the workspace watcher's options, and
// max_reply_mib the model's.
func TestConfigFiles(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.toml")
	if err := os.WriteFile(file, []byte("exclude = [\"*.log\", \"data/\"]\nmax_file_mib = 2\nmax_reply_mib = 8\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := loadConfig(modelFlags{configPath: file}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.Files.Exclude, " ") != "*.log data/" || c.Files.MaxFileSize != 2<<20 {
		t.Fatalf("files options %+v", c.Files)
	}
	if s := c.session(nil, nil, false, nil); s.Files.MaxFileSize != 2<<20 || len(s.Files.Exclude) != 2 || s.MaxReply != 8<<20 {
		t.Fatalf("session config %+v, max reply %d", s.Files, s.MaxReply)
	}
}

// A setting retrace does not know is named in a warning, with the ones
// it knows, and the rest of the file still counts: a typo in one line
// (or a setting from a newer retrace) must not stop the start.
func TestConfigUnknownSettingWarns(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.toml")
	body := "modle = \"x\"\nmodel = \"file-model\"\n\n[colours]\naccent = \"red\"\n"
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := loadConfig(modelFlags{configPath: file, apiKey: "k"}, func(string) string { return "" })
	if err != nil {
		t.Fatalf("an unknown setting refused the start: %v", err)
	}
	if c.Model != "file-model" {
		t.Fatalf("the known settings beside it are lost: model %q", c.Model)
	}
	want := []string{
		`config ` + file + `: unknown settings "modle" (did you mean "model"?), "colours" are ignored`,
		"the settings are model, base_url, api_key_env, context_window, theme, allowed_tools, max_iterations, sandbox, sandbox_deny, sandbox_write, sandbox_agents, exclude, max_file_mib, max_reply_mib",
	}
	if len(c.Warnings) != 1 {
		t.Fatalf("want one warning, got %q", c.Warnings)
	}
	for _, w := range want {
		if !strings.Contains(c.Warnings[0], w) {
			t.Errorf("warning %q lacks %q", c.Warnings[0], w)
		}
	}
	if n := c.notice(); !strings.Contains(n, `"modle"`) || strings.Contains(n, "base_url") {
		t.Errorf("the interface's short notice: %q", n)
	}
}

// The warning is printed on stderr and the command goes on.
func TestConfigWarningOnStderr(t *testing.T) {
	e := newRunEnv(t)
	if err := os.MkdirAll(filepath.Join(e.configDir, "retrace"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.configDir, "retrace", "config.toml"), []byte("modle = \"x\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.srv.Enqueue(llmserver.TextReply("hi there"))
	r := e.run(t, "", "--api-key", "k", "hi")
	if r.code != exitOK || strings.TrimSpace(r.stdout) != "hi there" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, `warning: config `) || !strings.Contains(r.stderr, `"modle"`) {
		t.Fatalf("stderr names no unknown setting:\n%s", r.stderr)
	}
}
