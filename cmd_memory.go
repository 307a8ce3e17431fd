package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"retrace/agent/llm"
	"retrace/agent/session"
	"retrace/agent/tools"
	"retrace/state"
	"retrace/state/transcript"
	"retrace/storage"
)

// memoryCmd lists and changes what the agent remembers across sessions:
// the store's memory log (issue 17). Every change is an entry of the log,
// so a removal or an edit can itself be undone with restore.
func memoryCmd(fs *flag.FlagSet) func(context.Context, *cli, []string) error {
	asJSON := fs.Bool("json", false, "print JSON: list gives [{id, project, text, source, created_at, updated_at}], log every entry")
	everywhere := fs.Bool("everywhere", false, "add: keep the memory for every project, not only this one")
	workspace := fs.String("workspace", "", "add: the project the memory is kept for, by a directory in it (default: the current directory)")
	dryRun := fs.Bool("dry-run", false, "prune: say what would be folded away; change nothing")
	return func(ctx context.Context, c *cli, args []string) error {
		verb := "list"
		if len(args) > 0 {
			verb, args = args[0], args[1:]
		}
		// Each action's arguments: what usage says, and how many it takes.
		want := map[string]struct {
			shape    string
			min, max int
		}{
			"list": {"no arguments", 0, 0}, "log": {"no arguments", 0, 0}, "add": {"TEXT", 1, -1},
			"rm": {"ID", 1, 1}, "edit": {"ID [TEXT]", 1, -1}, "restore": {"VERSION", 1, 1}, "prune": {"no arguments", 0, 0},
		}
		w, known := want[verb]
		if !known {
			return usagef("unknown action %q; want list, add TEXT, rm ID, edit ID [TEXT], log, restore VERSION or prune", verb)
		}
		if *dryRun && verb != "prune" {
			return usagef("--dry-run is for memory prune")
		}
		if len(args) < w.min || (w.max >= 0 && len(args) > w.max) {
			return usagef("memory %s takes %s", verb, w.shape)
		}
		st, err := c.openStore(ctx)
		if err != nil {
			return err
		}
		defer st.Close()
		switch verb {
		case "list":
			return listMemories(ctx, c, st, *asJSON)
		case "log":
			return memoryLog(ctx, c, st, *asJSON)
		case "add":
			return addMemory(ctx, c, st, *workspace, strings.Join(args, " "), *everywhere)
		case "rm":
			return changeMemory(ctx, c, st, state.MemoryEvent{Kind: state.MemoryRemoved, Memory: state.Memory{ID: args[0]}})
		case "edit":
			return editMemory(ctx, c, st, args[0], args[1:])
		case "prune":
			rep, err := st.PruneMemories(ctx, *dryRun)
			if err != nil {
				return err
			}
			printPrune(c.stdout, rep)
			return nil
		case "restore":
			v, err := strconv.Atoi(strings.TrimPrefix(args[0], "v"))
			if err != nil {
				return usagef("memory restore takes a version of the memory log (see 'retrace memory log'), not %q", args[0])
			}
			return changeMemory(ctx, c, st, state.MemoryEvent{Kind: state.MemoryRestored, To: v})
		}
		return nil
	}
}

// addMemory keeps text for the project of the directory dir (the current
// one when empty), or with everywhere set for every project.
func addMemory(ctx context.Context, c *cli, st storage.Store, dir, text string, everywhere bool) error {
	var err error
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return err
		}
	}
	// Resolved as a session's workspace is: a memory added from a path
	// through a link is for the project the sessions there see.
	ws, err := tools.NewWorkspace(dir)
	if err != nil {
		return err
	}
	secret, err := c.secret()
	if err != nil {
		return err
	}
	m, known, err := session.Remember(ctx, st, ws.Root(), text, everywhere, "retrace memory", secret)
	if err != nil {
		return err
	}
	if known {
		fmt.Fprintf(c.stdout, "already remembered as %s %s; nothing new was kept: %s\n", m.ID, scopeOf(m), inertLine(m.Text))
		return nil
	}
	fmt.Fprintf(c.stdout, "remembered %s %s: %s\n", m.ID, scopeOf(m), inertLine(m.Text))
	return nil
}

// editMemory gives the memory id the text of words or, with none, of
// standard input.
func editMemory(ctx context.Context, c *cli, st storage.Store, id string, words []string) error {
	text := strings.Join(words, " ")
	if len(words) == 0 {
		// Read whole (within reason) and trimmed before the memory's own
		// length is checked: cut first, a long text would be kept short
		// without a word.
		b, err := io.ReadAll(io.LimitReader(c.stdin, maxMemoryInput+1))
		if err != nil {
			return err
		}
		if len(b) > maxMemoryInput {
			return fmt.Errorf("memory edit: more than %d KiB on standard input; a memory is at most %d bytes", maxMemoryInput>>10, state.MaxMemory)
		}
		text = strings.TrimSpace(string(b))
	}
	secret, err := c.secret()
	if err != nil {
		return err
	}
	kept, err := session.EditMemory(ctx, st, id, text, secret)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "memory %s is now: %s\n", kept.Memory.ID, inertLine(kept.Memory.Text))
	return nil
}

