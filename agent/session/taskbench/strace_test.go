package taskbench_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"retrace/agent/session/taskbench"
	"retrace/state"
	"retrace/storage"
	"retrace/storage/storebench"
)

// These tests count, with strace, what a task does to files: bytes
// passed to write calls, fsyncs and opens, per file. strace sees the
// system calls themselves, so unlike /proc/self/io it tells files from
// the model's sockets and counts syncs and opens; it runs the task in a
// child (this test binary again) so that it traces nothing else.

const taskChildEnv = "STOREBENCH_TASK_CHILD"

// traced are the calls counted: opens, writes and syncs.
const traced = "openat,open,creat,write,pwrite64,writev,pwritev,fsync,fdatasync"

// fileIO is what one file (or, summed, the task) saw.
type fileIO struct {
	opens, writes, syncs int
	bytes                int64
	// pages counts the bbolt pages written, by the type in their header
	// (a write of several pages is one overflowing page).
	pages map[string]int
}

// TestTaskChild is the traced child: it runs one task and prints nothing
// else. It is skipped unless the parent started it.
func TestTaskChild(t *testing.T) {
	tool, dir := os.Getenv(taskChildEnv), os.Getenv(taskChildEnv+"_DIR")
	if tool == "" {
		t.Skip("run by the strace tests")
	}
	// The marks are opens of files outside dir, which the parent's
	// count starts and stops at.
	mark := func(name string) {
		if err := os.WriteFile(filepath.Join(os.Getenv(taskChildEnv+"_MARKS"), name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A file that already holds a long session, when asked for: the
	// task then writes into a deeper tree, as in a lived-in file.
	db := filepath.Join(dir, "task.db")
	if turns, _ := strconv.Atoi(os.Getenv(taskChildEnv + "_TURNS")); turns > 0 {
		if _, err := storebench.Run(context.Background(), dir, turns, openBolt, storebench.Options{}); err != nil {
			t.Fatal(err)
		}
		db = filepath.Join(dir, storebench.File)
	}
	// Or many sessions, of 2 checkpoints each: the sessions bucket then
	// has branch pages above its leaves.
	if n, _ := strconv.Atoi(os.Getenv(taskChildEnv + "_SESSIONS")); n > 0 {
		st, err := openBolt(db)
		if err != nil {
			t.Fatal(err)
		}
		for range n {
			info, err := st.Create(context.Background(), storage.NewSession{Title: "earlier"})
			if err != nil {
				t.Fatal(err)
			}
			cur := storage.NewCursor(st, state.New(info.ID))
			for i := range 2 {
				ev := state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "question"}}}
				if i%2 == 1 {
					ev = state.Event{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: "answer"}}}
				}
				if _, err := cur.Commit(context.Background(), ev); err != nil {
					t.Fatal(err)
				}
			}
			if err := st.Release(info.ID); err != nil {
				t.Fatal(err)
			}
		}
		st.Close()
	}
	if _, err := taskbench.Run(context.Background(), filepath.Join(dir, "task"), db, tool, openBolt, mark); err != nil {
		t.Fatal(err)
	}
}

