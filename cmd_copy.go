package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"

	"retrace/state"
	"retrace/storage"
)

// copyFlags are `retrace copy`'s own flags.
type copyFlags struct {
	from, to, workspace         string
	trust, memories, everywhere bool
}

// copyCmd copies sessions from one database to another, a file or
// PostgreSQL on either side, each whole (every version, branch and file
// content) through export and import, under its own id. Each arrives
// closed, as an import does.
func copyCmd(fs *flag.FlagSet) func(context.Context, *cli, []string) error {
	var f copyFlags
	fs.StringVar(&f.from, "from", "", "the database to copy from: a file or a postgres:// URL (default: --db's, as for any command)")
	fs.StringVar(&f.to, "to", "", "the database to copy into: a file (made if missing) or a postgres:// URL")
	fs.BoolVar(&f.trust, "trust-endpoints", false, "copy a session that talks to a model server other than yours: continuing it sends your API key there")
	fs.StringVar(&f.workspace, "workspace", "", "the directory the copied sessions' files belong in here (default the one each recorded, which must be a directory of this machine)")
	fs.BoolVar(&f.memories, "memories", false, "copy the memory log too (a whole copy only); memories for every project are asked about first")
	fs.BoolVar(&f.everywhere, "everywhere", false, "with --memories: copy the memories kept for every project without asking")
	return func(ctx context.Context, c *cli, ids []string) error {
		return copySessions(ctx, c, f, ids)
	}
}

// copySessions copies the sessions ids name (every one when none), each
// on its own: one that cannot be copied is named and the others go on.
func copySessions(ctx context.Context, c *cli, f copyFlags, ids []string) error {
	src, err := copyLocations(c, f)
	if err != nil {
		return err
	}
	// A database handed over is as foreign as an export: its sessions
	// go on with the servers they recorded.
	var mine *state.Endpoint
	if !f.trust {
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
	target, err := openLocation(ctx, f.to)
	if err != nil {
		return err
	}
	defer target.Close()
	failed := 0
	for _, id := range list {
		info, err := copySession(ctx, source, target, id, mine, f.workspace, copiedFrom(src))
		if err != nil {
			fmt.Fprintf(c.stderr, "retrace: session %s not copied: %s\n", id, explain(err))
			failed++
			continue
		}
		fmt.Fprintf(c.stdout, "copied session %s %q: %d versions, head v%d\n", info.ID, title(info), info.Versions, info.Head)
		fmt.Fprint(c.stdout, arrivedLine(info))
	}
	memories := copyMemoryLog(ctx, c, f, len(ids) == 0, source, target)
	if failed > 0 {
		return fmt.Errorf("%d of %d sessions not copied from %s to %s (each named above)", failed, len(list), locationName(src), locationName(f.to))
	}
	if memories != nil {
		return fmt.Errorf("the memory log not copied from %s to %s (said above); the sessions were", locationName(src), locationName(f.to))
	}
	fmt.Fprintf(c.stdout, "%d sessions copied from %s to %s\n", len(list), locationName(src), locationName(f.to))
	return nil
}

// copyLocations checks --from and --to, and returns where to copy from.
func copyLocations(c *cli, f copyFlags) (string, error) {
	if f.to == "" {
		return "", usagef("copy needs --to: the database to copy into")
	}
	if f.everywhere && !f.memories {
		return "", usagef("--everywhere says which memories --memories copies; add --memories")
	}
	src, err := checkLocation(f.from, "--from")
	if src == "" && err == nil {
		src, err = c.dbLocation()
	}
	if err != nil {
		return "", err
	}
	if _, err := checkLocation(f.to, "--to"); err != nil {
		return "", err
	}
	if src == f.to {
		return "", usagef("copy --from and --to name the same database (%s)", locationName(src))
	}
	return src, nil
}

// copiedFrom is what a copied session's imported checkpoint says of where
// it came from: a file's name, never a URL's password.
func copiedFrom(src string) string {
	if isDatabaseURL(src) {
		return "copied from " + locationName(src)
	}
	return "copied from " + filepath.Base(src)
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
func copySession(ctx context.Context, source, target storage.Store, id string, mine *state.Endpoint, workspace, from string) (storage.SessionInfo, error) {
	ex, err := source.Export(ctx, id)
	if err != nil {
		return storage.SessionInfo{}, err
	}
	if mine != nil {
		if err := checkEndpoints(ex, *mine); err != nil {
			return storage.SessionInfo{}, err
		}
	}
	if ex, err = arriving(ex, workspace, from); err != nil {
		return storage.SessionInfo{}, err
	}
	info, err := target.Import(ctx, ex)
	if errors.Is(err, storage.ErrSessionExists) {
		return storage.SessionInfo{}, fmt.Errorf("the target holds a session %s already; nothing of it was changed", id)
	}
	return info, err
}
