package snapshot

import (
	"context"
	"crypto/rand"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkManySmallFiles is a command that makes 100,000 small files (2 MB
// of content) in a workspace of 1,000: Mark and Changes around the
// writes, which are not timed.
// It reports what the content cache holds after, in files and bytes, and
// how many contents the changes keep (the command's budget).
func BenchmarkManySmallFiles(b *testing.B) {
	const n = 100_000
	for b.Loop() {
		b.StopTimer()
		dir, cache := b.TempDir(), b.TempDir()
		for i := range 1000 {
			writeBench(b, filepath.Join(dir, "src", fmt.Sprintf("f%d.go", i)), fmt.Appendf(nil, "package src // %d\n", i))
		}
		w, err := New(dir, Options{CacheDir: cache})
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		if _, err := w.Mark(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		m, err := w.Mark(ctx)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer() // the file system's time, not ours
		for i := range n {
			writeBench(b, filepath.Join(dir, "gen", fmt.Sprintf("d%d", i/1000), fmt.Sprintf("f%d.txt", i)), fmt.Appendf(nil, "file %d\n", i))
		}
		b.StartTimer()
		changes, blobs, err := w.Changes(ctx, m)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if len(changes) != n {
			b.Fatalf("%d changes, want %d", len(changes), n)
		}
		_ = w.Close()
		files, size := dirSize(b, cache)
		b.ReportMetric(float64(files), "cache-files")
		b.ReportMetric(float64(size)/1e6, "cache-MB")
		b.ReportMetric(float64(len(blobs)), "contents-kept")
		b.StartTimer()
	}
}

// BenchmarkFilesUnderTheCap is two commands that each write 24 files of
// random bytes just under the 10 MiB size cap, the second over the
// first's: the process's peak memory over both, and what the content
// cache holds after (with eviction's grace set to nothing, so the figure
// is the bound a scan keeps, not what the last minutes wrote).
func BenchmarkFilesUnderTheCap(b *testing.B) {
	old := evictGrace
	evictGrace = 0
	defer func() { evictGrace = old }()
	const files, size = 24, DefaultMaxFileSize - 1<<10
	body := make([]byte, size)
	for b.Loop() {
		b.StopTimer()
		dir, cache := b.TempDir(), b.TempDir()
		w, err := New(dir, Options{CacheDir: cache, CacheBytes: 64 << 20})
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		runtime.GC()
		resetPeak(b)
		b.StartTimer()
		for range 2 {
			m, err := w.Mark(ctx)
			if err != nil {
				b.Fatal(err)
			}
			for i := range files {
				_, _ = rand.Read(body)
				writeBench(b, filepath.Join(dir, fmt.Sprintf("big%02d.bin", i)), body)
			}
			if _, _, err := w.Changes(ctx, m); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(peakKiB(b))/1024, "peak-MiB")
		_ = w.Close()
		_, csize := dirSize(b, cache)
		b.ReportMetric(float64(csize)/(1<<20), "cache-MiB")
		b.StartTimer()
	}
}

func writeBench(b *testing.B, path string, data []byte) {
	if err := os.WriteFile(path, data, 0o644); err != nil {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

func dirSize(b *testing.B, dir string) (files int, size int64) {
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			files++
			size += info.Size()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return files, size
}

// resetPeak starts the process's peak resident memory afresh (Linux).
func resetPeak(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Skipf("cannot reset the peak memory: %v", err)
	}
}

// peakKiB is the process's peak resident memory since resetPeak, in KiB.
func peakKiB(b *testing.B) int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}
