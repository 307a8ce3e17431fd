package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"retrace/agent/session"
	"retrace/storage"
)

// importCmd reads what `retrace export --format json` wrote and keeps it
// in the database, every version, branch and file content. The file is
// read and checked whole before the database is opened: a bad file
// touches nothing.
func importCmd(fs *flag.FlagSet) func(context.Context, *cli, []string) error {
	newID := fs.Bool("new-id", false, "keep the session under a fresh id: a copy beside the one the database holds already")
	trust := fs.Bool("trust-endpoints", false, "keep a session that talks to a model server other than yours: continuing it sends your API key there")
	return func(ctx context.Context, c *cli, args []string) error {
		name := args[0]
		data, err := readImport(c, name)
		if err != nil {
			return err
		}
		if name == "-" {
			name = "stdin"
		}
		ex, err := storage.DecodeExport(data)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if !*trust {
			cfg, err := c.loadConfig(modelFlags{})
			if err != nil {
				return err
			}
			if foreign := foreignEndpoints(ex, cfg.BaseURL); len(foreign) > 0 {
				return fmt.Errorf("%s: the session talks to %s, not to your model server (%s); continuing it would send your API key there. "+
					"If you trust where the file comes from, import it with --trust-endpoints; or continue it elsewhere with --base-url",
					name, inertLine(strings.Join(foreign, ", ")), cfg.BaseURL)
			}
		}
		if *newID {
			ex.Session.ID = ""
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
		return nil
	}
}

// foreignEndpoints are the remote model servers an export's session
// records that are not the person's own (mine, from their config, flags
// and environment): a session continues with the server it recorded, and
// sends the key there. The demo model and servers on this machine or
// network need no key, and are no one's to steal it.
func foreignEndpoints(ex storage.Export, mine string) []string {
	var out []string
	for _, r := range ex.Checkpoints {
		ep := r.Data.Endpoint
		if ep == nil || ep.BaseURL == "" {
			continue
		}
		u := trimURL(ep.BaseURL)
		if u != trimURL(mine) && u != demoEndpoint && session.NeedsKey(u) && !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	return out
}

// readImport reads the export file, or stdin for "-", up to
// storage.MaxImportSize bytes and one more, so that a larger file is
// refused by its size rather than read to the end.
func readImport(c *cli, name string) ([]byte, error) {
	r := c.stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("import: %w", err)
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, storage.MaxImportSize+1))
	if err != nil {
		return nil, fmt.Errorf("import: read %s: %w", name, err)
	}
	return data, nil
}
