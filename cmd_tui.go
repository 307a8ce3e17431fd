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
	cont, demo               bool
}

func tuiCmd(fs *flag.FlagSet) func(context.Context, *cli, []string) error {
	var f tuiFlags
	f.register(fs)
	fs.BoolVar(&f.cont, "c", false, "continue the most recent session")
	fs.StringVar(&f.resume, "r", "", "resume session `ID` (a prefix that names one session is enough)")
	fs.BoolVar(&f.demo, "demo", false, "use retrace's scripted demo model (no API key) in a sample workspace")
	fs.StringVar(&f.theme, "theme", "", "colour theme: "+strings.Join(themes.Names(), ", "))
	fs.StringVar(&f.workspace, "workspace", "", "the directory tools work in (default the current directory; with --demo a sample project)")
	return func(ctx context.Context, c *cli, _ []string) error { return runTUI(ctx, c, f) }
}

func runTUI(ctx context.Context, c *cli, f tuiFlags) error {
	// A wrong command line is said first, terminal or not.
	if f.cont && f.resume != "" {
		return usagef("-c continues the latest session and -r resumes one; choose one")
	}
	if f.theme != "" {
		if _, err := themes.Get(f.theme); err != nil {
			return usagef("--theme: %v", err)
		}
	}
	if !term.IsTerminal(os.Stdin.Fd()) || !term.IsTerminal(os.Stdout.Fd()) {
		return errors.New("retrace's interface needs a terminal; for scripts use 'retrace run'")
	}
	if f.demo {
		f.baseURL, f.model = demoEndpoint, "retrace-demo"
	}
	cfg, err := loadConfig(f.modelFlags, os.Getenv)
	if err != nil {
		return err
	}
	palette, err := themes.Resolve(first(f.theme, cfg.Theme), os.Getenv)
	if err != nil {
		return err
	}
	st, err := c.openStore()
	if err != nil {
		return err
	}
	defer st.Close()
	id, err := chooseSession(ctx, st, f)
	if err != nil {
		return err
	}
	// A session that talks to the demo model resumes with it, in the demo's
	// sample project, without --demo.
	ws, err := openWorkspace(f.workspace, f.demo || talksToDemo(ctx, st, id, cfg))
	if err != nil {
		return err
	}
	dm := &demoModel{pace: 25 * time.Millisecond}
	defer dm.close()
	ctrl := session.New(ctx, st, cfg.session(ws, cfg.AllowedTools, true, dm))
	defer ctrl.Close()
	// A new session is a draft its first message writes: a retrace quit
	// before anything was typed leaves no empty session to list.
	if id != "" {
		err = ctrl.Open(id)
	} else {
		err = ctrl.Draft(storage.NewSession{})
	}
	if err != nil {
		return err
	}
	model := tui.New(tuiDriver{ctrl: ctrl}, tui.Options{Palette: palette, Editor: os.Getenv("EDITOR"), SaveTheme: cfg.saveTheme})
	_, runErr := tea.NewProgram(model, tea.WithContext(ctx)).Run()
	id = ctrl.Info().Session.ID
	if err := ctrl.Close(); err != nil {
		return err
	}
	return farewell(ctx, c, st, id, runErr)
}

// chooseSession names the session to show: -r's, -c's latest, or "" for
// a new one.
func chooseSession(ctx context.Context, st storage.Store, f tuiFlags) (string, error) {
	switch {
	case f.resume != "":
		return st.Resolve(ctx, f.resume)
	case f.cont:
		list, err := st.Sessions(ctx)
		if err != nil || len(list) == 0 {
			return "", err
		}
		return list[0].ID, nil
	}
	return "", nil
}

// talksToDemo reports a session whose endpoint, as recorded and as the
// command line may override it, is the demo model.
func talksToDemo(ctx context.Context, st storage.Store, id string, cfg config) bool {
	if id == "" {
		return false
	}
	head, err := st.Head(ctx, id)
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
	fmt.Fprintf(c.stdout, "session %s · v%d of %d · 'retrace -r %s' resumes it\n", session.Short(id), info.Head, info.Versions, session.Short(id))
	return nil
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
