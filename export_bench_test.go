package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkExportLarge exports, in a process of its own, a session that
// holds one file content of 150 MiB (random bytes, which nothing
// compresses), to a file. It reports that process's peak resident memory
// against the content, and the same for a session of one small content
// (the process's floor). The sessions are imported first, by the same
// binary. RETRACE_BENCH_BIN names another retrace binary to measure (an
// older build, for the figures before a change). With RETRACE_PG_URL set,
// it measures the same export from that PostgreSQL database too
// (pg-peak-MiB).
func BenchmarkExportLarge(b *testing.B) {
	dir := b.TempDir()
	const size = 150 << 20
	big := filepath.Join(dir, "big.json")
	writeBenchExport(b, big, 1, size)
	small := filepath.Join(dir, "small.json")
	writeBenchExport(b, small, 1, 1<<10)
	exe := os.Getenv("RETRACE_BENCH_BIN")
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			b.Fatal(err)
		}
	}
	db := filepath.Join(dir, "retrace.db")
	bigID := benchImport(b, exe, big, db)
	out := filepath.Join(dir, "out.json")
	pg := os.Getenv("RETRACE_PG_URL")
	var pgID string
	if pg != "" {
		pgID = benchImport(b, exe, big, pg)
		// A shared database keeps nothing of a benchmark.
		b.Cleanup(func() { benchChild(b, exe, dir, "rm", pgID, "--db", pg) })
	}
	for b.Loop() {
		floorDB := filepath.Join(b.TempDir(), "retrace.db")
		floor := exportPeak(b, exe, benchImport(b, exe, small, floorDB), floorDB, out)
		peak := exportPeak(b, exe, bigID, db, out)
		info, err := os.Stat(out)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(info.Size())/1e6, "export-MB")
		b.ReportMetric(float64(peak)/1024, "peak-MiB")
		b.ReportMetric(float64(floor)/1024, "floor-MiB")
		b.ReportMetric(float64(peak)*1024/size, "peak/content")
		if pg != "" {
			peak := exportPeak(b, exe, pgID, pg, out)
			b.ReportMetric(float64(peak)/1024, "pg-peak-MiB")
			b.ReportMetric(float64(peak)*1024/size, "pg-peak/content")
		}
	}
}

// benchImport imports file into the database db names, under a fresh id,
// and returns the id.
func benchImport(b *testing.B, exe, file, db string) string {
	b.Helper()
	dir := b.TempDir()
	out := benchChild(b, exe, dir, "import", file, "--workspace", dir, "--db", db, "--new-id")
	id, _, _ := strings.Cut(strings.TrimPrefix(out, "imported session "), " ")
	return id
}

// benchChild runs a command line of exe in a child process whose
// configuration and temporary files are in dir, and returns its output.
func benchChild(b *testing.B, exe, dir string, args ...string) string {
	b.Helper()
	cmd := testCommand(b, exe, args...)
	cmd.Env = append(os.Environ(), benchChildEnv+"=cli", "XDG_CONFIG_HOME="+dir, "TMPDIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// exportPeak exports session id from db to the file out in a child
// process and returns the child's peak resident memory in KiB.
func exportPeak(b *testing.B, exe, id, db, out string) int64 {
	b.Helper()
	dir := b.TempDir()
	peak := filepath.Join(dir, "peak")
	cmd := testCommand(b, exe, "export", id, "--db", db)
	cmd.Env = append(os.Environ(), benchChildEnv+"=cli", benchChildPeak+"="+peak, "XDG_CONFIG_HOME="+dir, "TMPDIR="+dir)
	f, err := os.Create(out)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var errOut strings.Builder
	cmd.Stdout, cmd.Stderr = f, &errOut
	if err := cmd.Run(); err != nil {
		b.Fatalf("export %s: %v\n%s", id, err, errOut.String())
	}
	kb, err := os.ReadFile(peak)
	if err != nil {
		b.Fatal(err)
	}
	n, err := strconv.ParseInt(string(kb), 10, 64)
	if err != nil {
		b.Fatal(err)
	}
	return n
}
