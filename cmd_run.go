package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"retrace/agent"
	"retrace/agent/llm"
	"retrace/agent/tools"
	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// exitInterrupted is the shell's code for a command stopped by Ctrl+C.
const exitInterrupted = 130

// runFlags are `retrace run`'s own flags.
type runFlags struct {
	modelFlags
	session, workspace, allow string
	asJSON, yes               bool
}

func runCmd(fs *flag.FlagSet) func(context.Context, *cli, []string) error {
	var f runFlags
	f.register(fs)
	fs.StringVar(&f.session, "session", "", "continue this session (an id or a prefix), with its history; a task it left unfinished is resumed first")
	fs.StringVar(&f.workspace, "workspace", "", "the directory tools work in (default the current directory)")
	fs.StringVar(&f.allow, "allow", "", "comma-separated tools that may run without asking: write_file, edit_file, run_command")
	fs.BoolVar(&f.yes, "yes", false, "approve every tool call (otherwise tools that change files or run commands are denied)")
	fs.BoolVar(&f.asJSON, "json", false, "print the final state as JSON on stdout (the `show --json` format) instead of the answer")
	return func(ctx context.Context, c *cli, args []string) error {
		return runTask(ctx, c, f, args)
	}
}

func runTask(ctx context.Context, c *cli, f runFlags, args []string) error {
	prompt, err := readPrompt(c.stdin, args, f.session != "")
	if err != nil {
		return err
	}
	cfg, err := loadConfig(f.modelFlags, os.Getenv)
	if err != nil {
		return err // before any session is created
	}
	allowed, err := allowList(f.allow, cfg.AllowedTools)
	if err != nil {
		return err
	}
	ws, err := tools.NewWorkspace(first(f.workspace, "."))
	if err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	st, err := c.openStore()
	if err != nil {
		return err
	}
	defer st.Close()
	head, err := startSession(ctx, c, st, f.session, prompt, cfg, ws.Root())
	if err != nil {
		return err
	}

	obs := newProgress(c.stdout, c.stderr, f.asJSON, head)
	model := llm.New(llm.Config{BaseURL: cfg.BaseURL, APIKey: cfg.apiKey, Model: cfg.Model})
	ag := agent.New(storage.NewCursor(st, head), model, tools.New(ws, tools.Options{}),
		headlessApprover{all: f.yes, out: c.stderr}, obs,
		agent.Options{MaxIterations: cfg.MaxIterations, ContextWindow: cfg.ContextWindow, Workspace: ws.Root(), Allowed: allowed})

	final := head
	if head.Phase.Active() {
		fmt.Fprintf(c.stderr, "resuming the unfinished task (phase %s)\n", head.Phase)
		final, err = ag.Resume(ctx)
	}
	if err == nil && prompt != "" {
		final, err = ag.Send(ctx, prompt)
	}
	obs.finish(final)
	if f.asJSON {
		if jerr := writeJSON(c, final); jerr != nil {
			return jerr
		}
	}
	return taskOutcome(final, err)
}

// readPrompt takes PROMPT from the arguments, or from stdin for "-".
func readPrompt(stdin io.Reader, args []string, haveSession bool) (string, error) {
	switch {
	case len(args) == 0 && haveSession:
		return "", nil
	case len(args) != 1:
		return "", usagef("want one PROMPT (quote it; - reads it from stdin), got %d arguments", len(args))
	case args[0] == "-":
		b, err := io.ReadAll(stdin)
		if err != nil {
			return "", fmt.Errorf("read the prompt from stdin: %w", err)
		}
		if strings.TrimSpace(string(b)) == "" {
			return "", usagef("the prompt on stdin is empty")
		}
		return string(b), nil
	case strings.TrimSpace(args[0]) == "":
		return "", usagef("the prompt is empty")
	}
	return args[0], nil
}

func allowList(flagValue string, fromConfig []string) ([]string, error) {
	out := append([]string(nil), fromConfig...)
	for _, t := range strings.Split(flagValue, ",") {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		known := false
		for _, g := range gatedTools {
			known = known || g == t
		}
		if !known {
			return nil, usagef("--allow names %q; the tools that ask first are %s", t, strings.Join(gatedTools, ", "))
		}
		out = append(out, t)
	}
	return out, nil
}

// startSession opens the session to work in: the one --session names
// (claimed, so no other process writes it meanwhile) or a new one.
func startSession(ctx context.Context, c *cli, st *boltstore.Store, id, prompt string, cfg config, workspace string) (state.State, error) {
	if id == "" {
		info, err := st.Create(ctx, storage.NewSession{Title: oneLineTitle(prompt), Model: cfg.Model, Workspace: workspace})
		if err != nil {
			return state.State{}, err
		}
		fmt.Fprintf(c.stderr, "session %s (new) · %s\n", info.ID, cfg.Model)
		return state.New(info.ID), nil
	}
	full, err := st.Resolve(ctx, id)
	if err != nil {
		return state.State{}, err
	}
	if err := st.Claim(ctx, full); err != nil {
		return state.State{}, err
	}
	head, err := st.Head(ctx, full)
	if err != nil {
		return state.State{}, err
	}
	fmt.Fprintf(c.stderr, "session %s at v%d · %s\n", full, head.Version, cfg.Model)
	return head, nil
}

func oneLineTitle(prompt string) string {
	t := strings.Join(strings.Fields(prompt), " ")
	if r := []rune(t); len(r) > 60 {
		t = string(r[:59]) + "…"
	}
	return t
}

// taskOutcome maps how the task ended to the command's error, and so its
// exit code.
func taskOutcome(s state.State, err error) error {
	var te *agent.TaskError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, agent.ErrInterrupted):
		return exitCode{code: exitInterrupted, msg: fmt.Sprintf("interrupted; the session is at v%d: 'retrace run --session %s' goes on", s.Version, short(s.SessionID))}
	case errors.As(err, &te):
		return fmt.Errorf("the task failed: %s (session %s v%d)", te.Message, short(s.SessionID), s.Version)
	}
	return err
}

// exitCode is an error with its own exit code.
type exitCode struct {
	code int
	msg  string
}

func (e exitCode) Error() string { return e.msg }

// headlessApprover decides gated calls without a person: all with --yes,
// none otherwise (tools named by --allow never reach it).
type headlessApprover struct {
	all bool
	out io.Writer
}

func (h headlessApprover) Approve(_ context.Context, req agent.ApprovalRequest) (agent.Decision, error) {
	if h.all {
		fmt.Fprintf(h.out, "  approved by --yes: %s\n", req.Call.Name)
		return agent.Decision{Approved: true}, nil
	}
	fmt.Fprintf(h.out, "  denied: %s (retrace run asks no questions; allow it with --yes or --allow %s)\n", req.Call.Name, req.Call.Name)
	return agent.Decision{Reason: "retrace run is not interactive and this tool was not allowed (--yes or --allow " + req.Call.Name + ")"}, nil
}

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
