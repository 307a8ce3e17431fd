package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"retrace/state"
	"retrace/storage"
)

// importCmd reads what `retrace export --format json` wrote and keeps it
// in the database, every version, branch and file content. The file is
// read and checked whole before the database is opened: a bad file
// touches nothing.
func importCmd(fs *flag.FlagSet) func(context.Context, *cli, []string) error {
	newID := fs.Bool("new-id", false, "keep the session under a fresh id: a copy beside the one the database holds already")
	trust := fs.Bool("trust-endpoints", false, "keep a session that talks to a model server other than yours: continuing it sends your API key there")
	workspace := fs.String("workspace", "", "the directory the session's files belong in here (default the one it recorded, which must be a directory of this machine)")
	return func(ctx context.Context, c *cli, args []string) error {
		name := args[0]
		ex, err := readImport(c, name)
		if err != nil {
			return err
		}
		defer ex.Spool.Close()
		if name == "-" {
			name = "stdin"
		}
		if !*trust {
			mine, err := c.ownEndpoint()
			if err != nil {
				return err
			}
			if err := checkEndpoints(ex, mine); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		if *newID {
			ex.Session.ID = ""
		}
		if ex, err = arriving(ex, *workspace, "imported from "+filepath.Base(name)); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		st, err := c.openStore(ctx)
		if err != nil {
			return err
		}
		defer st.Close()
		info, err := st.Import(ctx, ex)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		fmt.Fprintf(c.stdout, "imported session %s (%q, %d versions, head v%d)\n", info.ID, info.Title, info.Versions, info.Head)
		fmt.Fprint(c.stdout, arrivedLine(info))
		return nil
	}
}

// foreignEndpoints says where an export's session would send the key
// that the person did not choose: a session continues with the model
// server it recorded, and with the variable it recorded the key in. A
// server other than the person's own (mine, from their config, flags and
// environment) is foreign wherever it is, on this machine or a private
// network too, since the key goes with every request; so is a recorded
// key variable other than theirs (an export may name $GITHUB_TOKEN). The
// demo model takes no key.
func foreignEndpoints(ex storage.Export, mine state.Endpoint) []string {
	var out []string
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, r := range ex.Checkpoints {
		ep := r.Data.Endpoint
		if ep == nil {
			continue
		}
		u := trimURL(ep.BaseURL)
		if u != "" && u != trimURL(mine.BaseURL) && u != demoEndpoint {
			add("to " + u)
		}
		if ep.KeyEnv != "" && ep.KeyEnv != mine.KeyEnv {
			add("the key in $" + ep.KeyEnv)
		}
	}
	return out
}

// checkEndpoints refuses an export whose session would send the person's
// key where they did not choose.
func checkEndpoints(ex storage.Export, mine state.Endpoint) error {
	foreign := foreignEndpoints(ex, mine)
	if len(foreign) == 0 {
		return nil
	}
	return fmt.Errorf("continuing the session would send a key of yours where you did not choose: %s (yours: %s with the key in $%s). "+
		"If you trust where it comes from, add --trust-endpoints; or continue it with --base-url",
		inertLine(strings.Join(foreign, "; ")), mine.BaseURL, mine.KeyEnv)
}

// ownEndpoint is the model server and key variable the person's config,
// flags and environment name.
func (c *cli) ownEndpoint() (state.Endpoint, error) {
	cfg, err := c.loadConfig(modelFlags{})
	return state.Endpoint{BaseURL: cfg.BaseURL, KeyEnv: cfg.KeyEnv}, err
}

// readImport reads the export file, or stdin for "-", as it streams by
// (storage.ReadExport): its file contents wait in a temporary file, not in
// memory, and a file past storage.MaxImportSize is refused by its size
// rather than read to the end.
func readImport(c *cli, name string) (storage.Export, error) {
	r := c.stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return storage.Export{}, fmt.Errorf("import: %w", err)
		}
		defer f.Close()
		r = f
	} else {
		name = "stdin"
	}
	ex, err := storage.ReadExport(r, "")
	if err != nil {
		return storage.Export{}, fmt.Errorf("%s: %w", name, err)
	}
	return ex, nil
}
