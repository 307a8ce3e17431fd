package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"retrace/storage/boltstore"
)

// benchYear runs the built retrace's bench with args, as a person would:
// its measurements re-run that binary in child processes, which the test
// binary cannot stand in for.
func benchYearCLI(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	cmd := testCommand(t, builtBinary(t), append([]string{"bench"}, args...)...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("retrace bench %s: %v\nstderr:\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String(), errOut.String()
}

// The year-of-use benchmark, small: every operation is measured in both
// files, in fresh processes (peak memory present), the figures are sane,
// gc takes the one old session of three and compact keeps the other two
// byte for byte, and progress goes to stderr.
func TestBenchSessionsJSON(t *testing.T) {
	kept := filepath.Join(t.TempDir(), "year.db")
	stdout, stderr := benchYearCLI(t, "--sessions", "3", "--turns", "20", "--runs", "1", "--json", "--db", kept)
	var r yearResult
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("bench --sessions --json: %v\n%s", err, stdout)
	}
	if r.Sessions != 3 || r.Checkpoints != 20 || r.Runs != 1 || r.Session == "" || r.Head != 20 || r.RollbackTo < 1 || r.RollbackTo >= r.Head {
		t.Fatalf("what was measured: %+v", r)
	}
	if r.BigBytes <= r.AloneBytes || r.AloneBytes <= 0 || r.BuildMS <= 0 {
		t.Fatalf("files: big %d bytes, alone %d bytes, built in %v ms", r.BigBytes, r.AloneBytes, r.BuildMS)
	}
	var names []string
	for _, op := range r.Operations {
		names = append(names, op.Name)
		inChild := op.Name != "head load"
		for _, f := range []yearFigure{op.Alone, op.Big} {
			if f.MS <= 0 || len(f.RunsMS) != 1 || (f.PeakRSSMB > 0) != inChild || f.PeakRSSMB > 4096 {
				t.Errorf("%s: %+v", op.Name, f)
			}
		}
		if op.Ratio <= 0 {
			t.Errorf("%s: ratio %v", op.Name, op.Ratio)
		}
	}
	if !slices.Equal(names, yearOpNames) {
		t.Fatalf("operations %q, want %q", names, yearOpNames)
	}
	g := r.GC
	if g.DryRun.Sessions != 1 || g.GC.Sessions != 1 || g.DryRun.ReportedBytes <= 0 || g.GC.ReportedBytes != g.DryRun.ReportedBytes {
		t.Errorf("gc: dry run %+v, run %+v", g.DryRun, g.GC)
	}
	if g.DryRun.FileAfter != g.DryRun.FileBefore || g.Compact.FileBefore != g.GC.FileAfter || g.Compact.FileAfter > g.Compact.FileBefore || g.Compact.ReportedBytes != g.Compact.FileBefore-g.Compact.FileAfter {
		t.Errorf("sizes: dry run %+v, gc %+v, compact %+v", g.DryRun, g.GC, g.Compact)
	}
	if !g.Identical || g.Remaining != 2 || len(g.Problems) != 0 {
		t.Errorf("after gc and compact: %d sessions, identical %v: %q", g.Remaining, g.Identical, g.Problems)
	}
	for _, want := range []string{"building 3 sessions of 20 checkpoints", "built 3/3 sessions", "measuring session", "alone.db", "gc --dry-run, gc and compact"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("progress on stderr lacks %q:\n%s", want, stderr)
		}
	}
	// --db keeps the big file, as gc and compact left it.
	list := retrace(t, "sessions", "--db", kept).ok(t).stdout
	if !strings.Contains(list, r.Session) || strings.Count(list, "bench session") != 2 {
		t.Fatalf("the kept file's sessions:\n%s", list)
	}
	if err := boltstore.Verify(context.Background(), kept); err != nil {
		t.Fatalf("the kept file: %v", err)
	}
}

// Without --json, a table: each operation with both figures and the
// ratio, then gc and compact, and the verdict on show --json (of one
// session: gc takes the other, the first, which is old).
func TestBenchSessionsTable(t *testing.T) {
	stdout, _ := benchYearCLI(t, "--sessions", "2", "--turns", "9", "--runs", "1")
	for _, want := range append([]string{"operation", "alone", "in the big file", "ratio", "peak RSS",
		"gc --dry-run", "compact", "show --json of the 1 remaining session before and after: byte-identical"}, yearOpNames...) {
		if !strings.Contains(stdout, want) {
			t.Errorf("the table lacks %q:\n%s", want, stdout)
		}
	}
}

// A year-of-use command line that makes no sense is a usage error (exit
// 2) saying what to give, before anything is built.
func TestBenchSessionsBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--sessions", "0"}, "--sessions must be at least 1, got 0"},
		{[]string{"--sessions", "-3"}, "--sessions must be at least 1, got -3"},
		{[]string{"--sessions"}, "flag needs an argument: -sessions"},
		{[]string{"--sessions", "many"}, `invalid value "many" for flag -sessions`},
		{[]string{"--sessions", "3", "--turns", "-1"}, "--turns must be at least 1, got -1"},
		{[]string{"--sessions", "3", "--runs", "0"}, "--runs must be at least 1, got 0"},
		{[]string{"--runs", "3"}, "--runs goes with --sessions"},
	} {
		r := retrace(t, append([]string{"bench"}, tc.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || r.stdout != "" {
			t.Errorf("bench %s: exit %d, stdout %q, stderr %q; want exit 2 saying %q", strings.Join(tc.args, " "), r.code, r.stdout, r.stderr, tc.want)
		}
	}
}
