package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		"no key for a remote endpoint": {"", "no API key for https://api.openai.com/v1", modelFlags{}},
		"a bad base URL":               {"", "not an http(s) URL", modelFlags{baseURL: "localhost:11434", apiKey: "k"}},
		"a typo in the file":           {`modle = "x"`, `unknown setting "modle"`, modelFlags{apiKey: "k"}},
		"not TOML":                     {`model = `, "c.toml", modelFlags{apiKey: "k"}},
		"an unknown allowed tool":      {`allowed_tools = ["rm"]`, `"rm"`, modelFlags{apiKey: "k"}},
		"a missing --config file":      {"-", "does not exist", modelFlags{apiKey: "k"}},
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
	empty := filepath.Join(dir, "empty.toml")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"http://localhost:8080/v1", "http://127.0.0.1:1234/v1", "http://192.168.1.20:11434/v1", "http://[::1]:8000/v1", "http://gpu.local/v1"} {
		if _, err := loadConfig(modelFlags{baseURL: host, configPath: empty}, getenv); err != nil {
			t.Errorf("%s needs no key: %v", host, err)
		}
	}
}
