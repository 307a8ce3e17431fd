package rewind_test

import (
	"context"
	"fmt"
	"testing"

	"retrace/agent/rewind"
)

// BenchmarkRestore100Files is a rollback over a command that changed 100
// files of 4 KiB: each operation restores them all, alternately to before
// and after the command (so every file is written each time), with both
// checkpoints of the restore synced to disk.
func BenchmarkRestore100Files(b *testing.B) {
	ctx := context.Background()
	d := newDisk(b, b.TempDir())
	body := func(i int, v string) string {
		line := fmt.Sprintf("file %d, version %s: the quick brown fox jumps over the lazy dog\n", i, v)
		out := ""
		for len(out)+len(line) <= 4096 {
			out += line
		}
		return out
	}
	for i := range 100 {
		d.write(fmt.Sprintf("f%03d.txt", i), body(i, "old"))
	}
	before := d.cur.State().Version
	after := d.command("c1", func() {
		for i := range 100 {
			d.write(fmt.Sprintf("f%03d.txt", i), body(i, "new"))
		}
	})
	if len(after.Files) != 100 {
		b.Fatalf("%d changes", len(after.Files))
	}
	st, files := d.st, d.files
	tips := [2]int{before, after.Version}
	head := after
	b.ResetTimer()
	for i := range b.N {
		res, err := rewind.Restore(ctx, st, files, head, tips[i%2], rewind.Options{})
		if err != nil || res.Restored != 100 {
			b.Fatalf("restored %d: %v", res.Restored, err)
		}
		head = res.Head
	}
}
