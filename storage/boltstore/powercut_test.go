package boltstore_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// The power-cut test proves that a checkpoint is on disk before Append
// returns, which SIGKILL cannot: the kernel keeps a killed process's
// unsynced writes, and a power cut does not.
//
// A writer process creates a database and commits checkpoints (with
// rollbacks), printing a line for each one as soon as it is acknowledged.
// It runs under strace, which records every call that changes a file's
// bytes, its size or a directory's entries, every fsync and fdatasync, and
// the acknowledgements on stdout, in the order they completed. The test
// then replays that record against a model of a disk that loses power: a
// file keeps only what was written before its last sync, and a name in a
// directory (a file's, or a directory's made with mkdir) exists only if
// the directory was synced after the name was made. At many cut points (just after every acknowledgement, and at
// random) it rebuilds the database file the cut would leave, opens it with
// the store, and checks that every acknowledged checkpoint is there, whole
// and exactly as written.
//
// Why strace: bbolt writes through an *os.File of its own, so there is no
// seam in Go to count or drop its syncs; a layer under the file system
// (FUSE, dm-flakey) needs privileges CI does not have. strace sees the real
// system calls of the real code and changes nothing in it. Turning off
// bbolt's fdatasync (NoSync), the directory sync after the file is
// created, or the sync of a new data directory's parent makes this test
// fail.
//
// It needs strace; .ci/run installs it and sets RETRACE_POWERCUT=1, which
// makes its absence a failure instead of a skip.
func TestPowerCutLosesNoAcknowledgedCheckpoint(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		if os.Getenv("RETRACE_POWERCUT") == "1" {
			t.Fatal("RETRACE_POWERCUT=1 but strace is not installed (apt-get install strace)")
		}
		t.Skip("strace is not installed; .ci/run installs it and runs this test (apt-get install strace)")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("RETRACE_CRASH_SEED"); s != "" {
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("RETRACE_CRASH_SEED: %v", err)
		}
	}
	n := envInt(t, "RETRACE_POWERCUT_N", 60)
	t.Logf("seed %d, %d checkpoints (replay: RETRACE_CRASH_SEED=%d)", seed, n, seed)

	dir := t.TempDir()
	// Two directories to make, as on a first run (~/.local/share/retrace
	// with no share/): each one's name must be synced into its parent.
	db := filepath.Join(dir, "data", "retrace", "retrace.db")
	trace := filepath.Join(dir, "trace")
	cmd := exec.Command(strace, "-f", "-y", "-xx", "-s", "16777216", "-e", "trace="+fileCalls, "-e", "signal=none", "-o", trace,
		os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "RETRACE_TEST_ROLE=powercut-writer", "RETRACE_TEST_DB="+db,
		fmt.Sprintf("RETRACE_CRASH_SEED=%d", seed), fmt.Sprintf("RETRACE_TEST_N=%d", n))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the traced writer: %v\n%s", err, stderr.String())
	}
	calls, err := readTrace(trace)
	if err != nil {
		t.Fatal(err)
	}

	d := newDisk(filepath.Dir(db))
	cuts := cutPoints(calls, seed)
	var acks []string
	checked := 0
	for i, c := range calls {
		if cuts[i] {
			checkCut(t, d, db, dir, acks, seed, i)
			checked++
		}
		if line, ok := d.apply(t, c); ok {
			acks = append(acks, strings.Split(strings.TrimSpace(line), "\n")...)
		}
	}
	checkCut(t, d, db, dir, acks, seed, len(calls))
	if countPrefix(acks, "ack ") != n {
		t.Fatalf("the trace holds %d acknowledgements; the writer made %d:\n%s", countPrefix(acks, "ack "), n, stdout.String())
	}
	t.Logf("seed %d: %d system calls, %d syncs, %d power cuts checked, %d acknowledged checkpoints, none lost",
		seed, len(calls), d.syncs, checked+1, n)
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

