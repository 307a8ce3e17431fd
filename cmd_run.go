package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"retrace/agent"
	"retrace/agent/session"
	"retrace/agent/tools"
	"retrace/state"
	"retrace/storage"
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
	fs.StringVar(&f.session, "session", "", "continue this session (an id or a prefix), with its history; with no PROMPT, carry on the task it left interrupted; a task a crash cut off is carried on first")
	fs.StringVar(&f.workspace, "workspace", "", "the directory tools work in (default the current directory)")
	fs.StringVar(&f.allow, "allow", "", "comma-separated tools that may run without asking: "+strings.Join(tools.Gated(), ", "))
	fs.BoolVar(&f.yes, "yes", false, "approve every tool call (otherwise tools that change files or run commands are denied)")
	fs.BoolVar(&f.asJSON, "json", false, "print the final state as JSON on stdout (the `show --json` format) instead of the answer")
	return func(ctx context.Context, c *cli, args []string) error {
		return runTask(ctx, c, f, args)
	}
}

func runTask(ctx context.Context, c *cli, f runFlags, args []string) error {
	prompt, err := readPrompt(untilDone(ctx, c.stdin), args, f.session != "")
	if err != nil {
		return err
	}
	cfg, err := c.loadConfig(f.modelFlags)
	if err != nil {
		return err // before any session is created
	}
	// The project's settings, and the tools allowed in it, come before
	// the model is chosen and the allowed tools listed.
	if err := c.forProject(&cfg, first(f.workspace, "."), f.modelFlags, ""); err != nil {
		return err
	}
	allowed, err := allowList(f.allow, cfg.AllowedTools)
	if err != nil {
		return err
	}
	st, err := c.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	// The session to go on with decides the model: the one it recorded,
	// unless a flag or the environment names another.
	id, head := "", state.State{}
	if f.session != "" {
		if id, err = st.Resolve(ctx, f.session); err != nil {
			return err
		}
		// Only its endpoint and phase count here: the recent part has them.
		if head, err = storage.Latest(ctx, st, id, 0); err != nil {
			return err
		}
	}
	dm := &demoModel{}
	defer dm.close()
	ep, err := cfg.endpoint(head.Endpoint, dm)
	if err != nil {
		return err
	}
	if prompt != "" || head.Phase.Active() || head.Unfinished() {
		if err := ep.KeyProblem(); err != nil {
			return err // before any session is created or written
		}
	}
	ws, err := openWorkspace(f.workspace, ep.BaseURL == demoEndpoint)
	if err != nil {
		return err
	}
	ctrl := session.New(ctx, st, cfg.session(ws, allowed, false, dm))
	defer ctrl.Close()
	if err := openForRun(c, ctrl, id, prompt); err != nil {
		return err
	}

	if w := ctrl.Info().Commands.Warning(); w != "" {
		fmt.Fprintf(c.stderr, "warning: %s\n", w)
	}
	out := newProgress(c.stdout, c.stderr, f.asJSON, ctrl.Head())
	h := headless{all: f.yes, out: c.stderr}
	// A task cut off by a crash is carried on first; an interrupted one
	// only when no new prompt replaces it.
	final := ctrl.Head()
	if final.Phase.Active() || (prompt == "" && final.Unfinished()) {
		fmt.Fprintf(c.stderr, "resuming the unfinished task (phase %s)\n", final.Phase)
		final, err = follow(ctx, ctrl, ctrl.Resume, out, h)
	} else if prompt == "" {
		fmt.Fprintf(c.stderr, "session %s has no unfinished task; give a PROMPT to go on\n", session.Short(final.SessionID))
	}
	if err == nil && prompt != "" {
		final, err = follow(ctx, ctrl, func() error { return ctrl.Submit(prompt) }, out, h)
	}
	out.finish(final)
	if f.asJSON && (err == nil || out.ran(final)) {
		// show --json's format: every message, not only the recent part
		// the session went on from.
		whole, jerr := ctrl.At(final.SessionID, final.Version)
		if jerr == nil {
			jerr = writeJSON(c, whole)
		}
		if jerr != nil {
			return jerr
		}
	}
	return taskOutcome(final, err)
}

// openForRun opens the session to work in: the one --session named
// (claimed, so no other process writes it meanwhile) or a new one named
// after the prompt.
func openForRun(c *cli, ctrl *session.Controller, id, prompt string) error {
	if id == "" {
		if err := ctrl.Create(storage.NewSession{Title: session.Title(prompt)}); err != nil {
			return err
		}
		info := ctrl.Info()
		fmt.Fprintf(c.stderr, "session %s (new) · %s\n", info.Session.ID, info.Model)
		return nil
	}
	if err := ctrl.Open(id); err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "session %s at v%d · %s\n", id, ctrl.Head().Version, ctrl.Info().Model)
	return nil
}

