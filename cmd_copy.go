package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"reflect"

	"retrace/state"
	"retrace/state/transcript"
	"retrace/storage"
)

// copyCmd copies sessions from one database to another, a file or
// PostgreSQL on either side, each whole (every version, branch and file
// content) through export and import, under its own id.
func copyCmd(fs *flag.FlagSet) func(context.Context, *cli, []string) error {
	from := fs.String("from", "", "the database to copy from: a file or a postgres:// URL (default: --db's, as for any command)")
	to := fs.String("to", "", "the database to copy into: a file (made if missing) or a postgres:// URL")
	trust := fs.Bool("trust-endpoints", false, "copy a session that talks to a model server other than yours: continuing it sends your API key there")
	return func(ctx context.Context, c *cli, ids []string) error {
		if *to == "" {
			return usagef("copy needs --to: the database to copy into")
		}
		src, err := checkLocation(*from, "--from")
		if src == "" && err == nil {
			src, err = c.dbLocation()
		}
		if err != nil {
			return err
		}
		if _, err := checkLocation(*to, "--to"); err != nil {
			return err
		}
		if src == *to {
			return usagef("copy --from and --to name the same database (%s)", locationName(src))
		}
		// A database handed over is as foreign as an export: its sessions
		// go on with the servers they recorded.
		var mine *state.Endpoint
		if !*trust {
			ep, err := c.ownEndpoint()
			if err != nil {
				return err
			}
			mine = &ep
		}
		source, err := openLocation(ctx, src)
		if err != nil {
			return err
		}
		defer source.Close()
		list, err := sessionsToCopy(ctx, source, ids)
		if err != nil {
			return err
		}
		target, err := openLocation(ctx, *to)
		if err != nil {
			return err
		}
		defer target.Close()
		failed := 0
		for _, id := range list {
			info, err := copySession(ctx, source, target, id, mine)
			if err != nil {
				fmt.Fprintf(c.stderr, "retrace: session %s not copied: %s\n", id, explain(err))
				failed++
				continue
			}
			fmt.Fprintf(c.stdout, "copied session %s %q: %d versions, head v%d\n", info.ID, title(info), info.Versions, info.Head)
		}
		memories := error(nil)
		if len(ids) == 0 {
			// A whole copy carries what the agent remembers too.
			var n int
			switch n, memories = copyMemories(ctx, source, target); {
			case memories != nil:
				fmt.Fprintf(c.stderr, "retrace: the memory log not copied: %s\n", explain(memories))
			case n > 0:
				fmt.Fprintf(c.stdout, "copied the memory log: %s\n", transcript.Count(n, "entry"))
			}
		}
		if failed > 0 {
			return fmt.Errorf("%d of %d sessions not copied from %s to %s (each named above)", failed, len(list), locationName(src), locationName(*to))
		}
		if memories != nil {
			return fmt.Errorf("the memory log not copied from %s to %s (said above); the sessions were", locationName(src), locationName(*to))
		}
		fmt.Fprintf(c.stdout, "%d sessions copied from %s to %s\n", len(list), locationName(src), locationName(*to))
		return nil
	}
}

// copyMemories replays source's memory log into target's, entry by
// entry, when target has none of its own: numbers, ids and times stay.
// Two logs are not merged; one already there is left as it is, unless it
// is the same log.
func copyMemories(ctx context.Context, source, target storage.Store) (int, error) {
	log, err := source.MemoryEvents(ctx)
	if err != nil || len(log) == 0 {
		return 0, err
	}
	there, err := target.MemoryEvents(ctx)
	if err != nil {
		return 0, err
	}
	if len(there) > 0 {
		if reflect.DeepEqual(there, log) {
			return 0, nil
		}
		return 0, fmt.Errorf("the target keeps a memory log of its own (%s); logs are not merged", transcript.Count(len(there), "entry"))
	}
	for _, ev := range log {
		if _, err := target.AppendMemory(ctx, ev); err != nil {
			return 0, fmt.Errorf("memory log v%d: %w", ev.Version, err)
		}
	}
	return len(log), nil
}

// sessionsToCopy is every session of source, or those ids (each a prefix
// naming one) in the order given.
func sessionsToCopy(ctx context.Context, source storage.Store, ids []string) ([]string, error) {
	if len(ids) == 0 {
		all, err := source.Sessions(ctx)
		if err != nil {
			return nil, err
		}
		list := make([]string, len(all))
		for i, s := range all {
			list[i] = s.ID
		}
		return list, nil
	}
	list := make([]string, 0, len(ids))
	for _, prefix := range ids {
		id, err := source.Resolve(ctx, prefix)
		if err != nil {
			return nil, err
		}
		list = append(list, id)
	}
	return list, nil
}

// copySession keeps source's session id in target. The import checks the
// export whole, and a target that holds the id already refuses it: a copy
// never writes over a session.
func copySession(ctx context.Context, source, target storage.Store, id string, mine *state.Endpoint) (storage.SessionInfo, error) {
	ex, err := source.Export(ctx, id)
	if err != nil {
		return storage.SessionInfo{}, err
	}
	if mine != nil {
		if err := checkEndpoints(ex, *mine); err != nil {
			return storage.SessionInfo{}, err
		}
	}
	info, err := target.Import(ctx, ex)
	if errors.Is(err, storage.ErrSessionExists) {
		return storage.SessionInfo{}, fmt.Errorf("the target holds a session %s already; nothing of it was changed", id)
	}
	return info, err
}
