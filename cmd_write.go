package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
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
			fmt.Fprintf(c.stdout, "The next message starts a new branch from v%d; every version stays in 'retrace log %s'.\n", v, id[:8])
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
