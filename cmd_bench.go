package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"text/tabwriter"

	"retrace/agent/session/taskbench"
	"retrace/storage"
	"retrace/storage/boltstore"
	"retrace/storage/pgstore"
	"retrace/storage/storebench"
)

func benchCmd(fset *flag.FlagSet) func(context.Context, *cli, []string) error {
	turns := fset.Int("turns", 1000, "chat turns to simulate (a user message and a reply of 300 characters each); with --sessions, checkpoints per session")
	asJSON := fset.Bool("json", false, "print one JSON line")
	sessions := fset.Int("sessions", 0, "build a file of `N` sessions of --turns checkpoints each and measure one of them against the same session alone (a year of use); with --db the file is kept, after gc and compact")
	runs := fset.Int("runs", 5, "with --sessions, the runs each figure is the median of, each in a fresh process")
	fset.Lookup("db").Usage = "write the benchmark database here and keep it (it must not exist yet); default a temporary file, removed after. A postgres:// URL measures a scratch database made on that server and dropped after"
	return func(ctx context.Context, c *cli, _ []string) error {
		if *turns < 1 {
			return usagef("--turns must be at least 1, got %d", *turns)
		}
		year, err := yearMode(fset, *sessions, *turns, *runs, *asJSON)
		if err != nil {
			return err
		}
		server := isDatabaseURL(c.db)
		if server && year != nil {
			return usagef("bench --sessions builds and measures a database file: --db takes a path for it, not a PostgreSQL URL")
		}
		file := c.db
		if server {
			file = ""
		}
		dir, cleanup, err := benchDir(file)
		if err != nil {
			return err
		}
		defer cleanup()
		if year != nil {
			return runYear(ctx, c, dir, *year)
		}
		var r benchReport
		if server {
			r.Result, err = benchServer(ctx, c.db, dir, *turns)
		} else {
			open := func(path string) (storage.Store, error) { return boltstore.Open(path, boltstore.Options{}) }
			if r.Result, err = storebench.Run(ctx, dir, *turns, open, storebench.Options{}); err == nil {
				err = r.addTask(ctx, dir, open)
			}
		}
		if err != nil {
			return err
		}
		if file != "" {
			if err := os.Rename(filepath.Join(dir, storebench.File), c.db); err != nil {
				return err
			}
		}
		if *asJSON {
			return writeJSON(c, r)
		}
		w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintf(w, "turns\t%d\t(%d checkpoints)\n", r.Turns, r.Checkpoints)
		fmt.Fprintf(w, "total\t%.0f ms\t\n", r.TotalMS)
		fmt.Fprintf(w, "first 100 turns\t%.2f ms/turn\t\n", r.First100MSPerTurn)
		fmt.Fprintf(w, "last 100 turns\t%.2f ms/turn\t(%.2f× the first)\n", r.Last100MSPerTurn, r.Last100MSPerTurn/r.First100MSPerTurn)
		fmt.Fprintf(w, "database\t%d bytes\t(%.2f× the %d bytes of text)\n", r.DBBytes, float64(r.DBBytes)/float64(r.TextBytes), r.TextBytes)
		fmt.Fprintf(w, "one checkpoint\t%.2f ms\t(median; 99th percentile %.2f ms)\n", r.CheckpointP50MS, r.CheckpointP99MS)
		fmt.Fprintf(w, "resume\t%.2f ms\t(the head's recent part, fresh store)\n", r.LoadRecentMS)
		fmt.Fprintf(w, "load head\t%.2f ms\t(every message, fresh store)\n", r.LoadLatestMS)
		fmt.Fprintf(w, "load v2\t%.2f ms\t\n", r.LoadEarlyMS)
		fmt.Fprintf(w, "version tree\t%.2f ms\t\n", r.HistoryMS)
		if r.TaskCheckpoints == 0 {
			return w.Flush() // a server's writes are its own (benchReport)
		}
		fmt.Fprintf(w, "task, 1 tool call\t%d checkpoints\t(%s, then the answer)\n", r.TaskCheckpoints, benchTaskTool)
		fmt.Fprintf(w, "  file pages dirtied\t%d bytes\t(%d per checkpoint; /proc/self/io write_bytes)\n", r.TaskWriteBytes, r.TaskWriteBytes/int64(max(1, r.TaskCheckpoints)))
		fmt.Fprintf(w, "  written, all calls\t%d bytes\t(%d write calls, the model's loopback traffic included)\n", r.TaskWChar, r.TaskSysCW)
		return w.Flush()
	}
}

// benchReport is what `retrace bench` reports: the store's figures, and
// one agent task's in the same file after the chat turns (see
// taskbench.Result for what each counts). A database on a server has no
// task figures: what it writes, it writes in its own process, which this
// one's counters do not see.
type benchReport struct {
	storebench.Result
	TaskCheckpoints int   `json:"task_checkpoints,omitempty"`
	TaskWriteBytes  int64 `json:"task_write_bytes,omitempty"`
	TaskWChar       int64 `json:"task_wchar,omitempty"`
	TaskSysCW       int64 `json:"task_syscw,omitempty"`
}

// benchTaskTool is the tool of the task measured after the chat.
const benchTaskTool = "write_file"

// addTask runs the agent task with one tool call (benchTaskTool) in the
// file the chat was written to in dir, and keeps its figures.
func (r *benchReport) addTask(ctx context.Context, dir string, open storebench.Opener) error {
	task, err := taskbench.Run(ctx, dir, filepath.Join(dir, storebench.File), benchTaskTool, open, nil)
	if err != nil {
		return fmt.Errorf("the task with one tool call: %w", err)
	}
	r.TaskCheckpoints, r.TaskWriteBytes, r.TaskWChar, r.TaskSysCW = task.Checkpoints, task.WriteBytes, task.WChar, task.SysCW
	return nil
}

// benchDir is where the benchmark writes: a temporary directory, or, with
// --db, a new one beside the path asked for, which must not exist yet (the
// benchmark never touches a real database).
func benchDir(db string) (string, func(), error) {
	parent := ""
	if db != "" {
		if _, err := os.Stat(db); err == nil {
			return "", nil, fmt.Errorf("bench: %s exists; give a path for a new file", db)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", nil, fmt.Errorf("bench: %w", err)
		}
		parent = filepath.Dir(db)
		if err := os.MkdirAll(parent, 0o700); err != nil {
			return "", nil, fmt.Errorf("bench: cannot create %s: %w", parent, err)
		}
	}
	dir, err := os.MkdirTemp(parent, "retrace-bench-*")
	if err != nil {
		return "", nil, fmt.Errorf("bench: %w", err)
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// benchServer runs the benchmark on a scratch database made on the
// server url names, and drops it after: the sessions kept there are
// never touched.
func benchServer(ctx context.Context, url, dir string, turns int) (storebench.Result, error) {
	scratch, drop, err := pgstore.Scratch(ctx, url, "bench")
	if err != nil {
		return storebench.Result{}, fmt.Errorf("bench: %w", err)
	}
	open := func(string) (storage.Store, error) { return pgstore.Open(ctx, scratch, pgstore.Options{}) }
	r, err := storebench.Run(ctx, dir, turns, open, storebench.Options{})
	return r, errors.Join(err, drop())
}
