package main

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// A command retrace runs can read retrace's /proc/PID/cmdline, which
// anyone may read, and its /proc/PID/environ, which root may read and,
// with the sandbox off, the same user. Both show what retrace was
// started with, whatever it changes later (os.Unsetenv changes neither).
// So at start retrace moves its secrets out: it runs itself again with
// each --api-key value replaced by a placeholder and without the
// variables that hold secrets, and hands the secrets over in a memory
// file that no path names (secrets_linux.go). The new process puts them
// back in memory only: into its arguments and, with os.Setenv, into its
// environment, where the rest of retrace reads them as it always did.

// hiddenValue stands in the command line for a value moved out, so that
// ps still shows that the flag was given.
const hiddenValue = "(hidden)"

// keyFlag is the flag whose value is a secret; --db's is one when it is
// a URL with a password.
const keyFlag = "api-key"

// secretSuffixes end the names of the variables taken to hold secrets,
// compared in upper case: OPENAI_API_KEY, AWS_SECRET_ACCESS_KEY,
// GITHUB_TOKEN, CLIENT_SECRET, PGPASSWORD. A name matched by mistake
// costs nothing: the variable is only moved out of /proc's copy of the
// environment, and retrace and its commands see it as before.
var secretSuffixes = []string{"KEY", "TOKEN", "SECRET", "PASSWORD"}

// secrets are what is moved out of the command line and the environment.
type secrets struct {
	// Args are the arguments that held a key, as given, by their index
	// in os.Args.
	Args []movedArg `json:"args,omitempty"`
	// Env are the variables that hold secrets, as NAME=VALUE.
	Env []string `json:"env,omitempty"`
}

// movedArg is one argument moved out of the command line.
type movedArg struct {
	Index int    `json:"index"`
	Arg   string `json:"arg"`
}

func (s secrets) empty() bool { return len(s.Args) == 0 && len(s.Env) == 0 }

// splitSecrets takes the secrets out of argv (os.Args, the program's
// name first) and environ (os.Environ): argv with each key's value
// replaced by hiddenValue, environ without the secret variables, and
// what was taken out. keyEnv is the variable the config file names for
// the key, or "".
func splitSecrets(argv, environ []string, keyEnv string) ([]string, []string, secrets) {
	var s secrets
	argv = slices.Clone(argv)
	for _, name := range []string{keyFlag, "db"} {
		for _, f := range flagArgs(argv[min(1, len(argv)):], name) {
			i := f.at + 1 // flagArgs counts from argv[1]
			value := f.value(argv[i])
			if value == "" || (name == "db" && !hasPassword(value)) {
				continue // no secret
			}
			s.Args = append(s.Args, movedArg{Index: i, Arg: argv[i]})
			argv[i] = strings.TrimSuffix(argv[i], value) + hiddenValue
		}
	}
	kept := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if value != "" && (name == "OPENAI_API_KEY" || name == keyEnv || looksSecret(name) || hasPassword(value)) {
			s.Env = append(s.Env, kv)
			continue
		}
		kept = append(kept, kv)
	}
	return argv, kept, s
}

// looksSecret says whether a variable's name says it holds a secret.
func looksSecret(name string) bool {
	upper := strings.ToUpper(name)
	return slices.ContainsFunc(secretSuffixes, func(s string) bool { return strings.HasSuffix(upper, s) })
}

// hasPassword says whether v is a URL with a password in it: a
// database's (postgres://user:pw@host/db, in --db, RETRACE_DB or
// DATABASE_URL) or a proxy's.
func hasPassword(v string) bool {
	if !strings.Contains(v, "://") {
		return false
	}
	u, err := url.Parse(v)
	if err != nil || u.User == nil {
		return false
	}
	_, ok := u.User.Password()
	return ok
}

// flagArg is where a flag's value is in the command line.
type flagArg struct {
	at     int  // the index of the argument that holds the value
	inline bool // the argument is -name=value, not the value alone
}

// value is the flag's value in arg, the argument at f.at.
func (f flagArg) value(arg string) string {
	if !f.inline {
		return arg
	}
	_, v, _ := strings.Cut(arg, "=")
	return v
}

// flagArgs finds every value of the flag name in args (the arguments
// after the program's name) as the flag package reads them: -name or
// --name with the value after = or in the next argument, wherever it is
// among the others (parseInterspersed), and nothing after "--". An
// argument that only looks like the flag, a prompt's word, may be found
// too; that is harmless, as what is found is put back before the command
// line is parsed.
func flagArgs(args []string, name string) []flagArg {
	var found []flagArg
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		bare, ok := strings.CutPrefix(a, "-")
		if !ok {
			continue
		}
		bare = strings.TrimPrefix(bare, "-")
		switch {
		case bare == name && i+1 < len(args):
			i++
			found = append(found, flagArg{at: i})
		case strings.HasPrefix(bare, name+"="):
			found = append(found, flagArg{at: i, inline: true})
		}
	}
	return found
}

// configKeyEnv is the variable the config file names for the key
// (api_key_env), read from the file loadConfig reads: --config, else the
// default path. A file that is missing or does not parse names none;
// the command reports it when it loads its configuration.
func configKeyEnv(args []string, getenv func(string) string) string {
	path := defaultConfigPath(getenv)
	if found := flagArgs(args, "config"); len(found) > 0 {
		last := found[len(found)-1] // the flag package keeps the last
		if v := last.value(args[last.at]); v != "" {
			path = v
		}
	}
	if path == "" {
		return ""
	}
	var fc fileConfig
	if _, err := decodeConfig(path, &fc); err != nil {
		return ""
	}
	return fc.APIKeyEnv
}

// restore puts s back: the arguments into a copy of argv (os.Args, whose
// arguments hold hiddenValue where s took one out), returned without the
// program's name, and the variables with setenv.
func (s secrets) restore(argv []string, setenv func(name, value string) error) ([]string, error) {
	argv = slices.Clone(argv)
	for _, a := range s.Args {
		if a.Index < 1 || a.Index >= len(argv) || !strings.HasSuffix(argv[a.Index], hiddenValue) {
			return nil, fmt.Errorf("argument %d of %d is not one retrace hid", a.Index, len(argv))
		}
		argv[a.Index] = a.Arg
	}
	for _, kv := range s.Env {
		name, value, _ := strings.Cut(kv, "=")
		if err := setenv(name, value); err != nil {
			return nil, fmt.Errorf("set %s: %w", name, err)
		}
	}
	return argv[min(1, len(argv)):], nil
}
