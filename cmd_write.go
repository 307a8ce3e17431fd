package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"retrace/agent/session"
	"retrace/storage/boltstore"
)

func rollbackCmd(*flag.FlagSet) func(context.Context, *cli, []string) error {
	return func(ctx context.Context, c *cli, args []string) error {
		v, err := strconv.Atoi(strings.TrimPrefix(args[1], "v"))
		if err != nil {
			return usagef("VERSION must be a version number such as 12 or v12, not %q", args[1])
		}
		st, before, err := c.openSession(ctx, args[0])
		if err != nil {
			return err
		}
		defer st.Close()
		id := before.ID
		if err := st.SetHead(ctx, id, v); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "session %s: head moved from v%d to v%d.\n", id, before.Head, v)
		if v < before.Versions {
			fmt.Fprintf(c.stdout, "The next message starts a new branch from v%d; every version stays in 'retrace log %s'.\n", v, session.Short(id))
		}
		return nil
	}
}

func rmCmd(*flag.FlagSet) func(context.Context, *cli, []string) error {
	return func(ctx context.Context, c *cli, args []string) error {
		st, info, err := c.openSession(ctx, args[0])
		if err != nil {
			return err
		}
		defer st.Close()
		id := info.ID
		if err := st.Delete(ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "deleted session %s (%q, %d versions)\n", id, info.Title, info.Versions)
		return nil
	}
}

func recoverCmd(*flag.FlagSet) func(context.Context, *cli, []string) error {
	return func(ctx context.Context, c *cli, args []string) error {
		src, err := c.dbPath()
		if err != nil {
			return err
		}
		r, err := boltstore.Recover(ctx, src, args[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "recovered %d sessions, %d versions into %s\n", r.Sessions, r.Versions, args[0])
		for _, l := range r.Lost {
			switch {
			case l.Whole:
				fmt.Fprintf(c.stdout, "  session %s could not be read at all (%s)\n", l.Session, l.Reason)
			case len(l.Lost) > 0:
				fmt.Fprintf(c.stdout, "  session %s lost %s (%s)\n", l.Session, versionList(l.Lost), l.Reason)
				if l.Renumbered {
					fmt.Fprintf(c.stdout, "    later versions were renumbered to stay 1..N; 'retrace log %s --db %s' shows them\n", session.Short(l.Session), args[0])
				}
			default:
				fmt.Fprintf(c.stdout, "  session %s kept every version, but %s\n", l.Session, l.Reason)
			}
		}
		fmt.Fprintf(c.stdout, "%s was not changed; use the copy with --db %s, or move it into place once you have looked\n", src, args[0])
		return nil
	}
}

func versionList(vs []int) string {
	parts := make([]string, 0, len(vs))
	for _, v := range vs {
		parts = append(parts, fmt.Sprintf("v%d", v))
	}
	if len(parts) > 8 {
		return strings.Join(parts[:8], ", ") + fmt.Sprintf(" and %d more", len(parts)-8)
	}
	return strings.Join(parts, ", ")
}
