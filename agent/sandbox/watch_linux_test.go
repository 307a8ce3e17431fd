package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"retrace/agent/fileid"
)

// startIn starts shell in dir under mode, with its output thrown away.
func startIn(t *testing.T, mode Mode, dir, shell string) *Process {
	t.Helper()
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	p, err := Start(Command{Mode: mode, Dir: dir, Shell: shell, Output: devnull})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// realDir is a temp dir with its symlinks resolved, as the launcher names
// paths.
func realDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// release lets a command waiting at the FIFO go on: it opens the FIFO for
// writing, which waits for the command to open it for reading, and closes
// it. A command that ends without opening it fails the test, rather than
// leaving the open waiting.
func release(t *testing.T, p *Process, fifo string) {
	t.Helper()
	opened := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			f.Close()
		}
		opened <- err
	}()
	select {
	case err := <-opened:
		if err != nil {
			t.Fatal(err)
		}
	case <-p.Done():
		// Free the open, then say what went wrong.
		if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			<-opened
			f.Close()
		}
		t.Fatalf("the command ended (%+v) before it reached %s", p.Exit(), fifo)
	}
}

// The launcher sees every path the command's processes write, in every
// mode, and what they do there, and none that someone else writes while
// it runs: here the test itself, writing mine.txt while the command waits
// on a FIFO. A file already there that the command writes in place is
// reported as the file it was before: which one, and what it was like.
func TestWritesAreTheCommandsOwn(t *testing.T) {
	for _, mode := range []Mode{Workspace, Off} {
		ws := realDir(t)
		for _, f := range []string{"old.txt", "gone.txt", "mode.txt", "mine.txt", "read.txt", "log.txt"} {
			if err := os.WriteFile(filepath.Join(ws, f), []byte(f), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		before := map[string]fileid.File{}
		for _, f := range []string{"mode.txt", "log.txt"} {
			before[filepath.Join(ws, f)] = identify(t, filepath.Join(ws, f))
		}
		sync := filepath.Join(ws, "sync")
		if err := syscall.Mkfifo(sync, 0o600); err != nil {
			t.Fatal(err)
		}
		// The command waits for the test at the FIFO (its read-only open
		// of it is no write), then writes, renames, removes, creates a
		// directory and a file in it, changes a mode, reads one, appends
		// to one, and truncates one that is not there (without creating it).
		p := startIn(t, mode, ws, `cat `+sync+` >/dev/null
echo new > new.txt && mv old.txt moved.txt && rm gone.txt && mkdir -p sub/deep &&
echo x > sub/deep/f && chmod 600 mode.txt && cat read.txt >/dev/null && (cd sub && echo y >> rel.txt) &&
echo more >> log.txt && truncate -c -s 0 none.txt`)
		if err := os.WriteFile(filepath.Join(ws, "mine.txt"), []byte("saved by the user"), 0o644); err != nil {
			t.Fatal(err)
		}
		release(t, p, sync)
		if e := p.Exit(); e != (Exit{}) {
			t.Fatalf("%v: the command ended %+v", mode, e)
		}
		w := p.Writes()
		if !w.Watched {
			t.Fatalf("%v: not watched: %s", mode, w.Why)
		}
		abs := func(names ...string) []string {
			var out []string
			for _, n := range names {
				out = append(out, filepath.Join(ws, n))
			}
			slices.Sort(out)
			return out
		}
		for _, set := range []struct {
			what      string
			got, want []string
		}{
			{"made", w.Made, abs("new.txt", "sub", "sub/deep", "sub/deep/f", "sub/rel.txt")},
			{"removed", w.Removed, abs("gone.txt")},
			{"renamed", w.Trees, abs("moved.txt", "old.txt")},
		} {
			if slices.Sort(set.got); !slices.Equal(set.got, set.want) {
				t.Errorf("%v: %s %q\nwant %q", mode, set.what, set.got, set.want)
			}
		}
		if len(w.Opened) != len(before) {
			t.Errorf("%v: opened %v, want %v", mode, w.Opened, before)
		}
		for p, f := range before {
			if got := w.Opened[p]; len(got) != 1 || !f.Unchanged(got[0]) {
				t.Errorf("%v: opened %s as %+v, want %+v", mode, p, got, f)
			}
		}
	}
}

// The attack on the watch: a command opens f.txt and h.txt for writing
// and writes neither, and meanwhile the user appends to f.txt and saves
// h.txt as editors do, a temporary file renamed over it. The launcher
// reports the files the command opened as they were: h.txt's is not the
// file there now, which tells the user's save from the command's write;
// f.txt's is, and nothing can tell whose its new line is. A file the
// command itself renames over a path it opened is its own: the rename
// says so.
func TestWritesTellAFileReplacedMeanwhile(t *testing.T) {
	ws := realDir(t)
	for _, f := range []string{"f.txt", "h.txt", "own.txt"} {
		if err := os.WriteFile(filepath.Join(ws, f), []byte(f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, h := filepath.Join(ws, "f.txt"), filepath.Join(ws, "h.txt")
	fBefore, hBefore := identify(t, f), identify(t, h)
	opened, sync := filepath.Join(ws, "opened"), filepath.Join(ws, "sync")
	for _, fifo := range []string{opened, sync} {
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p := startIn(t, Workspace, ws, `exec 3>>f.txt 4<>h.txt 5<>own.txt; cat opened >/dev/null; cat sync >/dev/null
echo mine > own.tmp && mv own.tmp own.txt`)
	// Once the command reads the first FIFO it has opened the files.
	release(t, p, opened)
	tmp := filepath.Join(ws, ".h.txt.swp")
	if err := os.WriteFile(tmp, []byte("saved by the user\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, h); err != nil {
		t.Fatal(err)
	}
	a, err := os.OpenFile(f, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.WriteString("added by the user\n"); err != nil {
		t.Fatal(err)
	}
	a.Close()
	release(t, p, sync)
	if e := p.Exit(); e != (Exit{}) {
		t.Fatalf("the command ended %+v", e)
	}
	w := p.Writes()
	if !w.Watched {
		t.Fatalf("not watched: %s", w.Why)
	}
	if got := w.Opened[h]; len(got) != 1 || !hBefore.Unchanged(got[0]) || got[0].Same(identify(t, h)) {
		t.Errorf("h.txt opened as %+v; want the file before the user's save, %+v, not the one there now", got, hBefore)
	}
	if got := w.Opened[f]; len(got) != 1 || !fBefore.Unchanged(got[0]) || !got[0].Same(identify(t, f)) {
		t.Errorf("f.txt opened as %+v; want %+v, the file there now", got, fBefore)
	}
	own := filepath.Join(ws, "own.txt")
	if !slices.Contains(w.Trees, own) || len(w.Opened[own]) != 1 {
		t.Errorf("own.txt: renamed %q, opened %+v; want both", w.Trees, w.Opened[own])
	}
}

// identify is which file is at path now.
func identify(t *testing.T, path string) fileid.File {
	t.Helper()
	f, err := fileid.Lstat(path)
	if errors.Is(err, fileid.ErrNoIdentity) {
		t.Skipf("the temp dir's file system: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// uringEnv, set, makes the test binary try io_uring_setup and print the
// errno it got: it is the command of TestWatchedCommandHasNoIOUring.
const uringEnv = "RETRACE_SANDBOX_TEST_URING"

func TestHelperURing(t *testing.T) {
	if os.Getenv(uringEnv) == "" {
		t.Skip("a helper process for TestWatchedCommandHasNoIOUring")
	}
	var params [120]byte // struct io_uring_params
	_, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0)
	fmt.Printf("errno %d\n", int(errno))
}

// io_uring, which would write files without a system call per file, is
// not there for a watched command: io_uring_setup fails with ENOSYS. (The
// command is this test binary, which only mode off may run.)
func TestWatchedCommandHasNoIOUring(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	p, err := Start(Command{Mode: Off, Dir: realDir(t), Output: pw,
		Shell: uringEnv + "=1 exec '" + os.Args[0] + "' -test.run='^TestHelperURing$'"})
	pw.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	out, _ := io.ReadAll(pr)
	if e := p.Exit(); e != (Exit{}) || !strings.Contains(string(out), fmt.Sprintf("errno %d\n", int(unix.ENOSYS))) {
		t.Fatalf("io_uring_setup under the watch: %q, %+v; want ENOSYS", out, e)
	}
	if !p.Writes().Watched {
		t.Fatalf("not watched: %s", p.Writes().Why)
	}
}

// A workspace reached through a symlink, and paths named through one,
// are reported by their real names, as the watcher of the workspace
// names them.
func TestWritesAreNamedByRealPaths(t *testing.T) {
	real := realDir(t)
	if err := os.Mkdir(filepath.Join(real, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "ws")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("dir", filepath.Join(real, "alias")); err != nil {
		t.Fatal(err)
	}
	p := startIn(t, Workspace, link, `echo a > "$PWD/abs.txt" && echo b > alias/b.txt && echo c > rel.txt`)
	if e := p.Exit(); e != (Exit{}) {
		t.Fatalf("the command ended %+v", e)
	}
	w := p.Writes()
	slices.Sort(w.Made)
	want := []string{filepath.Join(real, "abs.txt"), filepath.Join(real, "dir", "b.txt"), filepath.Join(real, "rel.txt")}
	if !w.Watched || !slices.Equal(w.Made, want) {
		t.Fatalf("made %q (watched %v %s), want %q", w.Made, w.Watched, w.Why, want)
	}
}

// The launcher's report reads back as the writes it lists, only when it
// ends with "watched"; one cut short, saying "unwatched", or with a line
// it cannot read says why.
func TestCollectReadsTheReport(t *testing.T) {
	h := fileid.File{Dev: 2049, Ino: 77, Birth: 1700000000123456789, Size: 12, Mode: 0o100644, Mtime: 1700000001000000000, Ctime: 1700000002000000000}
	for _, tc := range []struct {
		said string
		want Writes
	}{
		{"made \"/ws/a\"\nremoved \"/ws/b\"\ntree \"/ws/d\\nir\"\nopened \"/ws/h 1\" 2049 77 1700000000123456789 12 33188 1700000001000000000 1700000002000000000\nwatched\nexit 0\n",
			Writes{Watched: true, Made: []string{"/ws/a"}, Removed: []string{"/ws/b"}, Trees: []string{"/ws/d\nir"}, Opened: map[string][]fileid.File{"/ws/h 1": {h}}}},
		{"watched\nexit 1\n", Writes{Watched: true}},
		{"unwatched seccomp: operation not permitted\nexit 0\n", Writes{Why: "seccomp: operation not permitted"}},
		{"made \"/ws/a\"\n", Writes{Why: "the launcher ended before it said what the command wrote"}},
		{"made /ws/unquoted\nwatched\nexit 0\n", Writes{Why: `the launcher said "made /ws/unquoted"`}},
		{"opened \"/ws/h\" 2049 77\nwatched\nexit 0\n", Writes{Why: `the launcher said "opened \"/ws/h\" 2049 77"`}},
		{"wrote \"/ws/a\"\nwatched\nexit 0\n", Writes{Why: `the launcher said "wrote \"/ws/a\""`}},
	} {
		p := said(t, tc.said)
		p.collect()
		if got := p.writes; got.Watched != tc.want.Watched || got.Why != tc.want.Why || !slices.Equal(got.Made, tc.want.Made) ||
			!slices.Equal(got.Removed, tc.want.Removed) || !slices.Equal(got.Trees, tc.want.Trees) || !reflect.DeepEqual(got.Opened, tc.want.Opened) {
			t.Errorf("%q: %+v, want %+v", tc.said, got, tc.want)
		}
	}
}
