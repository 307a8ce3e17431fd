package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"retrace/agent/snapshot"
	"retrace/state/transcript"
	"retrace/storage"
	"retrace/storage/pgstore"
)

// keepFlag collects --keep ID:V, read once; ids are resolved once the
// store is open.
type keepFlag []keptVersion

// keptVersion is one --keep: a session id's prefix and a version.
type keptVersion struct {
	prefix  string
	version int
}

func (k *keepFlag) String() string {
	var out []string
	for _, kv := range *k {
		out = append(out, fmt.Sprintf("%s:%d", kv.prefix, kv.version))
	}
	return strings.Join(out, ",")
}

func (k *keepFlag) Set(v string) error {
	id, ver, ok := strings.Cut(v, ":")
	if !ok || id == "" {
		return fmt.Errorf("--keep wants ID:VERSION, such as 3f2a:12, not %q", v)
	}
	n, err := strconv.Atoi(strings.TrimPrefix(ver, "v"))
	if err != nil {
		return fmt.Errorf("--keep wants ID:VERSION, such as 3f2a:12; %q is not a version number", ver)
	}
	*k = append(*k, keptVersion{id, n})
	return nil
}

var ageForm = regexp.MustCompile(`^([0-9]{1,6})([dhm])$`)

// parseAge reads an age in days, hours or minutes: 90d, 36h, 45m.
func parseAge(s string) (time.Duration, error) {
	m := ageForm.FindStringSubmatch(s)
	if m == nil {
		return 0, usagef("--older-than wants a number of days, hours or minutes, such as 90d, 36h or 45m, not %q", s)
	}
	n, _ := strconv.Atoi(m[1])
	if n == 0 {
		return 0, usagef("--older-than %s would take every session; 'retrace rm ID' removes one", s)
	}
	unit := map[string]time.Duration{"d": 24 * time.Hour, "h": time.Hour, "m": time.Minute}[m[2]]
	return time.Duration(n) * unit, nil
}

func gcCmd(fs *flag.FlagSet) func(context.Context, *cli, []string) error {
	var older string
	var keep keepFlag
	var opts storage.GCOptions
	fs.StringVar(&older, "older-than", "", "remove sessions not updated for this long: 90d, 36h, 45m")
	fs.BoolVar(&opts.Branches, "branches", false, "remove abandoned branches: versions on no path from the root to the head (or to a --keep version)")
	fs.Var(&keep, "keep", "with --branches, keep ID:VERSION and every version before it (repeatable)")
	fs.BoolVar(&opts.DryRun, "dry-run", false, "list what would go and the bytes it would free; change nothing")
	cache := fs.Bool("cache", false, "remove from the content cache every file content no workspace's files hold now")
	memories := fs.Bool("memories", false, "fold away the memory log's removed memories and earlier texts, as 'retrace memory prune' does")
	return func(ctx context.Context, c *cli, _ []string) error {
		if older == "" && !opts.Branches && !*cache && !*memories {
			return usagef("say what to remove: --older-than AGE (such as 90d), --branches, --cache, --memories, or several; --dry-run shows it first")
		}
		if *cache {
			if opts.DryRun {
				return usagef("--cache has no dry run: what it removes is a cache, which later scans refill from the workspace")
			}
			if err := gcCache(c); err != nil {
				return err
			}
			if older == "" && !opts.Branches && !*memories {
				return nil
			}
		}
		if older != "" {
			age, err := parseAge(older)
			if err != nil {
				return err
			}
			opts.OlderThan = age
		}
		if len(keep) > 0 && !opts.Branches {
			return usagef("--keep names versions --branches keeps; give --branches too")
		}
		open, err := c.openStore(ctx)
		if err != nil {
			return err
		}
		defer open.Close()
		if *memories {
			rep, err := open.PruneMemories(ctx, opts.DryRun)
			if err != nil {
				return err
			}
			printPrune(c.stdout, rep)
			if older == "" && !opts.Branches {
				return nil
			}
		}
		st, ok := open.(collector)
		if !ok {
			return fmt.Errorf("gc: %s cannot remove what it keeps", storeName(open))
		}
		opts.Keep = map[string][]int{}
		for _, k := range keep {
			id, err := st.Resolve(ctx, k.prefix)
			if err != nil {
				return err
			}
			opts.Keep[id] = append(opts.Keep[id], k.version)
		}
		rep, err := st.GC(ctx, opts)
		if err != nil {
			return err
		}
		printGC(c.stdout, rep, time.Now(), isServer(open))
		return nil
	}
}

// gcCache evicts from the content cache what no workspace holds now.
func gcCache(c *cli) error {
	cfg, err := c.loadConfig(modelFlags{})
	if err != nil {
		return err
	}
	dir, err := snapshot.CacheDir(cfg.Files)
	if err != nil {
		return err
	}
	rep, err := snapshot.Evict(dir, 0)
	switch {
	case err != nil:
		return fmt.Errorf("gc --cache: %w", err)
	case rep.Busy:
		fmt.Fprintln(c.stdout, "content cache: another retrace process is evicting from it now; nothing done")
	default:
		fmt.Fprintf(c.stdout, "content cache: removed %s, %s -> %s\n", transcript.Count(rep.Objects, "file content"), bytesOf(rep.Before), bytesOf(rep.After))
	}
	return nil
}

