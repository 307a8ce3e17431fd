package boltstore

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"retrace/state"
	"retrace/storage"
	"retrace/storage/storebench"
)

// BenchmarkAppend appends chat checkpoints to a session that already holds
// 100 or 10,000 messages. A checkpoint writes the delta, so what it costs
// must not depend on how long the session is. Reported per checkpoint:
//
//	record-B/op  the bytes of the record retrace asks to store (the delta)
//	write-B/op   the bytes that reached the file (bbolt writes whole 4 KiB
//	             pages: the leaf, the branch pages above it, the meta page)
//	grow-B/op    how much the file grew
func BenchmarkAppend(b *testing.B) {
	for _, messages := range []int{100, 10_000} {
		b.Run(fmt.Sprintf("messages=%d", messages), func(b *testing.B) {
			ctx := context.Background()
			path := filepath.Join(b.TempDir(), "retrace.db")
			st, err := Open(path, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			info, err := st.Create(ctx, storage.NewSession{Title: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			cur := storage.NewCursor(st, state.New(info.ID))
			s := cur.State()
			next := func() state.Event {
				if s.Phase == state.Planning {
					return state.Event{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: storebench.Text(rng, 300)}}}
				}
				return state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: storebench.Text(rng, 300)}}}
			}
			for len(s.History) < messages {
				if s, err = cur.Commit(ctx, next()); err != nil {
					b.Fatal(err)
				}
			}
			size0, written0 := fileSize(b, path), bytesWritten(b)
			var record int64
			n := 0
			b.ResetTimer()
			for b.Loop() {
				ev := next()
				ev.At = time.Now()
				canon, err := state.Canonical(ev)
				if err != nil {
					b.Fatal(err)
				}
				if s, err = cur.Commit(ctx, canon); err != nil {
					b.Fatal(err)
				}
				rec, err := encodeCheckpoint(s.ParentVersion, s.Phase, canon)
				if err != nil {
					b.Fatal(err)
				}
				record += int64(len(rec))
				n++
			}
			b.StopTimer()
			b.ReportMetric(float64(record)/float64(n), "record-B/op")
			b.ReportMetric(float64(bytesWritten(b)-written0)/float64(n), "write-B/op")
			b.ReportMetric(float64(fileSize(b, path)-size0)/float64(n), "grow-B/op")
		})
	}
}

// BenchmarkAppendFile measures a tool_finished checkpoint carrying one
// changed 4 KiB text file (its new content a blob, compressed and kept in
// the checkpoint's transaction) against the same checkpoint changing no
// file. Only the tool_finished is timed and counted; the assistant
// message and tool_started before it are set up with the timer stopped.
// Reported per checkpoint as in BenchmarkAppend; record-B/op includes
// the blob's record.
func BenchmarkAppendFile(b *testing.B) {
	for _, size := range []int{0, 4096} {
		name := "file=none"
		if size > 0 {
			name = fmt.Sprintf("file=%dB", size)
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			path := filepath.Join(b.TempDir(), "retrace.db")
			st, err := Open(path, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			info, err := st.Create(ctx, storage.NewSession{Title: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 3))
			cur := storage.NewCursor(st, state.New(info.ID))
			commit := func(ev state.Event) {
				ev.At = time.Now()
				if _, err := cur.Commit(ctx, ev); err != nil {
					b.Fatal(err)
				}
			}
			commit(state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "edit main.go"}}})
			commit(state.Event{Kind: state.PlanSet, Plan: []state.Step{{Text: "edit"}}})
			before := state.FileImage{Absent: true}
			var record, written int64
			size0 := fileSize(b, path)
			n := 0
			for b.Loop() {
				b.StopTimer()
				call := fmt.Sprintf("call_%d", n)
				for _, ev := range FileChangeEvents(state.Executing, call, state.FileChange{Path: "main.go"})[:2] {
					commit(ev)
				}
				ev := state.Event{Kind: state.ToolFinished, At: time.Now(), Tool: &state.ToolCall{ID: call, Result: "written"}}
				var rec []byte
				if size > 0 {
					data := []byte(storebench.Text(rng, size))
					after := state.FileImage{Blob: storage.Digest(data), Size: int64(size), Mode: 0o644}
					ev.Files = []state.FileChange{{Path: "main.go", Before: before, After: after}}
					ev.Blobs = []state.Blob{{Digest: after.Blob, Data: data}}
					rec = encodeBlob(data)
					before = after
				}
				w0 := bytesWritten(b)
				b.StartTimer()
				s, err := cur.Commit(ctx, ev)
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				written += bytesWritten(b) - w0
				ev.Blobs = nil
				cp, err := encodeCheckpoint(s.ParentVersion, s.Phase, ev)
				if err != nil {
					b.Fatal(err)
				}
				record += int64(len(cp) + len(rec))
				n++
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(float64(record)/float64(n), "record-B/op")
			b.ReportMetric(float64(written)/float64(n), "write-B/op")
			// The file grows with the setup checkpoints too; per
			// tool_finished it is an upper bound.
			b.ReportMetric(float64(fileSize(b, path)-size0)/float64(n), "grow-B/op")
		})
	}
}

// BenchmarkBlobCodec is the CPU cost of a 4 KiB text content alone:
// sealing (compression and CRC) on the way in, and on the way out
// unsealing, decompressing and hashing it against its digest.
func BenchmarkBlobCodec(b *testing.B) {
	data := []byte(storebench.Text(rand.New(rand.NewPCG(1, 4)), 4096))
	digest := storage.Digest(data)
	rec := encodeBlob(data)
	s := &Store{path: "bench.db"}
	b.Run("encode", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			encodeBlob(data)
		}
		b.ReportMetric(float64(len(rec)), "record-B")
	})
	b.Run("read", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := s.readBlob(contents{}, digest, rec); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func fileSize(b *testing.B, path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}

// bytesWritten is this process's write(2)/pwrite(2) byte count so far.
func bytesWritten(b *testing.B) int64 {
	f, err := os.Open("/proc/self/io")
	if err != nil {
		b.Fatalf("bytes written are read from /proc/self/io (Linux): %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "wchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	b.Fatal("no wchar in /proc/self/io")
	return 0
}
