package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"

	"retrace/agent/session"
	"retrace/agent/tools"
	"retrace/storage"
	"retrace/themes"
	"retrace/tui"
)

// tuiFlags are the flags of plain `retrace`, the interactive UI.
type tuiFlags struct {
	modelFlags
	resume, theme, workspace string
	cont, all, demo          bool
	prompt                   []string // the words to send at once
}

func tuiCmd(fs *flag.FlagSet) func(context.Context, *cli, []string) error {
	var f tuiFlags
	f.register(fs)
	fs.BoolVar(&f.cont, "c", false, "continue the latest session of the current directory (with --all, of any directory), in its own workspace")
	fs.BoolVar(&f.all, "all", false, "with -c: continue the latest session of any directory, not only the current one's")
	fs.StringVar(&f.resume, "r", "", "resume session `ID` (a prefix that names one session is enough) in the workspace it recorded, wherever this is typed")
	fs.BoolVar(&f.demo, "demo", false, "use retrace's scripted demo model (no API key) in a sample workspace")
	fs.StringVar(&f.theme, "theme", "", "colour theme: "+strings.Join(themes.Names(), ", "))
	fs.StringVar(&f.workspace, "workspace", "", "the directory a new session works in (default the current directory; with --demo a sample project); a resumed session works in its own")
	return func(ctx context.Context, c *cli, args []string) error {
		f.prompt = args
		return runTUI(ctx, c, f)
	}
}

func runTUI(ctx context.Context, c *cli, f tuiFlags) error {
	// A wrong command line is said first, terminal or not.
	if f.cont && f.resume != "" {
		return usagef("-c continues the latest session and -r resumes one; choose one")
	}
	if f.all && !f.cont {
		return usagef("--all goes with -c: 'retrace -c --all' continues the latest session of any directory")
	}
	if f.theme != "" {
		if _, err := themes.Get(f.theme); err != nil {
			return usagef("--theme: %v", err)
		}
	}
	prompt, err := startPrompt(f)
	if err != nil {
		return err
	}
	if !term.IsTerminal(os.Stdin.Fd()) || !term.IsTerminal(os.Stdout.Fd()) {
		if prompt != "" {
			// The prompt as it was read, in the command that sends it
			// without a terminal.
			return fmt.Errorf("retrace's interface needs a terminal; for scripts use: retrace run %s", shellQuote(prompt))
		}
		return errors.New("retrace's interface needs a terminal; for scripts use 'retrace run'")
	}
	if f.demo {
		f.baseURL, f.model = demoEndpoint, "retrace-demo"
	}
	cfg, err := c.loadConfig(f.modelFlags)
	if err != nil {
		return err
	}
	st, err := c.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	o, err := c.toOpen(ctx, st, f, cfg)
	if err != nil {
		return err
	}
	if err := c.forProject(&cfg, o.project(), f.modelFlags, f.theme); err != nil {
		return err
	}
	palette, err := themes.Resolve(first(f.theme, cfg.Theme), os.Getenv)
	if err != nil {
		return err
	}
	dm := &demoModel{pace: 25 * time.Millisecond}
	defer dm.close()
	// A session opened from the sessions list may be another project's:
	// the tools that run unasked are its project's, not this one's.
	c.denyDatabase(&cfg)
	sc := cfg.session(o.home, cfg.AllowedTools, true, dm)
	sc.AllowedIn = cfg.allowedIn
	ctrl := session.New(ctx, st, sc)
	defer ctrl.Close()
	// A new session is a draft its first message writes: a retrace quit
	// before anything was typed leaves no empty session to list.
	switch {
	case o.id == "":
		err = ctrl.Draft(storage.NewSession{})
	case o.there == nil:
		err = ctrl.OpenReadOnly(o.id)
	default:
		err = ctrl.Open(o.id)
	}
	if err != nil {
		return err
	}
	self := c.runAgain()
	start := tui.Start{Prompt: prompt, Notice: joinNotices(o.said, cfg.notice()), Commands: []tui.ShellCommand{
		{Line: self + " -c", Does: "continues the latest session here (--all: of any directory)"},
		{Line: self + " -r ID", Does: "resumes one; " + self + " sessions lists them"},
	}}
	prefs := &livePrefs{cfg: cfg}
	// A tool kept for the project runs without asking in the sessions of
	// that project this process opens later (/new) too, not only in later
	// processes; the project is the open session's.
	saveProjectTool := func(tool string) error {
		if err := prefs.saveProjectTool(ctrl.Project(), tool); err != nil {
			return err
		}
		ctrl.Allow(tool)
		return nil
	}
	model := tui.New(tuiDriver{ctrl: ctrl, settings: prefs.settings}, tui.Options{Palette: palette, Editor: os.Getenv("EDITOR"),
		SaveTheme: prefs.saveTheme, SaveProjectTool: saveProjectTool, Start: start})
	// Signals end the program through ctx alone (main's NotifyContext:
	// SIGINT, SIGTERM, SIGHUP). Bubble Tea's own handler would race it
	// for SIGINT and SIGTERM: when ctx wins, that handler blocks for ever
	// sending its QuitMsg to an event loop that has returned, and the
	// program's shutdown waits for the handler, claim held.
	_, runErr := tea.NewProgram(model, tea.WithContext(ctx), tea.WithoutSignalHandler()).Run()
	id := ctrl.Info().Session.ID
	if err := ctrl.Close(); err != nil {
		return err
	}
	// A signal that ended the program ended ctx too; the farewell still
	// drops an empty session and says how to come back.
	return farewell(context.WithoutCancel(ctx), c, st, id, runErr)
}

