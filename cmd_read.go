package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"retrace/agent/rewind"
	"retrace/agent/session"
	"retrace/state"
	"retrace/state/transcript"
	"retrace/storage"
)

func sessionsCmd(fs *flag.FlagSet) func(context.Context, *cli, []string) error {
	asJSON := fs.Bool("json", false, "print JSON: a list of {id, title, model, workspace, created_at, updated_at, head, versions, phase}")
	return func(ctx context.Context, c *cli, _ []string) error {
		st, err := c.openStore(ctx)
		if err != nil {
			return err
		}
		defer st.Close()
		list, err := st.Sessions(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			if list == nil {
				list = []storage.SessionInfo{}
			}
			return writeJSON(c, list)
		}
		if len(list) == 0 {
			fmt.Fprintf(c.stdout, "no sessions in %s\n", storeName(st))
			return nil
		}
		return renderSessions(c.stdout, list)
	}
}

func showCmd(fs *flag.FlagSet) func(context.Context, *cli, []string) error {
	version := -1
	fs.Func("version", "show version `N` instead of the head", func(v string) error {
		n, err := strconv.Atoi(strings.TrimPrefix(v, "v"))
		if err != nil || n < 0 {
			return fmt.Errorf("a version is a number from 0 up, not %q", v)
		}
		version = n
		return nil
	})
	asJSON := fs.Bool("json", false, "print the state as JSON")
	system := fs.Bool("system", false, "print the system prompt the conversation opens with")
	return func(ctx context.Context, c *cli, args []string) error {
		st, info, err := c.openSession(ctx, args[0])
		if err != nil {
			return err
		}
		defer st.Close()
		id := info.ID
		v := info.Head
		if version >= 0 {
			v = version
		}
		s, err := st.At(ctx, id, v)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(c, s)
		}
		files, err := rewind.DiffAll(ctx, st, rewind.Manifest(s))
		if err != nil {
			return err
		}
		renderState(c.stdout, info, s, files, showOptions{System: *system})
		return nil
	}
}

func diffCmd(fs *flag.FlagSet) func(context.Context, *cli, []string) error {
	stat := fs.Bool("stat", false, "one line per file (created, changed, deleted, +/− lines) instead of the diff")
	return func(ctx context.Context, c *cli, args []string) error {
		var vs [2]int
		for i, a := range args[1:] {
			n, err := strconv.Atoi(strings.TrimPrefix(a, "v"))
			if err != nil || n < 0 {
				return usagef("versions are numbers such as 3 or v3, not %q", a)
			}
			vs[i] = n
		}
		st, info, err := c.openSession(ctx, args[0])
		if err != nil {
			return err
		}
		defer st.Close()
		var at [2]state.State
		for i, v := range vs {
			if at[i], err = st.At(ctx, info.ID, v); err != nil {
				return err
			}
		}
		diffs, err := rewind.Between(ctx, st, at[0], at[1])
		if err != nil {
			return err
		}
		if len(diffs) == 0 {
			fmt.Fprintf(c.stderr, "the workspace files this session tracks are the same at v%d and v%d\n", vs[0], vs[1])
			return nil
		}
		for _, d := range diffs {
			switch {
			case *stat || d.Unified == "":
				fmt.Fprintln(c.stdout, transcript.Inert(d.Stat()))
			default:
				// The diff is the file's own text, and the file may be
				// anyone's: like every output it goes through the inert
				// writer, which shows what a terminal would act on (as
				// git quotes such a name) and leaves plain text as it is.
				fmt.Fprint(c.stdout, d.Unified)
			}
		}
		return nil
	}
}

func logCmd(fs *flag.FlagSet) func(context.Context, *cli, []string) error {
	asJSON := fs.Bool("json", false, "print the tree as JSON: {session, head, versions: [...], branches: [...]}")
	return func(ctx context.Context, c *cli, args []string) error {
		st, info, err := c.openSession(ctx, args[0])
		if err != nil {
			return err
		}
		defer st.Close()
		id := info.ID
		tree, err := st.Tree(ctx, id)
		if err != nil {
			return err
		}
		if *asJSON {
			if tree.Nodes == nil {
				tree.Nodes, tree.Branches = []storage.Node{}, []storage.Branch{}
			}
			return writeJSON(c, tree)
		}
		renderTree(c.stdout, info, tree)
		return nil
	}
}

func exportCmd(fs *flag.FlagSet) func(context.Context, *cli, []string) error {
	format := fs.String("format", "json", "json (the session and every version's event) or md (the conversation at the head, as markdown)")
	return func(ctx context.Context, c *cli, args []string) error {
		if *format != "json" && *format != "md" {
			return usagef("--format must be json or md, not %q", *format)
		}
		st, info, err := c.openSession(ctx, args[0])
		if err != nil {
			return err
		}
		defer st.Close()
		if *format == "md" {
			return session.ExportTo(ctx, c.stdout, st, info.ID, "md")
		}
		// Written as it is read: a file content may be up to a GiB.
		out := transcript.NewJSONWriter(c.stdout)
		if err := session.ExportTo(ctx, out, st, info.ID, "json"); err != nil {
			return err
		}
		return out.Flush()
	}
}

// writeJSON prints v as JSON. encoding/json leaves DEL, C1 and bidi
// controls raw in strings; they are escaped, so JSON on a terminal is
// as inert as text.
func writeJSON(c *cli, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = c.stdout.Write(append(transcript.InertJSON(b), '\n'))
	return err
}
