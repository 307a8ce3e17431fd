package snapshot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// benchTree writes a workspace of 10,000 files: 9,000 tracked ones in
// 200 directories two levels deep, and 1,000 in build/, which .gitignore
// ignores. It returns the paths of three tracked files a command changes.
func benchTree(b *testing.B, dir string) []string {
	b.Helper()
	write := func(rel string, data []byte) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write(".gitignore", []byte("build/\n*.tmp\n"))
	body := make([]byte, 2048)
	for i := range 9000 {
		rel := fmt.Sprintf("pkg%02d/sub%02d/file%02d.go", i/450, i/45%10, i%45)
		copy(body, rel) // every file different, as source files are
		write(rel, body[:200+i%1800])
	}
	for i := range 1000 {
		write(fmt.Sprintf("build/obj%02d/out%03d.o", i/100, i%100), body[:500])
	}
	return []string{"pkg00/sub00/file00.go", "pkg07/sub03/file21.go", "pkg19/sub09/file44.go"}
}

// BenchmarkCommandScan is the cost run_command adds to a command: Mark
// before it and Changes after it, in a 10,000-file workspace where the
// command changed three files. The watcher has scanned before, as it has
// in a session; the three writes are inside the timing (a few µs).
func BenchmarkCommandScan(b *testing.B) {
	dir := b.TempDir()
	changed := benchTree(b, dir)
	w, err := New(dir, Options{CacheDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	ctx := context.Background()
	// Two scans: the first reads everything, the second reads again what
	// was still too recent to trust (racy entries), as a session's scans
	// would have by now.
	for range 2 {
		if _, err := w.Mark(ctx); err != nil {
			b.Fatal(err)
		}
	}
	var reads atomic.Int64
	w.onRead = func(string) { reads.Add(1) }
	n := 0
	cpu := cpuTime(b)
	for b.Loop() {
		m, err := w.Mark(ctx)
		if err != nil {
			b.Fatal(err)
		}
		n++
		for _, p := range changed {
			if err := os.WriteFile(filepath.Join(dir, p), fmt.Appendf(nil, "version %d of %s", n, p), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		changes, _, err := w.Changes(ctx, m)
		if err != nil {
			b.Fatal(err)
		}
		if len(changes) != len(changed) {
			b.Fatalf("got %d changes, want %d", len(changes), len(changed))
		}
	}
	b.ReportMetric(float64(reads.Load())/float64(n), "reads/op")
	b.ReportMetric(float64(cpuTime(b)-cpu)/1e6/float64(n), "cpu-ms/op")
}

// BenchmarkFirstMark is the cold cost: a new watcher with an empty cache
// reads, hashes and keeps every tracked file of the 10,000-file workspace.
func BenchmarkFirstMark(b *testing.B) {
	dir := b.TempDir()
	benchTree(b, dir)
	n := 0
	cpu := cpuTime(b)
	for b.Loop() {
		n++
		b.StopTimer()
		cache := b.TempDir()
		b.StartTimer()
		w, err := New(dir, Options{CacheDir: cache})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := w.Mark(context.Background()); err != nil {
			b.Fatal(err)
		}
		_ = w.Close()
	}
	b.ReportMetric(float64(cpuTime(b)-cpu)/1e6/float64(n), "cpu-ms/op")
}

// BenchmarkReopenMark is a new process on a workspace the cache knows:
// the index is loaded, every stamp matches, nothing is read.
func BenchmarkReopenMark(b *testing.B) {
	dir := b.TempDir()
	benchTree(b, dir)
	cache := b.TempDir()
	for range 2 {
		w, err := New(dir, Options{CacheDir: cache})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := w.Mark(context.Background()); err != nil {
			b.Fatal(err)
		}
		_ = w.Close()
	}
	n := 0
	var reads atomic.Int64
	cpu := cpuTime(b)
	for b.Loop() {
		n++
		w, err := New(dir, Options{CacheDir: cache})
		if err != nil {
			b.Fatal(err)
		}
		w.onRead = func(string) { reads.Add(1) }
		if _, err := w.Mark(context.Background()); err != nil {
			b.Fatal(err)
		}
		_ = w.Close()
	}
	b.ReportMetric(float64(cpuTime(b)-cpu)/1e6/float64(n), "cpu-ms/op")
	b.ReportMetric(float64(reads.Load())/float64(n), "reads/op")
}
