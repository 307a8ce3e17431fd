package rewind_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"retrace/agent/rewind"
	"retrace/agent/snapshot"
	"retrace/agent/snapshot/snapshottest"
	"retrace/storage/boltstore"
)

// The test binary doubles as the process a restore is killed in: run
// with RETRACE_TEST_RESTORE set, it restores and SIGKILLs itself at the
// named point.
func TestMain(m *testing.M) {
	if point := os.Getenv("RETRACE_TEST_RESTORE"); point != "" {
		if err := restoreAndDie(point); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// restoreAndDie restores the session to RETRACE_TEST_VERSION and kills
// itself at point: "started", "file:N" (after N files) or "closing".
func restoreAndDie(point string) error {
	ctx := context.Background()
	st, err := boltstore.Open(os.Getenv("RETRACE_TEST_DB"), boltstore.Options{})
	if err != nil {
		return err
	}
	id := os.Getenv("RETRACE_TEST_SESSION")
	if err := st.Claim(ctx, id); err != nil {
		return err
	}
	head, err := st.Head(ctx, id)
	if err != nil {
		return err
	}
	files, err := snapshot.New(os.Getenv("RETRACE_TEST_WORKSPACE"), snapshot.Options{CacheDir: os.Getenv("RETRACE_TEST_CACHE")})
	if err != nil {
		return err
	}
	v, _ := strconv.Atoi(os.Getenv("RETRACE_TEST_VERSION"))
	die := func(p rewind.Point, done int) {
		name := string(p)
		if p == rewind.PointFile {
			name = fmt.Sprintf("file:%d", done)
		}
		if name == point {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
	}
	_, err = rewind.Restore(ctx, st, files, head, v, rewind.Options{Hook: die})
	if err != nil {
		return err
	}
	return fmt.Errorf("the restore ended without reaching %s", point)
}

// A restore killed at each named point (before the first file, after
// some, before the closing event) leaves every file at the old or the
// new version's bytes, never a mix inside one; opening the session again
// finishes the restore, and the session says what happened.
func TestKilledRestoreIsFinishedOnResume(t *testing.T) {
	for _, point := range []string{"started", "file:1", "file:3", "closing"} {
		t.Run(point, func(t *testing.T) {
			ctx := context.Background()
			d := newDisk(t, t.TempDir())
			for i := range 4 {
				d.write(fmt.Sprintf("f%d.txt", i), strings.Repeat(fmt.Sprintf("old %d\n", i), 1000))
			}
			ws, cache, db, id := d.ws, d.cache, d.db, d.id
			target := d.cur.State().Version
			old := snapshottest.Hashes(t, ws)
			if after := d.command("c1", func() {
				for i := range 4 {
					d.write(fmt.Sprintf("f%d.txt", i), strings.Repeat(fmt.Sprintf("new %d\n", i), 1000))
				}
			}); len(after.Files) != 4 {
				t.Fatalf("the command's changes: %v", after.Files)
			}
			newer := snapshottest.Hashes(t, ws)
			if err := d.st.Close(); err != nil {
				t.Fatal(err)
			}

			child := exec.Command(os.Args[0], "-test.run", "^$")
			child.Env = append(os.Environ(), "RETRACE_TEST_RESTORE="+point, "RETRACE_TEST_DB="+db, "RETRACE_TEST_SESSION="+id,
				"RETRACE_TEST_WORKSPACE="+ws, "RETRACE_TEST_CACHE="+cache, fmt.Sprintf("RETRACE_TEST_VERSION=%d", target))
			out, err := child.CombinedOutput()
			if ws, ok := err.(*exec.ExitError); !ok || ws.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("the child did not die at %s: %v\n%s", point, err, out)
			}

			mixed := snapshottest.Hashes(t, ws)
			restored := 0
			for p, sum := range mixed {
				switch sum {
				case old[p]:
					restored++
				case newer[p]:
				default:
					t.Fatalf("after a kill at %s, %s is neither version's bytes", point, p)
				}
			}
			if len(mixed) != 4 {
				t.Fatalf("after a kill at %s the workspace has %d files", point, len(mixed))
			}
			if n, _ := strconv.Atoi(strings.TrimPrefix(point, "file:")); strings.HasPrefix(point, "file:") && restored != n {
				t.Fatalf("killed after %d files, but %d are restored", n, restored)
			}

			st, err := boltstore.Open(db, boltstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			head, err := st.Head(ctx, id)
			if err != nil || head.Restoring == nil || head.ParentVersion != target {
				t.Fatalf("after a kill at %s the head is no open restore on v%d: %+v, %v", point, target, head, err)
			}
			files, err := snapshot.New(ws, snapshot.Options{CacheDir: cache})
			if err != nil {
				t.Fatal(err)
			}
			res, err := rewind.Finish(ctx, st, files, head)
			if err != nil {
				t.Fatal(err)
			}
			if got := snapshottest.Hashes(t, ws); !maps.Equal(got, old) {
				t.Fatalf("after finishing, the workspace is not v%d's", target)
			}
			want := fmt.Sprintf("interrupted, then finished: restored %d files to v%d", 4-restored, target)
			if 4-restored == 1 {
				want = fmt.Sprintf("interrupted, then finished: restored 1 file to v%d", target)
			}
			if !strings.HasPrefix(res.Text, want) || res.Head.Restoring != nil || res.Already != restored {
				t.Fatalf("the session says %q (already %d), want it to start %q", res.Text, res.Already, want)
			}
		})
	}
}

// A command that swapped a file for a directory and a directory for a
// file is undone and redone by restores, both ways, with no directory
// left behind and nothing taken for a change made outside retrace.
func TestRestoreAcrossFileAndDirectorySwaps(t *testing.T) {
	ctx := context.Background()
	d := newDisk(t, t.TempDir())
	d.write("a.txt", "a file\n")
	d.write("d/e/f/deep.txt", "deep\n")
	ws, st, files := d.ws, d.st, d.files
	before := d.cur.State()
	after := d.command("c1", func() {
		for _, p := range []string{"a.txt", "d"} {
			if err := os.RemoveAll(filepath.Join(ws, p)); err != nil {
				t.Fatal(err)
			}
		}
		d.write("a.txt/inner.txt", "inside\n")
		d.write("d", "now a file\n")
	})
	want := map[int]map[string][32]byte{before.Version: nil, after.Version: snapshottest.Hashes(t, ws)}
	head := after
	for _, v := range []int{before.Version, after.Version, before.Version, after.Version} {
		res, err := rewind.Restore(ctx, st, files, head, v, rewind.Options{})
		if err != nil {
			t.Fatalf("restore v%d: %v", v, err)
		}
		if len(res.Failed) > 0 || len(res.Left) > 0 {
			t.Fatalf("restore v%d: failed %v, left %v", v, res.Failed, res.Left)
		}
		head = res.Head
		got := snapshottest.Hashes(t, ws)
		if want[v] == nil {
			want[v] = got
			if string(readFile(t, ws, "a.txt")) != "a file\n" || string(readFile(t, ws, "d/e/f/deep.txt")) != "deep\n" {
				t.Fatalf("at v%d the workspace holds %v", v, got)
			}
		}
		if !maps.Equal(got, want[v]) {
			t.Fatalf("at v%d the workspace holds %v, want %v", v, got, want[v])
		}
		if v == before.Version {
			if fi, err := os.Stat(filepath.Join(ws, "a.txt")); err != nil || fi.IsDir() {
				t.Fatalf("a.txt is not a file again: %v", err)
			}
		} else if fi, err := os.Stat(filepath.Join(ws, "d")); err != nil || fi.IsDir() {
			t.Fatalf("d is not a file again: %v", err)
		}
	}
}

func readFile(t *testing.T, dir, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