// chooseSession names the session to show: -r's, -c's latest (of the
// directory here, or of any with --all), or "" for a new one. It says
// why -c found none here, when others are elsewhere.
func chooseSession(ctx context.Context, st storage.Store, f tuiFlags, here string) (id, said string, err error) {
	switch {
	case f.resume != "":
		id, err = st.Resolve(ctx, f.resume)
		return id, "", err
	case !f.cont:
		return "", "", nil
	}
	list, err := st.Sessions(ctx)
	if err != nil || len(list) == 0 {
		return "", "", err
	}
	if f.all {
		return list[0].ID, "", nil
	}
	for _, s := range list { // newest first
		if s.Workspace == here {
			return s.ID, "", nil
		}
	}
	return "", "no session of this directory to continue, so this is a new one: 'retrace -c --all' continues the latest of any directory", nil
}

// talksToDemo reports a session whose endpoint, as recorded and as the
// command line may override it, is the demo model.
func talksToDemo(ctx context.Context, st storage.Store, id string, cfg config) bool {
	if id == "" {
		return false
	}
	head, err := storage.Latest(ctx, st, id, 0)
	return err == nil && cfg.endpointOf(head.Endpoint).BaseURL == demoEndpoint
}

// farewell says how to come back, and drops a session left empty. A
// draft (id "") was never written: there is nothing to come back to.
func farewell(ctx context.Context, c *cli, st storage.Store, id string, runErr error) error {
	if runErr != nil && !errors.Is(runErr, tea.ErrProgramKilled) && !errors.Is(runErr, context.Canceled) {
		return fmt.Errorf("interface: %w", runErr)
	}
	if id == "" {
		return nil
	}
	info, err := st.Session(ctx, id)
	if err != nil {
		return nil
	}
	if info.Versions == 0 {
		_ = st.Delete(ctx, id) // never used: nothing to come back to
		return nil
	}
	// The command ends the line, unquoted, so that it can be copied whole.
	fmt.Fprintf(c.stdout, "session %s · v%d of %d · resume it with: %s -r %s\n", session.Short(id), info.Head, info.Versions, c.runAgain(), session.Short(id))
	return nil
}

// startPrompt is the prompt the command line gives, checked: it starts a
// new session, so it does not go with -c or -r.
func startPrompt(f tuiFlags) (string, error) {
	if len(f.prompt) == 0 {
		return "", nil
	}
	prompt := strings.Join(f.prompt, " ")
	switch {
	case strings.TrimSpace(prompt) == "":
		return "", usagef("the prompt is empty")
	case f.cont || f.resume != "":
		return "", usagef("a prompt on the command line starts a new session; with -c or -r, type it in the session instead")
	}
	return checkPromptSize(prompt, "the prompt")
}

// runAgain is how a shell runs this retrace again, for the hints that
// say how to come back.
func (c *cli) runAgain() string {
	if c.self == "" {
		exe, _ := os.Executable()
		arg0 := ""
		if len(os.Args) > 0 {
			arg0 = os.Args[0]
		}
		c.self = runAgain(exe, arg0, os.Getenv("GOCACHE"))
	}
	return c.self
}

// runAgain is the command that runs the executable exe, started as arg0,
// again. `go run .` builds into a go-build temporary directory or the
// build cache, where no `retrace` on PATH is the program that ran and
// the binary itself is gone or replaced by the next build: from there,
// `go run .` again. Otherwise the name it was run by: a bare name was
// found on PATH, a path works from where it was typed.
func runAgain(exe, arg0, gocache string) string {
	if exe != "" {
		for _, dir := range strings.Split(filepath.ToSlash(filepath.Dir(exe)), "/") {
			if strings.HasPrefix(dir, "go-build") {
				return "go run ."
			}
		}
		if gocache != "" {
			if rel, err := filepath.Rel(gocache, exe); err == nil && filepath.IsLocal(rel) {
				return "go run ."
			}
		}
	}
	if arg0 == "" {
		return "retrace"
	}
	return shellQuote(arg0)
}

// openWorkspace is the directory tools work in; the demo has its own
// sample project, kept between runs so a demo session can be resumed.
func openWorkspace(dir string, isDemo bool) (*tools.Workspace, error) {
	if dir == "" && isDemo {
		var err error
		if dir, err = demoWorkspace(); err != nil {
			return nil, err
		}
	}
	ws, err := tools.NewWorkspace(first(dir, "."))
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	return ws, nil
}

func demoWorkspace() (string, error) {
	base, err := storage.DefaultPath()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(filepath.Dir(base), "demo-workspace")
	files := map[string]string{
		"README.md": "# greeter\n\nA tiny Go program that retrace's demo model looks at.\n",
		"main.go":   "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(greet(\"world\"))\n}\n\nfunc greet(name string) string {\n\treturn \"hello, \" + name\n}\n",
		"go.mod":    "module greeter\n\ngo 1.26\n",
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("demo workspace: %w", err)
	}
	for name, body := range files {
		path := filepath.Join(dir, name)
		if _, err := os.Stat(path); err == nil {
			continue
		}
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			return "", fmt.Errorf("demo workspace: %w", err)
		}
	}
	return dir, nil
}
