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

	"retrace/agent/demo"
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
	if !term.IsTerminal(os.Stdin.Fd()) || !term.IsTerminal(os.Stdout.Fd()) {
		return errors.New("retrace's interface needs a terminal; for scripts use 'retrace run'")
	}
	if f.cont && f.resume != "" {
		return usagef("-c continues the latest session and -r resumes one; choose one")
	}
	if f.demo {
		srv, err := demo.Start("127.0.0.1:0", 25*time.Millisecond)
		if err != nil {
			return fmt.Errorf("start the demo model: %w", err)
		}
		defer srv.Close()
		f.baseURL, f.model = srv.URL(), "retrace-demo"
	}
	cfg, err := loadConfig(f.modelFlags, os.Getenv)
	if err != nil {
		return err
	}
	palette, err := themes.Resolve(first(f.theme, cfg.Theme), os.Getenv)
	if err != nil {
		return err
	}
	ws, err := openWorkspace(f.workspace, f.demo)
	if err != nil {
		return err
	}
	st, err := c.openStore()
	if err != nil {
		return err
	}
	defer st.Close()
	ctrl := session.New(ctx, st, cfg.session(ws, cfg.AllowedTools, true))
	defer ctrl.Close()
	if err := openForTUI(ctx, ctrl, st, f); err != nil {
		return err
	}
	model := tui.New(tuiDriver{ctrl: ctrl, demo: f.demo}, tui.Options{Palette: palette, Editor: os.Getenv("EDITOR"), SaveTheme: cfg.saveTheme})
	_, runErr := tea.NewProgram(model, tea.WithContext(ctx)).Run()
	id := ctrl.Info().Session.ID
	if err := ctrl.Close(); err != nil {
		return err
	}
	return farewell(ctx, c, st, id, f.demo, runErr)
}

// openForTUI opens the session to show: -r's, -c's latest, or a new one.
func openForTUI(ctx context.Context, ctrl *session.Controller, st storage.Store, f tuiFlags) error {
	switch {
	case f.resume != "":
		id, err := st.Resolve(ctx, f.resume)
		if err != nil {
			return err
		}
		return ctrl.Open(id)
	case f.cont:
		list, err := st.Sessions(ctx)
		if err != nil {
			return err
		}
		if len(list) > 0 {
			return ctrl.Open(list[0].ID)
		}
	}
	return ctrl.Create(storage.NewSession{})
}

// farewell says how to come back, and drops a session left empty.
func farewell(ctx context.Context, c *cli, st storage.Store, id string, demo bool, runErr error) error {
	if runErr != nil && !errors.Is(runErr, tea.ErrProgramKilled) && !errors.Is(runErr, context.Canceled) {
		return fmt.Errorf("interface: %w", runErr)
	}
	info, err := st.Session(ctx, id)
	if err != nil {
		return nil
	}
	if info.Versions == 0 {
		_ = st.Delete(ctx, id) // never used: nothing to come back to
		return nil
	}
	resume := "retrace -r " + session.Short(id)
	if demo {
		resume = "retrace --demo -r " + session.Short(id)
	}
	fmt.Fprintf(c.stdout, "session %s · v%d of %d · '%s' resumes it\n", session.Short(id), info.Head, info.Versions, resume)
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