// checkCut rebuilds the database a power cut before calls[at] leaves, and
// checks every promise the writer made before then.
func checkCut(t *testing.T, d *disk, db, dir string, acks []string, seed uint64, at int) {
	t.Helper()
	var id string
	for _, a := range acks {
		if rest, ok := strings.CutPrefix(a, "session "); ok {
			id = rest
		}
	}
	image, exists := d.durableFile(db)
	if id == "" {
		return // nothing was promised yet
	}
	if !exists {
		t.Fatalf("seed %d: a power cut before call %d leaves no %s, though session %s was acknowledged", seed, at, filepath.Base(db), id)
	}
	cut := filepath.Join(dir, fmt.Sprintf("cut-%d", at), "retrace.db")
	if err := os.MkdirAll(filepath.Dir(cut), 0o700); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(filepath.Dir(cut))
	if err := os.WriteFile(cut, image, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := boltstore.Open(cut, boltstore.Options{})
	if err != nil {
		t.Fatalf("seed %d: after a power cut before call %d the store does not open: %v", seed, at, err)
	}
	defer st.Close()
	ex, err := st.Export(context.Background(), id)
	if err != nil {
		t.Fatalf("seed %d: after a power cut before call %d, session %s: %v", seed, at, id, err)
	}
	m := newCrashModel(seed, id)
	have := map[int]storage.Record{}
	for _, r := range ex.Checkpoints {
		have[r.Version] = r
	}
	for _, a := range acks {
		var v, p int
		if _, err := fmt.Sscanf(a, "ack %d parent %d", &v, &p); err != nil {
			continue
		}
		m.upTo(t, v)
		r, ok := have[v]
		if !ok {
			t.Fatalf("seed %d: a power cut before call %d lost acknowledged checkpoint v%d (the file keeps %d versions)", seed, at, v, len(ex.Checkpoints))
		}
		raw, err := state.EncodeEvent(r.Data)
		if err != nil {
			t.Fatal(err)
		}
		if r.Parent != m.parent[v] || !bytes.Equal(raw, m.raw[v]) {
			t.Fatalf("seed %d: after a power cut before call %d, v%d is not what was written", seed, at, v)
		}
		for _, d := range m.event[v].BlobDigests() {
			if !bytes.Equal(ex.Blobs[d], m.blobs[d]) {
				t.Fatalf("seed %d: a power cut before call %d lost v%d's content %s", seed, at, v, d)
			}
		}
	}
}

func countPrefix(lines []string, prefix string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// powercutWriter is the traced process (RETRACE_TEST_ROLE=powercut-
// writer): it creates the database and a session, says so, and commits
// RETRACE_TEST_N checkpoints as the crash writer does.
func powercutWriter(path string) error {
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		return err
	}
	info, err := st.Create(context.Background(), storage.NewSession{Title: "power cut"})
	if err != nil {
		return err
	}
	if err := st.Close(); err != nil {
		return err
	}
	if _, err := fmt.Printf("session %s\n", info.ID); err != nil {
		return err
	}
	return crashWriter(path, info.ID)
}

// disk is a model of storage that loses power: each file's bytes as the
// running system sees them and as they were at its last sync, and the
// names in directories as they are and as they were at the directory's
// last sync.
type disk struct {
	files   []*modelFile
	names   map[string]int // path -> file, now
	durable map[string]int // path -> file, after a power cut
	// Directories made during the trace, now and after a power cut; those
	// that were there before it are taken to be on disk.
	dirs, durableDirs map[string]bool
	syncs             int
	// watch is the database's directory: a call the model does not know,
	// there, fails the test; elsewhere (a coverage file the test binary
	// writes, say) it is no concern of the model's.
	watch string
}

type modelFile struct {
	now, synced []byte
}

func newDisk(watch string) *disk {
	return &disk{names: map[string]int{}, durable: map[string]int{}, dirs: map[string]bool{}, durableDirs: map[string]bool{}, watch: watch}
}

// durableFile is what a power cut leaves at path: nothing unless its name
// and the name of every directory above it made during the trace survive.
func (d *disk) durableFile(path string) ([]byte, bool) {
	f, ok := d.durable[path]
	if !ok {
		return nil, false
	}
	for dir := filepath.Dir(path); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if d.dirs[dir] && !d.durableDirs[dir] {
			return nil, false
		}
	}
	return slices.Clone(d.files[f].synced), true
}

// file is the model file a descriptor's path names; a file opened before
// the trace began (none the writer cares about) is made up empty.
func (d *disk) file(path string) *modelFile {
	f, ok := d.names[path]
	if !ok {
		d.files = append(d.files, &modelFile{})
		f = len(d.files) - 1
		d.names[path] = f
	}
	return d.files[f]
}

