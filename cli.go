package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"retrace/state/transcript"
	"retrace/storage"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // the command ran and failed
	exitUsage = 2 // the command line was wrong
)

// command is one subcommand of retrace.
type command struct {
	name    string
	args    string // the positional arguments, as usage shows them
	summary string
	nargs   int // how many positional arguments it takes; -1: it checks them itself
	// setup declares the command's flags (beyond --db) and returns the
	// function that runs it.
	setup func(fs *flag.FlagSet) func(ctx context.Context, c *cli, args []string) error
}

// interactive is plain `retrace [flags] [PROMPT]`: the TUI.
var interactive = command{name: "", args: "[PROMPT]", nargs: -1, summary: "the interactive interface", setup: tuiCmd}

var commands = []command{
	{name: "run", args: "PROMPT", nargs: -1, summary: "run one task to the end without a UI: the answer on stdout, progress on stderr", setup: runCmd},
	{name: "sessions", summary: "list sessions, newest first, each with the workspace it works in", setup: sessionsCmd},
	{name: "show", args: "ID", nargs: 1, summary: "show a session's state at its head or at any version", setup: showCmd},
	{name: "log", args: "ID", nargs: 1, summary: "show a session's version tree and branches", setup: logCmd},
	{name: "rollback", args: "ID VERSION", nargs: 2, summary: "move a session's head to VERSION and put back the workspace files as they were there; the next message starts a new branch", setup: rollbackCmd},
	{name: "diff", args: "ID A B", nargs: 3, summary: "the unified diff of the workspace files a session changed, from version A to version B", setup: diffCmd},
	{name: "export", args: "ID", nargs: 1, summary: "write a session to stdout as JSON (every version) or markdown (the head)", setup: exportCmd},
	{name: "import", args: "FILE.json", nargs: 1, summary: "keep a session 'export --format json' wrote (FILE.json, or - for stdin) in the database, every version and branch; --new-id for a copy beside one it holds", setup: importCmd},
	{name: "copy", args: "--to DB [ID...]", nargs: -1, summary: "copy sessions (all, or those named) with every version, branch and file content to another database, a file or a postgres:// URL", setup: copyCmd},
	{name: "rm", args: "ID", nargs: 1, summary: "delete a session and all its versions", setup: rmCmd},
	{name: "memory", args: "[list|add TEXT|rm ID|edit ID [TEXT]|log|restore VERSION|prune [--dry-run]]", nargs: -1, summary: "list and change what the agent remembers across sessions (kept in the database, every change a version of its own; prune folds away what was removed)", setup: memoryCmd},
	{name: "gc", summary: "remove sessions not updated for a while (--older-than 90d) and abandoned branches (--branches); --dry-run lists what would go", setup: gcCmd},
	{name: "compact", summary: "rewrite the database without its free pages, giving the space gc freed back to the disk", setup: compactCmd},
	{name: "verify", summary: "check the whole database file: every page, record and file content (each command checks only what it reads)", setup: verifyCmd},
	{name: "recover", args: "NEW.db", nargs: 1, summary: "copy every intact session and version of a damaged database (--db) into a new file", setup: recoverCmd},
	{name: "bench", summary: "measure the store on a simulated long chat in a fresh file", setup: benchCmd},
	{name: "model-server", summary: "serve retrace's scripted demo model, an OpenAI-compatible endpoint that needs no key", setup: modelServerCmd},
}

// cli is what every command runs with.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	db             string // --db, or "" for the default path
	self           string // how a shell runs this retrace again; "" until needed
}

// run executes one command line and returns the exit code. Everything a
// command prints goes through one inert writer per sink: text from a
// model, a server, a stored session or a workspace file is shown, never
// obeyed, whichever command prints it and however. (The interface draws
// on the terminal itself, and makes its screen inert where it paints it.)
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	out, errOut := transcript.NewWriter(stdout), transcript.NewWriter(stderr)
	defer errOut.Flush()
	defer out.Flush()
	return runInert(ctx, args, &cli{stdin: stdin, stdout: out, stderr: errOut})
}

// runInert executes one command line whose output goes through c's
// writers.
func runInert(ctx context.Context, args []string, c *cli) int {
	stdout, stderr := c.stdout, c.stderr
	if len(args) > 0 && (args[0] == "help" || args[0] == "-h" || args[0] == "--help") {
		usage(stdout)
		return exitOK
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return interactive.execute(ctx, args, c)
	}
	name := args[0]
	for _, cmd := range commands {
		if cmd.name == name {
			return cmd.execute(ctx, args[1:], c)
		}
	}
	if hint := misspelt(args); hint != "" {
		fmt.Fprintf(stderr, "retrace: unknown command %q; %s (To send it to the model: retrace -- %s)\n",
			name, hint, shellWords(leadingWords(args)))
		return exitUsage
	}
	// Other words are a prompt, as other terminal agents take one: the
	// interface starts a session and sends it.
	return interactive.execute(ctx, args, c)
}

// leadingWords are the arguments before the first flag.
func leadingWords(args []string) []string {
	for i, a := range args {
		if strings.HasPrefix(a, "-") {
			return args[:i]
		}
	}
	return args
}

