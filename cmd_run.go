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
	"retrace/state/transcript"
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
	fs.StringVar(&f.session, "session", "", "continue this session (an id or a prefix), with its history, in the workspace it recorded; with no PROMPT, carry on the task it left interrupted; a task a crash cut off is carried on first")
	fs.StringVar(&f.workspace, "workspace", "", "the directory a new session works in (default the current directory); a session continued with --session works in its own")
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
	if _, err := allowList(f.allow, nil); err != nil {
		return err
	}
	st, err := c.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	// The session to go on with decides the model (the one it recorded,
	// unless a flag or the environment names another) and the workspace.
	id, head, ws := "", state.State{}, (*tools.Workspace)(nil)
	if f.session != "" {
		if id, err = st.Resolve(ctx, f.session); err != nil {
			return err
		}
		if ws, _, err = sessionWorkspace(ctx, st, id, f.workspace); err != nil {
			return err
		}
		// Only its endpoint and phase count here: the recent part has them.
		if head, err = storage.Latest(ctx, st, id, 0); err != nil {
			return err
		}
	}
	// The project's settings, and the tools allowed in it, come before
	// the model is chosen and the allowed tools listed.
	project := first(f.workspace, ".")
	if ws != nil {
		project = ws.Root()
	}
	if err := c.forProject(&cfg, project, f.modelFlags, ""); err != nil {
		return err
	}
	allowed, err := allowList(f.allow, cfg.AllowedTools)
	if err != nil {
		return err
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
	if ws == nil {
		if ws, err = openWorkspace(f.workspace, ep.BaseURL == demoEndpoint); err != nil {
			return err
		}
	}
	c.denyDatabase(&cfg)
	ctrl := session.New(ctx, st, cfg.session(ws, allowed, false, dm))
	defer ctrl.Close()
	if err := openForRun(c, ctrl, id, prompt); err != nil {
		return err
	}
	if err := restoreLeftOpen(ctrl.Head()); err != nil {
		return err
	}
	if id != "" {
		if say := notHere(id, ws); say != "" {
			fmt.Fprintf(c.stderr, "%sthe task runs there\n", say)
		}
	}

	if w := ctrl.Info().Commands.Warning(); w != "" {
		fmt.Fprintf(c.stderr, "warning: %s\n", w)
	}
	out := newProgress(c.stdout, c.stderr, f.asJSON, ctrl.Head())
	h := headless{all: f.yes, out: c.stderr}
	// Without a prompt, a task left unfinished (cut off by a crash, or
	// interrupted) is carried on; a prompt replaces it, as a message does
	// in the interface: the old task is recorded as ended by it.
	final := ctrl.Head()
	unfinished := final.Phase.Active() || final.Unfinished()
	switch {
	case prompt == "" && unfinished:
		fmt.Fprintf(c.stderr, "resuming the unfinished task (phase %s)\n", final.Phase)
		final, err = follow(ctx, ctrl, ctrl.Resume, out, h)
	case prompt == "":
		fmt.Fprintf(c.stderr, "session %s has no unfinished task; give a PROMPT to go on\n", session.Short(final.SessionID))
	case unfinished:
		fmt.Fprintf(c.stderr, "the task left unfinished at v%d is replaced by this prompt ('retrace run --session %s' without one carries such a task on)\n",
			final.Version, session.Short(final.SessionID))
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

// restoreLeftOpen refuses to go on with a session whose head is a restore
// a stopped retrace left open, and names the commands that end it: run
// never writes the workspace's files by itself.
func restoreLeftOpen(head state.State) error {
	var open *session.RestoreOpenError
	if !errors.As(session.RestoreLeftOpen(head), &open) {
		return nil
	}
	id := session.Short(head.SessionID)
	return fmt.Errorf("session %s was stopped in the middle of restoring %s of its workspace to v%d, and nothing of it was written since: "+
		"'retrace rollback %s %d' finishes it, writing them; 'retrace rollback %s %d --keep-files' leaves every file as it is. Then run again",
		id, transcript.Count(open.Files, "file"), open.Target, id, open.Target, id, open.Target)
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
			ctrl.Decide(h.decide(ev.Call.Name, ev.Why))
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

func (h headless) decide(tool, why string) agent.Decision {
	if h.all {
		fmt.Fprintf(h.out, "  approved by --yes: %s\n", tool)
		return agent.Decision{Approved: true}
	}
	if why != "" {
		// A cap, which --allow does not lift: only --yes answers it.
		fmt.Fprintf(h.out, "  denied: %s (%s; retrace run asks no questions, and only --yes approves it)\n", tool, why)
		return agent.Decision{Reason: why + "; retrace run is not interactive, so it was not kept"}
	}
	fmt.Fprintf(h.out, "  denied: %s (retrace run asks no questions; allow it with --yes or --allow %s)\n", tool, tool)
	return agent.Decision{Reason: "retrace run is not interactive and this tool was not allowed (--yes or --allow " + tool + ")"}
}