// traceTask runs a task under strace and returns what each file under
// dir saw, keyed by its path relative to dir.
func traceTask(t testing.TB, tool string, turns, sessions int) map[string]fileIO {
	t.Helper()
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed")
	}
	dir, marks := t.TempDir(), t.TempDir()
	out := filepath.Join(marks, "trace")
	cmd := exec.Command(strace, "-f", "-y", "-qq", "-xx", "-s", "512", "-e", "trace="+traced, "-e", "signal=none", "-o", out,
		os.Args[0], "-test.run=^TestTaskChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), taskChildEnv+"="+tool, taskChildEnv+"_DIR="+dir, taskChildEnv+"_MARKS="+marks,
		taskChildEnv+"_TURNS="+strconv.Itoa(turns), taskChildEnv+"_SESSIONS="+strconv.Itoa(sessions))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the traced task: %v\n%s", err, b)
	}
	files, err := countTrace(out, dir, filepath.Join(marks, "start"), filepath.Join(marks, "end"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

var (
	callLine = regexp.MustCompile(`^(\w+)\((.*)\)\s+= (-?\d+)`)
	fdPath   = regexp.MustCompile(`^-?\d+<([^>]*)>`)
	openPath = regexp.MustCompile(`^(?:AT_FDCWD(?:<[^>]*>)?|\d+<[^>]*>), "((?:\\x[0-9a-f]{2})*)"`)
)

// countTrace sums the trace's calls on files under dir made between the
// opens of the files start and end. Socket, pipe and terminal
// descriptors are left out; a call strace split in two ("<unfinished
// ...>", "<... resumed>") is joined first.
func countTrace(path, dir, start, end string) (map[string]fileIO, error) {
	counting, ended := false, false
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	files := map[string]fileIO{}
	pending := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		pid, rest, _ := strings.Cut(sc.Text(), " ")
		rest = strings.TrimLeft(rest, " ")
		if strings.HasSuffix(rest, "<unfinished ...>") {
			pending[pid] = strings.TrimSuffix(rest, "<unfinished ...>")
			continue
		}
		if strings.HasPrefix(rest, "<... ") {
			_, tail, ok := strings.Cut(rest, " resumed>")
			if !ok {
				return nil, fmt.Errorf("trace: cannot read %q", rest)
			}
			rest = pending[pid] + tail
			delete(pending, pid)
		}
		m := callLine.FindStringSubmatch(rest)
		if m == nil {
			continue // a failed call (= -1 ENOENT ...) or a line of another shape
		}
		name, args := m[1], m[2]
		ret, _ := strconv.ParseInt(m[3], 10, 64)
		var file string
		if name == "openat" || name == "open" || name == "creat" {
			om := openPath.FindStringSubmatch(args)
			if om == nil {
				continue
			}
			file = unhex(om[1])
			switch file {
			case start:
				counting = true
			case end:
				counting, ended = false, true
			}
		} else if fm := fdPath.FindStringSubmatch(args); fm != nil {
			file = fm[1]
			if strings.HasPrefix(file, `\x`) {
				file = unhex(file)
			}
		}
		rel, err := filepath.Rel(dir, file)
		if !counting || file == "" || err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		io := files[rel]
		switch name {
		case "openat", "open", "creat":
			io.opens++
		case "fsync", "fdatasync":
			io.syncs++
		default:
			io.writes++
			io.bytes += ret
			if name == "pwrite64" && strings.HasSuffix(file, ".db") {
				if io.pages == nil {
					io.pages = map[string]int{}
				}
				io.pages[pageType(args)]++
			}
		}
		files[rel] = io
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !ended {
		return nil, fmt.Errorf("trace %s: the task's end mark is missing", path)
	}
	return files, nil
}

// unhex decodes a string strace -xx printed ("\\x2f\\x74...").
func unhex(s string) string {
	var b strings.Builder
	for i := 0; i+4 <= len(s); i += 4 {
		n, _ := strconv.ParseUint(s[i+2:i+4], 16, 8)
		b.WriteByte(byte(n))
	}
	return b.String()
}

var hexBytes = regexp.MustCompile(`"((?:\\x[0-9a-f]{2})+)"`)

// pageType reads a bbolt page header's flags from the first bytes of a
// write, as strace -xx printed them.
func pageType(args string) string {
	m := hexBytes.FindStringSubmatch(args)
	if m == nil || len(m[1]) < 40 {
		return "unknown"
	}
	b, err := strconv.ParseUint(m[1][34:36]+m[1][38:40], 16, 16) // bytes 8 and 9, little-endian
	if err != nil {
		return "unknown"
	}
	flags := b>>8 | (b&0xff)<<8
	switch flags {
	case 0x01:
		return "branch"
	case 0x02:
		return "leaf"
	case 0x04:
		return "meta"
	case 0x10:
		return "freelist"
	}
	return fmt.Sprintf("flags %#x", flags)
}

func total(files map[string]fileIO) fileIO {
	var sum fileIO
	for _, io := range files {
		sum.opens += io.opens
		sum.writes += io.writes
		sum.syncs += io.syncs
		sum.bytes += io.bytes
	}
	return sum
}

func report(t testing.TB, files map[string]fileIO) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		io := files[n]
		t.Logf("%-40s opens %3d  writes %3d  %8d B  syncs %3d  %v", n, io.opens, io.writes, io.bytes, io.syncs, io.pages)
	}
	sum := total(files)
	t.Logf("%-40s opens %3d  writes %3d  %8d B  syncs %3d", "total", sum.opens, sum.writes, sum.bytes, sum.syncs)
}

// TestTaskWritesAtMost150KB: issue 15's budget for a task with one tool
// call and an answer, counted at the system calls, in a new file and in
// one holding a 1,000-checkpoint session.
func TestTaskWritesAtMost150KB(t *testing.T) {
	for _, c := range []struct {
		tool  string
		turns int
	}{{"read_file", 0}, {"write_file", 0}, {"write_file", 500}} {
		t.Run(fmt.Sprintf("%s/turns=%d", c.tool, c.turns), func(t *testing.T) {
			if c.turns > 0 && testing.Short() {
				t.Skip("builds a 1,000-checkpoint file")
			}
			sum := traceTaskTotal(t, c.tool, c.turns, 0)
			if sum.bytes > 150_000 {
				t.Errorf("the task wrote %d bytes to files; the budget is 150,000", sum.bytes)
			}
		})
	}
}

// BenchmarkTaskInManySessions measures the same task in a file of 300
// sessions, where the sessions bucket has a branch page above its leaves
// and every checkpoint writes it: one 4 KiB page more per checkpoint,
// which takes the task over the 150 KB budget issue 15 sets. A figure,
// not a bound: `go test ./agent/session/taskbench -run '^$' -bench
// TaskInManySessions -benchtime 1x`.
func BenchmarkTaskInManySessions(b *testing.B) {
	for b.Loop() {
		sum := traceTaskTotal(b, "write_file", 0, 300)
		b.ReportMetric(float64(sum.bytes), "B/task")
		b.ReportMetric(float64(sum.syncs), "fsyncs/task")
		b.ReportMetric(float64(sum.opens), "opens/task")
	}
}

// traceTaskTotal traces a task, logs what each file saw and returns the
// sum, failing when the trace counted nothing (a parser that no longer
// reads strace's output would otherwise pass every budget).
func traceTaskTotal(t testing.TB, tool string, turns, sessions int) fileIO {
	t.Helper()
	files := traceTask(t, tool, turns, sessions)
	report(t, files)
	sum := total(files)
	if sum.bytes == 0 || sum.syncs == 0 || sum.opens == 0 {
		t.Fatalf("the trace shows no writes, syncs or opens in files: the count is broken")
	}
	return sum
}
