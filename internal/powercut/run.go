package powercut

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Recording is what strace saw a writer do.
type Recording struct {
	calls  []sysCall
	Stdout string // what the writer printed
}

// writerEnv marks the process Run starts: Writing reports it.
const writerEnv = "RETRACE_POWERCUT_WRITER"

// Writing reports whether this process is a writer Run started: a test
// that is its own writer writes and prints its promises instead of
// testing.
func Writing() bool { return os.Getenv(writerEnv) == "1" }

// Run runs this test binary again with args (say -test.run=^TestX$) and
// env added, under strace, and returns what it did. A writer that fails
// fails the test.
func Run(t testing.TB, args []string, env ...string) *Recording {
	t.Helper()
	strace, err := exec.LookPath("strace")
	if err != nil {
		if os.Getenv("RETRACE_POWERCUT") == "1" {
			t.Fatal("RETRACE_POWERCUT=1 but strace is not installed (apt-get install strace)")
		}
		t.Skip("strace is not installed; .ci/run installs it and runs this test (apt-get install strace)")
	}
	trace := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command(strace, append([]string{"-f", "-y", "-xx", "-s", "16777216", "-e", "trace=" + fileCalls,
		"-e", "signal=none", "-o", trace, os.Args[0]}, args...)...)
	cmd.Env = append(append(os.Environ(), writerEnv+"=1"), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the traced writer: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	calls, err := readTrace(trace)
	if err != nil {
		t.Fatal(err)
	}
	return &Recording{calls: calls, Stdout: stdout.String()}
}

// Seed is the seed of a run's random cut points: RETRACE_CRASH_SEED when
// set, to replay a failure, else the time.
func Seed(t testing.TB) uint64 {
	t.Helper()
	if s := os.Getenv("RETRACE_CRASH_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("RETRACE_CRASH_SEED: %v", err)
		}
		return seed
	}
	return uint64(time.Now().UnixNano())
}

// Cut is the disk as a power cut before call At leaves it.
type Cut struct {
	At int
	d  *disk
}

// File is what the cut leaves at path: nothing unless its name and the
// name of every directory above it made during the trace survive.
func (c *Cut) File(path string) ([]byte, bool) { return c.d.durableFile(path) }

// Replay plays the recording on a model of a disk that loses power. Every
// call on a file under root must be one the model knows (elsewhere, a
// coverage file the test binary writes say, they are no concern of it).
// At each cut point (just after every line the writer printed, at 40
// random calls, and at the end) check gets the disk as the cut leaves it
// and the lines printed before it. Replay returns the number of syncs
// the writer made and of cuts checked.
func (r *Recording) Replay(t testing.TB, root string, seed uint64, check func(c *Cut, lines []string)) (syncs, cuts int) {
	t.Helper()
	d := newDisk(root)
	at := cutPoints(r.calls, seed)
	var lines []string
	for i, c := range r.calls {
		if at[i] {
			check(&Cut{At: i, d: d}, lines)
			cuts++
		}
		if line, ok := d.apply(t, c); ok {
			lines = append(lines, strings.Split(strings.TrimSpace(line), "\n")...)
		}
	}
	check(&Cut{At: len(r.calls), d: d}, lines)
	return d.syncs, cuts + 1
}

// cutPoints chooses where power fails: just after every line the writer
// printed (the moment a promise was made), and at 40 random calls.
func cutPoints(calls []sysCall, seed uint64) map[int]bool {
	cuts := map[int]bool{}
	for i, c := range calls {
		if c.name == "write" && len(c.args) > 0 && isStdout(c.args[0]) && i+1 < len(calls) {
			cuts[i+1] = true
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x706f776572))
	for range 40 {
		cuts[rng.IntN(len(calls))] = true
	}
	return cuts
}