func (cmd command) execute(ctx context.Context, args []string, c *cli) int {
	stdout, stderr := c.stdout, c.stderr
	fs := flag.NewFlagSet("retrace "+cmd.name, flag.ContinueOnError)
	fs.StringVar(&c.db, "db", "", "database: a file, or a postgres:// URL (default $RETRACE_DB, the config's database, or $XDG_DATA_HOME/retrace/retrace.db)")
	runFn := cmd.setup(fs)
	// The flag package would print errors and usage itself; we say each
	// in one line of our own.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	positional, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(stdout, "usage: %s %s[flags]\n\n%s.\n\nflags:\n", cmd.label(), withSpace(cmd.args), capitalize(cmd.summary))
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v; see '%s --help'\n", cmd.label(), err, cmd.label())
		return exitUsage
	}
	if cmd.nargs >= 0 && len(positional) != cmd.nargs {
		fmt.Fprintf(stderr, "%s: want %s, got %d argument(s); see '%s --help'\n",
			cmd.label(), describeArgs(cmd), len(positional), cmd.label())
		return exitUsage
	}
	for i, p := range positional {
		// An empty argument is a missing one, however the shell passed it.
		if cmd.nargs > 0 && strings.TrimSpace(p) == "" {
			fmt.Fprintf(stderr, "%s: argument %d is empty; want %s; see '%s --help'\n", cmd.label(), i+1, describeArgs(cmd), cmd.label())
			return exitUsage
		}
	}
	if err := runFn(ctx, c, positional); err != nil {
		var ue usageError
		var ec exitCode
		switch {
		case errors.As(err, &ue):
			fmt.Fprintf(stderr, "%s: %s\n", cmd.label(), ue.msg)
			return exitUsage
		case errors.As(err, &ec):
			fmt.Fprintf(stderr, "retrace: %s\n", ec.msg)
			return ec.code
		}
		// An error may quote a server or a model: shown, never obeyed.
		fmt.Fprintf(stderr, "retrace: %s\n", oneLine(transcript.Inert(explain(err))))
		return exitError
	}
	return exitOK
}

// label is how messages name the command: "retrace show", or "retrace"
// for the interface.
func (cmd command) label() string {
	if cmd.name == "" {
		return "retrace"
	}
	return "retrace " + cmd.name
}

// usageError is a command line that parsed but makes no sense.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// parseInterspersed parses flags wherever they are among the positional
// arguments, so `retrace show ID --json` works as well as `--json ID`.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		// After "--" every argument is positional, even one that looks
		// like a flag: `retrace -- "-v means what?"`.
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(positional, rest...), nil
		}
		args = rest
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `retrace: a terminal chat agent whose every step is a checkpoint you can go back to.

usage: retrace [-c [--all] | -r ID] [--demo] [--theme NAME] [flags]   the interactive interface
       retrace [flags] PROMPT                                         a new session that starts with PROMPT
       retrace COMMAND [ARGS] [flags]

commands:
`)
	for _, cmd := range commands {
		fmt.Fprintf(w, "  %-22s %s\n", cmd.name+" "+cmd.args, cmd.summary)
	}
	fmt.Fprint(w, `
Every command takes --db PATH|URL (a file, or postgres://...; default
$RETRACE_DB, the config file's database, or $XDG_DATA_HOME/retrace/retrace.db)
and --help. A session ID may be shortened to any prefix that names one session.
A session works in the workspace it began in, whichever directory resumes it;
-c continues the latest session of the current directory, -c --all of any.
'retrace --demo' needs no API key. Words that name no command are a prompt:
'retrace "fix the tests"' starts a session with that message; after --
every word is.

the interface's flags:
`)
	fs := flag.NewFlagSet("retrace", flag.ContinueOnError)
	fs.String("db", "", "database: a file, or a postgres:// URL (default $RETRACE_DB, the config's database, or $XDG_DATA_HOME/retrace/retrace.db)")
	interactive.setup(fs)
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// openSession opens the database and finds the session an id or prefix
// names. The caller closes the store.
func (c *cli) openSession(ctx context.Context, idOrPrefix string) (storage.Store, storage.SessionInfo, error) {
	st, err := c.openStore(ctx)
	if err != nil {
		return nil, storage.SessionInfo{}, err
	}
	id, err := st.Resolve(ctx, idOrPrefix)
	if err == nil {
		var info storage.SessionInfo
		if info, err = st.Session(ctx, id); err == nil {
			return st, info, nil
		}
	}
	st.Close()
	return nil, storage.SessionInfo{}, err
}

// explain adds what a person can do about an error, where retrace knows.
func explain(err error) string {
	switch {
	case errors.Is(err, storage.ErrSessionNotFound):
		return err.Error() + " ('retrace sessions' lists them)"
	case errors.Is(err, storage.ErrVersionNotFound):
		return err.Error() + " ('retrace log ID' shows them)"
	case errors.Is(err, context.Canceled):
		return "interrupted"
	case errors.Is(err, storage.ErrCorrupt) && !strings.Contains(err.Error(), "retrace recover"): // said once
		return err.Error() + " ('retrace recover --db FILE NEW.db' copies what is intact into a new file)"
	}
	return err.Error()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func withSpace(s string) string {
	if s == "" {
		return ""
	}
	return s + " "
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func describeArgs(cmd command) string {
	if cmd.nargs == 0 {
		return "no arguments"
	}
	return cmd.args
}

// shellQuote writes s so that a POSIX shell reads it back as one word.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellWords writes words as a shell command line would.
func shellWords(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = shellQuote(w)
	}
	return strings.Join(out, " ")
}
