package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The key's value leaves the command line in every form the flag
// package reads, the flag stays where it was, and nothing after "--" is
// touched: there it is a prompt's word.
func TestSplitSecretsArgs(t *testing.T) {
	cases := []struct {
		name       string
		args, want []string
	}{
		{"two dashes", []string{"run", "--api-key", "k1", "task"}, []string{"run", "--api-key", "(hidden)", "task"}},
		{"one dash", []string{"-api-key", "k1"}, []string{"-api-key", "(hidden)"}},
		{"two dashes with =", []string{"run", "--api-key=k1"}, []string{"run", "--api-key=(hidden)"}},
		{"one dash with =", []string{"-api-key=k1", "task"}, []string{"-api-key=(hidden)", "task"}},
		{"= in the key", []string{"--api-key=a=b"}, []string{"--api-key=(hidden)"}},
		{"after the prompt", []string{"run", "task", "--api-key", "k1"}, []string{"run", "task", "--api-key", "(hidden)"}},
		{"given twice", []string{"--api-key", "k1", "--api-key=k2"}, []string{"--api-key", "(hidden)", "--api-key=(hidden)"}},
		{"after --", []string{"run", "--", "--api-key", "k1", "--api-key=k2"}, []string{"run", "--", "--api-key", "k1", "--api-key=k2"}},
		{"a key that is --", []string{"--api-key", "--", "task"}, []string{"--api-key", "(hidden)", "task"}},
		{"no value", []string{"run", "--api-key"}, []string{"run", "--api-key"}},
		{"empty", []string{"--api-key=", "--api-key", ""}, []string{"--api-key=", "--api-key", ""}},
		{"other flags", []string{"--api-key-file", "f", "--model=api-key", "api-key"}, []string{"--api-key-file", "f", "--model=api-key", "api-key"}},
		{"a database URL with a password", []string{"run", "--db", "postgres://u:pw@h/db", "--db=postgresql://u:pw@h/db"}, []string{"run", "--db", "(hidden)", "--db=(hidden)"}},
		{"a database without one", []string{"--db", "postgres://u@h/db", "--db=/tmp/r.db"}, []string{"--db", "postgres://u@h/db", "--db=/tmp/r.db"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			argv := append([]string{"retrace"}, tc.args...)
			got, _, s := splitSecrets(argv, nil, "")
			if want := append([]string{"retrace"}, tc.want...); !slices.Equal(got, want) {
				t.Fatalf("argv %q, want %q", got, want)
			}
			back, err := s.restore(got, func(string, string) error { return nil })
			if err != nil || !slices.Equal(back, tc.args) {
				t.Fatalf("restored %q (%v), want %q", back, err, tc.args)
			}
		})
	}
}

// The variables that hold keys leave the environment: OpenAI's, the one
// the config file names, and those whose names say they are secrets.
// The rest stay, the CI's run marker among them, and come back as they
// were.
func TestSplitSecretsEnv(t *testing.T) {
	env := []string{
		"PATH=/bin", "OPENAI_API_KEY=k1", "MY_LLM=k2", "GITHUB_TOKEN=t", "PGPASSWORD=p",
		"client_secret=s", "AWS_SECRET_ACCESS_KEY=a", "EMPTY_TOKEN=", "RETRACE_CI_RUN=ci-1", "KEYBOARD=us",
		"RETRACE_DB=postgres://u:pw@h/db", "DATABASE_URL=postgres://u@h/db", "HTTPS_PROXY=http://u:pw@proxy:3128",
	}
	_, kept, s := splitSecrets([]string{"retrace"}, env, "MY_LLM")
	if want := []string{"PATH=/bin", "EMPTY_TOKEN=", "RETRACE_CI_RUN=ci-1", "KEYBOARD=us", "DATABASE_URL=postgres://u@h/db"}; !slices.Equal(kept, want) {
		t.Errorf("kept %q, want %q", kept, want)
	}
	if want := []string{"OPENAI_API_KEY=k1", "MY_LLM=k2", "GITHUB_TOKEN=t", "PGPASSWORD=p", "client_secret=s", "AWS_SECRET_ACCESS_KEY=a",
		"RETRACE_DB=postgres://u:pw@h/db", "HTTPS_PROXY=http://u:pw@proxy:3128"}; !slices.Equal(s.Env, want) {
		t.Errorf("moved %q, want %q", s.Env, want)
	}
	var set []string
	if _, err := s.restore([]string{"retrace"}, func(k, v string) error { set = append(set, k+"="+v); return nil }); err != nil || !slices.Equal(set, s.Env) {
		t.Errorf("restored %q (%v), want %q", set, err, s.Env)
	}
	if _, _, s := splitSecrets([]string{"retrace", "run", "task"}, []string{"PATH=/bin", "OPENAI_API_KEY="}, ""); !s.empty() {
		t.Errorf("no secrets, yet %+v moved", s)
	}
}

// Arguments are put back only where a value was hidden: a hand-made or
// stale list is refused, not applied to whatever argument is there.
func TestRestoreRefusesArgumentsNotHidden(t *testing.T) {
	argv := []string{"retrace", "run", "--api-key", "(hidden)"}
	nop := func(string, string) error { return nil }
	for _, a := range []movedArg{{Index: 0, Arg: "x"}, {Index: 1, Arg: "x"}, {Index: 4, Arg: "x"}, {Index: -1, Arg: "x"}} {
		if got, err := (secrets{Args: []movedArg{a}}).restore(argv, nop); err == nil {
			t.Errorf("%+v restored as %q", a, got)
		}
	}
	if got, err := (secrets{Args: []movedArg{{Index: 1, Arg: "x"}}}).restore(nil, nop); err == nil {
		t.Errorf("restored into no arguments as %q", got)
	}
}

// The key's variable named in the config file is found in the file the
// command will read: --config's (the last given), else the default path.
// A file that does not parse names none.
func TestConfigKeyEnv(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write("retrace/config.toml", `api_key_env = "DEFAULT_LLM"`)
	other := write("other.toml", `api_key_env = "OTHER_LLM"`)
	broken := write("broken.toml", `api_key_env = `)
	getenv := func(k string) string { return map[string]string{"XDG_CONFIG_HOME": dir}[k] }
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "task"}, "DEFAULT_LLM"},
		{[]string{"run", "--config", other, "task"}, "OTHER_LLM"},
		{[]string{"run", "--config=" + broken, "task"}, ""},
		{[]string{"--config", broken, "-config=" + other}, "OTHER_LLM"},
		{[]string{"--config", filepath.Join(dir, "missing.toml")}, ""},
		{[]string{"--", "--config", other}, "DEFAULT_LLM"},
	}
	for _, tc := range cases {
		if got := configKeyEnv(tc.args, getenv); got != tc.want {
			t.Errorf("configKeyEnv(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}