// apply plays one call on the model. It returns what the writer printed
// when the call was a write to stdout.
func (d *disk) apply(t *testing.T, c sysCall) (string, bool) {
	t.Helper()
	if strings.HasPrefix(c.ret.raw, "-1") || c.ret.raw == "?" {
		return "", false // failed calls change nothing
	}
	arg := func(i int) sysArg {
		if i >= len(c.args) {
			t.Fatalf("trace line %d: %s has %d arguments, want more", c.line, c.name, len(c.args))
		}
		return c.args[i]
	}
	num := func(i int) int64 {
		v, err := arg(i).int()
		if err != nil {
			t.Fatalf("trace line %d: %s argument %d: %v", c.line, c.name, i, err)
		}
		return v
	}
	switch c.name {
	case "openat", "open", "creat":
		flags := ""
		if c.name == "openat" {
			flags = arg(2).raw
		} else if c.name == "open" {
			flags = arg(1).raw
		}
		if c.ret.hasFD && (c.name == "creat" || strings.Contains(flags, "O_CREAT")) {
			d.file(c.ret.path)
		}
		if c.ret.hasFD && (c.name == "creat" || strings.Contains(flags, "O_TRUNC")) {
			d.file(c.ret.path).now = nil
		}
	case "write":
		if fd := arg(0); isStdout(fd) {
			return string(arg(1).str), true
		} else if d.isFile(fd.path) {
			t.Fatalf("trace line %d: write(2) to %s; the model knows only pwrite64 for files", c.line, fd.path)
		}
	case "pwrite64":
		f := d.file(arg(0).path)
		data, off := arg(1).str, num(3)
		wrote, _ := c.ret.int()
		f.now = writeAt(f.now, data[:wrote], off)
	case "writev", "pwritev", "pwritev2", "truncate", "sync_file_range", "msync":
		if d.isFile(arg(0).path) || c.name == "truncate" {
			t.Fatalf("trace line %d: %s on a file; the model does not know it", c.line, c.name)
		}
	case "ftruncate":
		f := d.file(arg(0).path)
		f.now = resize(f.now, num(1))
	case "fallocate":
		f := d.file(arg(0).path)
		if mode := num(1); mode != 0 {
			t.Fatalf("trace line %d: fallocate mode %d; the model knows only 0", c.line, mode)
		}
		if end := num(2) + num(3); end > int64(len(f.now)) {
			f.now = resize(f.now, end)
		}
	case "fsync", "fdatasync":
		d.syncs++
		path := arg(0).path
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			d.syncDir(path)
		} else {
			f := d.file(path)
			f.synced = slices.Clone(f.now)
		}
	case "sync", "syncfs":
		t.Fatalf("trace line %d: %s; the model does not know it", c.line, c.name)
	case "link", "linkat":
		from, to := c.args[0], c.args[1]
		fromDir, toDir := sysArg{}, sysArg{}
		if c.name == "linkat" {
			fromDir, from, toDir, to = c.args[0], c.args[1], c.args[2], c.args[3]
		}
		if f, ok := d.names[resolve(fromDir, from.str)]; ok {
			d.names[resolve(toDir, to.str)] = f
		}
	case "unlink", "unlinkat":
		name, dir := c.args[0], sysArg{}
		if c.name == "unlinkat" {
			dir, name = c.args[0], c.args[1]
		}
		delete(d.names, resolve(dir, name.str))
	case "rename", "renameat", "renameat2":
		from, to, fromDir, toDir := c.args[0], c.args[1], sysArg{}, sysArg{}
		if c.name != "rename" {
			fromDir, from, toDir, to = c.args[0], c.args[1], c.args[2], c.args[3]
		}
		src, dst := resolve(fromDir, from.str), resolve(toDir, to.str)
		if f, ok := d.names[src]; ok {
			d.names[dst] = f
			delete(d.names, src)
		}
	case "mkdir", "mkdirat":
		name, dir := c.args[0], sysArg{}
		if c.name == "mkdirat" {
			dir, name = c.args[0], c.args[1]
		}
		d.dirs[resolve(dir, name.str)] = true
	case "mmap":
		if strings.Contains(arg(2).raw, "PROT_WRITE") && strings.Contains(arg(3).raw, "MAP_SHARED") && d.isFile(arg(4).path) {
			t.Fatalf("trace line %d: a shared writable mapping of %s; the model does not know it", c.line, arg(4).path)
		}
	default:
		t.Fatalf("trace line %d: %s; the model does not know it", c.line, c.name)
	}
	return "", false
}

// isFile reports a path the model must account for: a file in the
// database's directory.
func (d *disk) isFile(path string) bool { return filepath.Dir(path) == d.watch }

// syncDir makes the directory's entries as they are now survive a cut.
func (d *disk) syncDir(dir string) {
	for path := range d.durable {
		if filepath.Dir(path) == dir {
			delete(d.durable, path)
		}
	}
	for path, f := range d.names {
		if filepath.Dir(path) == dir {
			d.durable[path] = f
		}
	}
	for path := range d.dirs {
		if filepath.Dir(path) == dir {
			d.durableDirs[path] = true
		}
	}
}

func writeAt(b, data []byte, off int64) []byte {
	if end := off + int64(len(data)); end > int64(len(b)) {
		b = resize(b, end)
	}
	copy(b[off:], data)
	return b
}

func resize(b []byte, n int64) []byte {
	if n <= int64(len(b)) {
		return b[:n]
	}
	return append(b, make([]byte, n-int64(len(b)))...)
}

// isStdout reports a call's first argument is file descriptor 1.
func isStdout(a sysArg) bool { fd, err := a.int(); return err == nil && fd == 1 }
