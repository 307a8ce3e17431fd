package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"retrace/state/transcript"
	"retrace/storage"
	"retrace/storage/boltstore"
	"retrace/storage/pgstore"
)

// verifyCmd checks the whole database file. Day to day, each operation
// checks only the part of the file it reads; this reads all of it, every
// page, record and file content, and is what retrace itself runs before
// writing to a file a crashed writer left.
func verifyCmd(*flag.FlagSet) func(context.Context, *cli, []string) error {
	return func(ctx context.Context, c *cli, _ []string) error {
		loc, err := c.dbLocation()
		if err != nil {
			return err
		}
		if isDatabaseURL(loc) {
			return verifyServer(ctx, c, loc)
		}
		path := loc
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("verify: %w", err)
		}
		start := time.Now()
		rep, err := boltstore.Check(ctx, path)
		if err != nil {
			return fmt.Errorf("%w; 'retrace recover NEW.db --db %s' copies every intact session and version into a new file", err, path)
		}
		printSound(c, path, rep, start)
		return nil
	}
}

// verifyServer checks a PostgreSQL database whole (pgstore.Check).
func verifyServer(ctx context.Context, c *cli, url string) error {
	start := time.Now()
	st, err := pgstore.Open(ctx, url, pgstore.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	rep, err := st.Check(ctx)
	if err != nil {
		return err
	}
	printSound(c, st.String(), rep, start)
	return nil
}

// printSound says what a check that passed read, and how long it took.
func printSound(c *cli, where string, rep storage.CheckReport, start time.Time) {
	fmt.Fprintf(c.stdout, "%s is sound: %s, %s, %s and %s in %s, checked in %s\n", where,
		transcript.Count(rep.Sessions, "session"), transcript.Count(rep.Checkpoints, "version"),
		transcript.Count(rep.Contents, "file content"), transcript.Count(rep.Memories, "memory log entry"),
		transcript.ApproxSize(rep.Bytes), time.Since(start).Round(time.Millisecond))
}