// follow starts a task and shows it until it ends.
func follow(ctx context.Context, ctrl *session.Controller, start func() error, out *progress, h headless) (state.State, error) {
	if err := start(); err != nil {
		return ctrl.Head(), err
	}
	// The task's own end is awaited even after Ctrl+C: it is what keeps
	// the interrupted checkpoint.
	for ev := range ctrl.Events(context.WithoutCancel(ctx)) {
		switch ev := ev.(type) {
		case session.StateChanged:
			out.State(ev.State)
		case session.Delta:
			out.Delta(ev.Phase, ev.Kind, ev.Text)
		case session.Retrying:
			out.Retry(ev.Retry)
		case session.Notice:
			out.Notice(ev.Text)
		case session.ApprovalNeeded:
			ctrl.Decide(h.decide(ev.Call.Name))
		case session.TaskDone:
			return ev.State, ev.Err
		}
	}
	return ctrl.Head(), session.ErrClosed
}

// readPrompt takes PROMPT from the arguments, or from stdin for "-".
func readPrompt(stdin io.Reader, args []string, haveSession bool) (string, error) {
	switch {
	case len(args) == 0 && haveSession:
		return "", nil
	case len(args) != 1:
		return "", usagef("want one PROMPT (quote it; - reads it from stdin), got %d arguments", len(args))
	case args[0] == "-":
		// Read no more than can be sent (and its newline): a huge stdin is
		// refused at once, not read whole into memory first.
		b, err := io.ReadAll(io.LimitReader(stdin, state.MaxMessage+3))
		if err != nil {
			return "", fmt.Errorf("read the prompt from stdin: %w", err)
		}
		if strings.TrimSpace(string(b)) == "" {
			return "", usagef("the prompt on stdin is empty")
		}
		// `echo prompt | retrace run -` ends it with the shell's newline,
		// which is not part of what was asked.
		return checkPromptSize(strings.TrimRight(string(b), "\r\n"), "the prompt on stdin")
	case strings.TrimSpace(args[0]) == "":
		return "", usagef("the prompt is empty")
	}
	return checkPromptSize(args[0], "the prompt")
}

// checkPromptSize refuses a prompt over what retrace sends.
func checkPromptSize(prompt, what string) (string, error) {
	if len(prompt) > state.MaxMessage {
		return "", usagef("%s is over %d KiB, the most retrace sends; put the text in a file in the workspace and ask for it to be read", what, state.MaxMessage>>10)
	}
	return prompt, nil
}

func allowList(flagValue string, fromConfig []string) ([]string, error) {
	out := append([]string(nil), fromConfig...)
	for _, t := range strings.Split(flagValue, ",") {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		if !tools.IsGated(t) {
			return nil, usagef("--allow names %q; the tools that ask first are %s", t, strings.Join(tools.Gated(), ", "))
		}
		out = append(out, t)
	}
	return out, nil
}

// taskOutcome maps how the task ended to the command's error, and so its
// exit code.
func taskOutcome(s state.State, err error) error {
	var te *agent.TaskError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, agent.ErrInterrupted):
		return exitCode{code: exitInterrupted, msg: fmt.Sprintf("interrupted; the session is at v%d: 'retrace run --session %s' goes on", s.Version, session.Short(s.SessionID))}
	case errors.As(err, &te):
		return fmt.Errorf("the task failed: %s (session %s v%d)", te.Message, session.Short(s.SessionID), s.Version)
	}
	return err
}

// exitCode is an error with its own exit code.
type exitCode struct {
	code int
	msg  string
}

func (e exitCode) Error() string { return e.msg }

// headless decides gated calls without a person: all with --yes, none
// otherwise (tools named by --allow never reach it).
type headless struct {
	all bool
	out io.Writer
}

func (h headless) decide(tool string) agent.Decision {
	if h.all {
		fmt.Fprintf(h.out, "  approved by --yes: %s\n", tool)
		return agent.Decision{Approved: true}
	}
	fmt.Fprintf(h.out, "  denied: %s (retrace run asks no questions; allow it with --yes or --allow %s)\n", tool, tool)
	return agent.Decision{Reason: "retrace run is not interactive and this tool was not allowed (--yes or --allow " + tool + ")"}
}
