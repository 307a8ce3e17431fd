package sandbox

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
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
// mode, and none that someone else writes while it runs: here the test
// itself, writing mine.txt while the command waits on a FIFO.
func TestWritesAreTheCommandsOwn(t *testing.T) {
	for _, mode := range []Mode{Workspace, Off} {
		ws := realDir(t)
		for _, f := range []string{"old.txt", "gone.txt", "mode.txt", "mine.txt", "read.txt"} {
			if err := os.WriteFile(filepath.Join(ws, f), []byte(f), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		sync := filepath.Join(ws, "sync")
		if err := syscall.Mkfifo(sync, 0o600); err != nil {
			t.Fatal(err)
		}
		// The command waits for the test at the FIFO (its read-only open
		// of it is no write), then writes, renames, removes, creates a
		// directory and a file in it, changes a mode, and reads one.
		p := startIn(t, mode, ws, `cat `+sync+` >/dev/null
echo new > new.txt && mv old.txt moved.txt && rm gone.txt && mkdir -p sub/deep &&
echo x > sub/deep/f && chmod 600 mode.txt && cat read.txt >/dev/null && (cd sub && echo y >> rel.txt)`)
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
		slices.Sort(w.Paths)
		slices.Sort(w.Trees)
		if want := abs("gone.txt", "mode.txt", "new.txt", "sub", "sub/deep", "sub/deep/f", "sub/rel.txt"); !slices.Equal(w.Paths, want) {
			t.Errorf("%v: wrote %q\nwant %q", mode, w.Paths, want)
		}
		if want := abs("moved.txt", "old.txt"); !slices.Equal(w.Trees, want) {
			t.Errorf("%v: renamed %q, want %q", mode, w.Trees, want)
		}
	}
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
	slices.Sort(w.Paths)
	want := []string{filepath.Join(real, "abs.txt"), filepath.Join(real, "dir", "b.txt"), filepath.Join(real, "rel.txt")}
	if !w.Watched || !slices.Equal(w.Paths, want) {
		t.Fatalf("wrote %q (watched %v %s), want %q", w.Paths, w.Watched, w.Why, want)
	}
}

// The launcher's report reads back as the writes it lists, only when it
// ends with "watched"; one cut short or saying "unwatched" says why.
func TestCollectReadsTheReport(t *testing.T) {
	for _, tc := range []struct {
		said string
		want Writes
	}{
		{"wrote \"/ws/a\"\ntree \"/ws/d\\nir\"\nwatched\nexit 0\n", Writes{Watched: true, Paths: []string{"/ws/a"}, Trees: []string{"/ws/d\nir"}}},
		{"watched\nexit 1\n", Writes{Watched: true}},
		{"unwatched seccomp: operation not permitted\nexit 0\n", Writes{Why: "seccomp: operation not permitted"}},
		{"wrote \"/ws/a\"\n", Writes{Why: "the launcher ended before it said what the command wrote"}},
		{"wrote /ws/unquoted\nwatched\nexit 0\n", Writes{Why: `the launcher said "wrote /ws/unquoted"`, Paths: nil}},
	} {
		p := said(t, tc.said)
		p.collect()
		if got := p.writes; got.Watched != tc.want.Watched || got.Why != tc.want.Why ||
			!slices.Equal(got.Paths, tc.want.Paths) || !slices.Equal(got.Trees, tc.want.Trees) {
			t.Errorf("%q: %+v, want %+v", tc.said, got, tc.want)
		}
	}
}
