package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"retrace/agent/rewind"
	"retrace/agent/session"
	"retrace/agent/snapshot"
	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"

	"retrace/state/transcript"
)

func rollbackCmd(fs *flag.FlagSet) func(context.Context, *cli, []string) error {
	var how rewind.Options
	fs.BoolVar(&how.Force, "force", false, "overwrite workspace files changed outside retrace since the session last recorded them")
	fs.BoolVar(&how.KeepFiles, "keep-files", false, "move only the head; leave every workspace file as it is")
	return func(ctx context.Context, c *cli, args []string) error {
		v, err := strconv.Atoi(strings.TrimPrefix(args[1], "v"))
		if err != nil {
			return usagef("VERSION must be a version number such as 12 or v12, not %q", args[1])
		}
		if how.Force && how.KeepFiles {
			return usagef("--force and --keep-files contradict each other: one overwrites files, the other leaves them")
		}
		st, before, err := c.openSession(ctx, args[0])
		if err != nil {
			return err
		}
		defer st.Close()
		id := before.ID
		if err := st.Claim(ctx, id); err != nil {
			return err
		}
		head, err := st.Head(ctx, id)
		if err != nil {
			return err
		}
		target, err := st.At(ctx, id, v)
		if err != nil {
			return err
		}
		// The workspace is opened only when files are to be put back: a
		// session whose directory is gone still moves its head.
		// Loaded and planned once: in a session whose command made a
		// hundred thousand files, each load and each plan goes over them.
		move := rewind.NewMove(head, target)
		var files rewind.Files
		if !how.KeepFiles && (head.Restoring != nil || len(move.Plan) > 0) {
			// A workspace recorded empty or relative would be wherever this
			// command was typed (one imported before imports checked it).
			if err := storage.CheckWorkspace(before.Workspace); err != nil {
				return fmt.Errorf("put back the session's files: %w (--keep-files moves only the head)", err)
			}
			cfg, err := c.loadConfig(modelFlags{})
			if err != nil {
				return err
			}
			// The session's own workspace, named by an absolute path: an
			// empty or relative one would be wherever this is typed.
			ws, err := session.OpenWorkspace(before.Workspace)
			if err != nil {
				return fmt.Errorf("restore the files of session %s: %w (--keep-files moves only the head)", session.Short(id), err)
			}
			w, err := snapshot.New(ws.Root(), cfg.Files)
			if err != nil {
				return fmt.Errorf("open the session's workspace to restore its files: %w (--keep-files moves only the head)", err)
			}
			defer w.Close()
			files = w
		}
		if settled, err := settleOpenRestore(ctx, c, st, files, head, how.KeepFiles); err != nil {
			return err
		} else if settled.Version != head.Version {
			head, move = settled, rewind.NewMove(settled, target)
		}
		res, err := rewind.RestoreMove(ctx, st, files, move, how)
		if conflict, ok := errors.AsType[*rewind.ConflictError](err); ok {
			fmt.Fprintf(c.stderr, "%s changed outside retrace since session %s last recorded %s; nothing was changed:\n",
				transcript.Count(len(conflict.Conflicts), "file"), session.Short(id), itThem(len(conflict.Conflicts)))
			for _, f := range conflict.Conflicts {
				fmt.Fprintf(c.stderr, "  %s (recorded %s, found %s)\n", f.Path, f.Recorded, f.Found)
			}
			return fmt.Errorf("rollback refused: rerun with --force to overwrite %s, or --keep-files to move only the head",
				itThem(len(conflict.Conflicts)))
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "session %s: head moved from v%d to v%d.\n", id, head.Version, v)
		if res.Head.Version != v {
			fmt.Fprintf(c.stdout, "Workspace: %s (recorded as v%d).\n", res.Text, res.Head.Version)
		}
		if v < before.Versions {
			fmt.Fprintf(c.stdout, "The next message starts a new branch from v%d; every version stays in 'retrace log %s'.\n", v, session.Short(id))
		}
		if n := len(res.Failed); n > 0 {
			return fmt.Errorf("%s could not be put back (listed above); the rest of the workspace is v%d's", transcript.Count(n, "file"), v)
		}
		return nil
	}
}

// settleOpenRestore deals with a restore a stopped retrace left open at
// head, before a rollback moves the head: one that keeps the files
// leaves it unfinished, on the branch the head leaves, and writes
// nothing; any other finishes it first. It returns the head to roll back
// from.
func settleOpenRestore(ctx context.Context, c *cli, st rewind.Store, files rewind.Files, head state.State, keepFiles bool) (state.State, error) {
	id := head.SessionID
	switch {
	case head.Restoring == nil:
		return head, nil
	case keepFiles:
		fmt.Fprintf(c.stdout, "session %s: a restore of the workspace was left open at v%d; not finished, the files stay as they are\n", id, head.Version)
		return head, nil
	}
	fin, err := rewind.Finish(ctx, st, files, head)
	if err != nil {
		return head, fmt.Errorf("finish the restore a stopped retrace left open: %w", err)
	}
	fmt.Fprintf(c.stdout, "session %s: a restore was left open at v%d; finished it first: %s\n", id, head.Version, fin.Text)
	return fin.Head, nil
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
		src, err := c.dbFile("recover")
		if err != nil {
			return err
		}
		r, err := boltstore.Recover(ctx, src, args[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "recovered %d sessions, %d versions and %s into %s\n", r.Sessions, r.Versions, transcript.Count(r.Memories, "memory log entry"), args[0])
		if r.MemoryLost != "" {
			fmt.Fprintf(c.stdout, "  %s\n", r.MemoryLost)
		}
		for _, l := range r.Lost {
			switch {
			case l.Whole:
				fmt.Fprintf(c.stdout, "  session %s could not be read at all (%s)\n", l.Session, l.Reason)
			case len(l.Lost) > 0:
				fmt.Fprintf(c.stdout, "  session %s lost %s (%s)\n", l.Session, versionList(l.Lost), l.Reason)
			default:
				fmt.Fprintf(c.stdout, "  session %s kept every version, but %s\n", l.Session, l.Reason)
			}
			if l.Renumbered {
				fmt.Fprintf(c.stdout, "    its versions were renumbered to stay 1..N; 'retrace log %s --db %s' shows them\n", session.Short(l.Session), args[0])
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

// itThem is the pronoun for n files.
func itThem(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