// collector is a store that runs gc: both of retrace's.
type collector interface {
	storage.Store
	GC(ctx context.Context, opts storage.GCOptions) (storage.GCReport, error)
}

// compactor is a store that gives removed data's space back: a file
// rewritten, or a database's tables vacuumed.
type compactor interface {
	storage.Store
	Compact(ctx context.Context) (storage.CompactReport, error)
}

// isServer reports a store on a database server, which keeps its free
// space its own way.
func isServer(st storage.Store) bool { _, ok := st.(*pgstore.Store); return ok }

// printGC writes what gc removed; server says the store is a database
// server's, whose space PostgreSQL reuses and VACUUM gives back.
func printGC(w io.Writer, rep storage.GCReport, now time.Time, server bool) {
	verb, nothing := "removed", "nothing to remove"
	if rep.DryRun {
		verb, nothing = "would remove", "nothing would be removed"
	}
	if len(rep.Sessions) > 0 {
		fmt.Fprintf(w, "%s %s:\n", verb, transcript.Count(len(rep.Sessions), "session"))
		for _, s := range rep.Sessions {
			fmt.Fprintf(w, "  %s  %q  not updated for %s, %s, %s\n", s.ID, title(s.SessionInfo), age(now.Sub(s.UpdatedAt)), transcript.Count(s.Versions, "version"), bytesOf(s.Bytes))
		}
	}
	if len(rep.Branches) > 0 {
		fmt.Fprintf(w, "%s %s:\n", verb, transcript.Count(len(rep.Branches), "abandoned branch"))
		for _, b := range rep.Branches {
			fmt.Fprintf(w, "  %s  %q  branch %d after v%d: %s, %s\n", b.Session.ID, title(b.Session), b.Branch, b.Fork, versionList(b.Versions), bytesOf(b.Bytes))
		}
	}
	if rep.Blobs > 0 {
		fmt.Fprintf(w, "%s %s nothing else refers to, %s\n", verb, transcript.Count(rep.Blobs, "file content"), bytesOf(rep.BlobBytes))
	}
	for _, s := range rep.Skipped {
		holder := "another retrace process"
		if s.PID > 0 {
			holder = fmt.Sprintf("another retrace process (pid %d)", s.PID)
		}
		fmt.Fprintf(w, "skipped %s  %q: in use by %s\n", s.ID, title(s.SessionInfo), holder)
	}
	switch {
	case rep.Bytes == 0:
		fmt.Fprintln(w, nothing)
	case rep.DryRun:
		fmt.Fprintf(w, "would free %s; nothing was changed (run it again without --dry-run)\n", bytesOf(rep.Bytes))
	case server:
		fmt.Fprintf(w, "freed %s; PostgreSQL reuses the space for later writes, and its VACUUM FULL gives it back to the disk\n", bytesOf(rep.Bytes))
	default:
		fmt.Fprintf(w, "freed %s; the file now has %s of free pages, which later writes reuse and 'retrace compact' gives back to the disk\n", bytesOf(rep.Bytes), bytesOf(rep.FreeBytes))
	}
}

func compactCmd(*flag.FlagSet) func(context.Context, *cli, []string) error {
	return func(ctx context.Context, c *cli, _ []string) error {
		open, err := c.openStore(ctx)
		if err != nil {
			return err
		}
		defer open.Close()
		st, ok := open.(compactor)
		if !ok {
			return fmt.Errorf("compact: %s cannot be compacted", storeName(open))
		}
		rep, err := st.Compact(ctx)
		if err != nil {
			return err
		}
		printCompact(c.stdout, storeName(open), rep)
		return nil
	}
}

// printCompact writes what compact gave back: never less than nothing.
func printCompact(w io.Writer, name string, rep storage.CompactReport) {
	switch {
	case rep.Kept:
		fmt.Fprintf(w, "%s is compact already: a compacted copy would be %s, no smaller than the file's %s; the file is kept as it was, nothing given back\n", name, bytesOf(rep.Copy), bytesOf(rep.Before))
	case rep.After >= rep.Before:
		// A database server's rewrite is done, whatever size it came to.
		fmt.Fprintf(w, "compacted %s: %s -> %s (nothing given back)\n", name, bytesOf(rep.Before), bytesOf(rep.After))
	default:
		fmt.Fprintf(w, "compacted %s: %s -> %s (%s given back)\n", name, bytesOf(rep.Before), bytesOf(rep.After), bytesOf(rep.Before-rep.After))
	}
}

func title(s storage.SessionInfo) string { return oneLineClip(s.Title, 40) }

// age is a duration as a person says it: 120 days, 5 hours, 3 minutes.
func age(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return transcript.Count(int(d/(24*time.Hour)), "day")
	case d >= 2*time.Hour:
		return transcript.Count(int(d/time.Hour), "hour")
	}
	return transcript.Count(int(d/time.Minute), "minute")
}

// bytesOf is a size with the exact count of bytes, so figures can be
// compared, and a readable one.
func bytesOf(n int64) string {
	if n < 1<<10 {
		return transcript.ApproxSize(n)
	}
	return fmt.Sprintf("%s (%d bytes)", transcript.ApproxSize(n), n)
}
