package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
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
)

// BenchmarkImportLarge imports, in a process of its own, an export of
// about 400 MB: nine file contents of 32 MiB (random bytes, which nothing
// compresses) written by one task each. It reports that process's peak
// resident memory against the largest content, and the same for an
// export of one small content (the process's floor). RETRACE_BENCH_BIN
// names another retrace binary to measure (an older build, for the
// figures before a change). With RETRACE_PG_URL set, it measures the
// same import into that PostgreSQL database too (pg-peak-MiB).
func BenchmarkImportLarge(b *testing.B) {
	dir := b.TempDir()
	const n, size = 9, 32 << 20
	big := filepath.Join(dir, "big.json")
	writeBenchExport(b, big, n, size)
	small := filepath.Join(dir, "small.json")
	writeBenchExport(b, small, 1, 1<<10)
	info, err := os.Stat(big)
	if err != nil {
		b.Fatal(err)
	}
	exe := os.Getenv("RETRACE_BENCH_BIN")
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			b.Fatal(err)
		}
	}
	pg := os.Getenv("RETRACE_PG_URL")
	for b.Loop() {
		floor := importPeak(b, exe, small, "")
		peak := importPeak(b, exe, big, "")
		b.ReportMetric(float64(info.Size())/1e6, "export-MB")
		b.ReportMetric(float64(peak)/1024, "peak-MiB")
		b.ReportMetric(float64(floor)/1024, "floor-MiB")
		b.ReportMetric(float64(peak)*1024/size, "peak/largest")
		if pg != "" {
			peak := importPeak(b, exe, big, pg)
			b.ReportMetric(float64(peak)/1024, "pg-peak-MiB")
			b.ReportMetric(float64(peak)*1024/size, "pg-peak/largest")
		}
	}
}

// importPeak imports file in a child process, into a new database file,
// or into the database db names (under a fresh id), and returns the
// child's peak resident memory in KiB.
func importPeak(b *testing.B, exe, file, db string) int64 {
	b.Helper()
	dir := b.TempDir()
	peak := filepath.Join(dir, "peak")
	args := []string{"import", file, "--workspace", dir, "--db", filepath.Join(dir, "retrace.db")}
	if db != "" {
		args = append(args[:len(args)-1], db, "--new-id")
	}
	cmd := testCommand(b, exe, args...)
	cmd.Env = append(os.Environ(), benchChildEnv+"=cli", benchChildPeak+"="+peak, "XDG_CONFIG_HOME="+dir, "TMPDIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("import %s: %v\n%s", file, err, out)
	}
	if db != "" {
		// The copy goes again: a shared database keeps nothing of a benchmark.
		id, _, _ := strings.Cut(strings.TrimPrefix(string(out), "imported session "), " ")
		rm := testCommand(b, exe, "rm", id, "--db", db)
		rm.Env = append(os.Environ(), benchChildEnv+"=cli", "XDG_CONFIG_HOME="+dir)
		if out, err := rm.CombinedOutput(); err != nil {
			b.Fatalf("remove the imported copy %s: %v\n%s", id, err, out)
		}
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

// writeBenchExport writes an export of n tasks, each writing one file of
// size random bytes, without holding the contents in memory: each is
// made twice from its seed, once for its digest and once as it is
// written out.
func writeBenchExport(b testing.TB, file string, n, size int) {
	b.Helper()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ex := storage.Exported{Format: storage.ExportFormat, Export: storage.Export{Session: storage.SessionInfo{
		ID: "import-bench", Title: "import bench", Model: "gpt-test", Workspace: "/src/app", CreatedAt: at, UpdatedAt: at}}}
	bld := state.NewBuilder(state.New(ex.Session.ID))
	digests := make([]string, n)
	for i := range n {
		digests[i] = benchDigest(i, size)
		call := fmt.Sprintf("call_%d", i)
		change := state.FileChange{Path: fmt.Sprintf("data%d.bin", i), Before: state.FileImage{Absent: true},
			After: state.FileImage{Blob: digests[i], Size: int64(size), Mode: 0o644}}
		for _, ev := range []state.Event{
			{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "write the data"}}},
			{Kind: state.PlanSet, Plan: []state.Step{{Text: "write the data"}}},
			{Kind: state.AssistantMessage, Messages: []state.Message{{Role: state.RoleAssistant,
				ToolCalls: []state.ToolRequest{{ID: call, Name: "write_file", Arguments: `{"path":"` + change.Path + `"}`}}}}},
			{Kind: state.ToolStarted, Tool: &state.ToolCall{ID: call}},
			{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: call, Result: "written"}, Files: []state.FileChange{change}},
			{Kind: state.ToolsDone},
			{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: "Written."}}},
		} {
			at = at.Add(time.Second)
			ev.At = at
			ev, err := state.Canonical(ev)
			if err != nil {
				b.Fatal(err)
			}
			if err := bld.Apply(ev); err != nil {
				b.Fatalf("%s: %v", ev.Kind, err)
			}
			v := len(ex.Checkpoints) + 1
			ex.Checkpoints = append(ex.Checkpoints, storage.Record{
				Checkpoint: storage.Checkpoint{Version: v, Parent: v - 1, Event: ev.Kind, Phase: bld.Phase(), At: at}, Data: ev})
		}
	}
	s := &ex.Session
	s.Versions, s.Head, s.Phase, s.UpdatedAt = len(ex.Checkpoints), len(ex.Checkpoints), bld.Phase(), at
	head, err := json.Marshal(ex)
	if err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	w.Write(bytes.TrimSuffix(head, []byte("}")))
	w.WriteString(`,"blobs":{`)
	for i, d := range digests {
		if i > 0 {
			w.WriteString(",")
		}
		fmt.Fprintf(w, "%q:\"", d)
		enc := base64.NewEncoder(base64.StdEncoding, w)
		benchContent(i, size, func(p []byte) { enc.Write(p) })
		enc.Close()
		w.WriteString(`"`)
	}
	w.WriteString("}}")
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
}

// benchContent makes content i of size random bytes, a chunk at a time.
func benchContent(i, size int, chunk func([]byte)) {
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[:], uint64(i))
	rng := rand.NewChaCha8(seed)
	buf := make([]byte, 1<<20)
	for left := size; left > 0; left -= len(buf) {
		p := buf[:min(len(buf), left)]
		_, _ = rng.Read(p)
		chunk(p)
	}
}

func benchDigest(i, size int) string {
	h := sha256.New()
	benchContent(i, size, func(p []byte) { h.Write(p) })
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