// printPrune says what a prune of the memory log folded away, or would.
func printPrune(w io.Writer, rep storage.MemoryPrune) {
	if !rep.Changed() {
		fmt.Fprintf(w, "nothing to prune: the memory log holds %s, one entry each\n", transcript.Count(rep.Kept, "memory"))
		return
	}
	verb, gone := "folded", "are gone"
	if rep.DryRun {
		verb, gone = "would fold", "would go"
	}
	fmt.Fprintf(w, "%s the memory log's %s into %s: the entries of %s removed since, and the earlier texts of edited ones, %s; the memories kept now stay as they are\n",
		verb, transcript.Count(rep.Entries, "entry"), transcript.Count(rep.Kept, "entry"), transcript.Count(rep.Forgotten, "memory"), gone)
	if rep.DryRun {
		fmt.Fprintln(w, "nothing was changed (run it again without --dry-run); after it, 'retrace memory restore' reaches only the versions of the pruned log")
		return
	}
	fmt.Fprintf(w, "the log's versions now run v1 to v%d: 'retrace memory restore' reaches only those\n", rep.Kept)
}

// changeMemory appends ev and says what it did.
func changeMemory(ctx context.Context, c *cli, st storage.Store, ev state.MemoryEvent) error {
	kept, err := st.AppendMemory(ctx, ev)
	if err != nil {
		return err
	}
	switch kept.Kind {
	case state.MemoryRemoved:
		fmt.Fprintf(c.stdout, "removed memory %s (v%d of the memory log; 'retrace memory restore %d' brings it back)\n", kept.Memory.ID, kept.Version, kept.Version-1)
	case state.MemoryRestored:
		fmt.Fprintf(c.stdout, "restored the memories of v%d (now v%d of the memory log)\n", kept.To, kept.Version)
	}
	return nil
}

// secret is what replaces the API key in a memory the command line adds
// or edits: the key the configuration and the environment name, as a
// session would send it.
func (c *cli) secret() (llm.Scrub, error) {
	cfg, err := c.loadConfig(modelFlags{})
	if err != nil {
		return llm.Scrub{}, fmt.Errorf("read the configuration, to keep the API key out of the memory: %w", err)
	}
	return llm.NewScrub(cfg.apiKey), nil
}

// inertLine is a memory's text on one line, with nothing in it a terminal
// would act on: the model may have written it.
func inertLine(s string) string { return oneLine(transcript.Inert(s)) }

// maxMemoryInput is the most `memory edit` reads from standard input.
const maxMemoryInput = 1 << 20

func scopeOf(m state.Memory) string {
	if m.Everywhere() {
		return "for every project"
	}
	return "for " + inertLine(m.Project)
}

func listMemories(ctx context.Context, c *cli, st storage.Store, asJSON bool) error {
	m, err := st.MemoriesNow(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		list := m.List
		if list == nil {
			list = []state.Memory{}
		}
		return writeJSON(c, list)
	}
	if len(m.List) == 0 {
		fmt.Fprintf(c.stdout, "no memories in %s; the agent keeps one when asked to remember something, or 'retrace memory add TEXT'\n", storeName(st))
		return nil
	}
	w := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tFOR\tCHANGED\tTEXT")
	for _, x := range m.List {
		scope := "every project"
		if !x.Everywhere() {
			scope = inertLine(x.Project) // a directory's name may hold escapes
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", x.ID, scope, x.UpdatedAt.Local().Format("2006-01-02 15:04"), inertLine(x.Text))
	}
	return w.Flush()
}

func memoryLog(ctx context.Context, c *cli, st storage.Store, asJSON bool) error {
	log, err := st.MemoryEvents(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		if log == nil {
			log = []state.MemoryEvent{}
		}
		return writeJSON(c, log)
	}
	if len(log) == 0 {
		fmt.Fprintf(c.stdout, "the memory log of %s is empty\n", storeName(st))
		return nil
	}
	w := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "VERSION\tAT\tEVENT\tMEMORY")
	for _, ev := range log {
		what := ev.Memory.ID + " " + inertLine(ev.Memory.Text)
		switch ev.Kind {
		case state.MemoryRemoved:
			what = ev.Memory.ID
		case state.MemoryRestored:
			what = fmt.Sprintf("the memories of v%d", ev.To)
		}
		fmt.Fprintf(w, "v%d\t%s\t%s\t%s\n", ev.Version, ev.At.Local().Format("2006-01-02 15:04"), ev.Kind, what)
	}
	return w.Flush()
}
