package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"retrace/agent/snapshot"
	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// gcFixture writes n sessions of a few turns each: the first half last
// updated 200 days ago, the rest an hour ago, every fifth of those with a
// branch abandoned by a rollback. It returns the ids, old ones first.
func gcFixture(t *testing.T, db string, n int) (old, recent []string) {
	t.Helper()
	ctx := context.Background()
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pad := strings.Repeat("words that take room in the file ", 60)
	for i := range n {
		at := time.Now().Add(-time.Hour)
		if i < n/2 {
			at = time.Now().Add(-200 * 24 * time.Hour)
		}
		info, err := st.Create(ctx, storage.NewSession{Title: fmt.Sprintf("session %d", i), CreatedAt: at})
		if err != nil {
			t.Fatal(err)
		}
		cur := storage.NewCursor(st, state.New(info.ID))
		turn := func(k int) {
			for _, ev := range []state.Event{
				{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: fmt.Sprintf("question %d %s", k, pad)}}},
				{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: fmt.Sprintf("answer %d %s", k, pad)}}},
			} {
				ev.At = at.Add(time.Duration(cur.State().Version) * time.Second)
				if _, err := cur.Commit(ctx, ev); err != nil {
					t.Fatal(err)
				}
			}
		}
		for k := range 3 {
			turn(k)
		}
		if i >= n/2 && i%5 == 0 {
			// Back to v2, and on: v3-v6 are abandoned.
			if err := st.SetHead(ctx, info.ID, 2); err != nil {
				t.Fatal(err)
			}
			s, err := st.At(ctx, info.ID, 2)
			if err != nil {
				t.Fatal(err)
			}
			cur = storage.NewCursor(st, s)
			turn(9)
		}
		if i < n/2 {
			old = append(old, info.ID)
		} else {
			recent = append(recent, info.ID)
		}
	}
	return old, recent
}

var (
	freedRE   = regexp.MustCompile(`(?m)^(?:would free|freed) .*?\(?([0-9]+) bytes\)?[;,]`)
	compactRE = regexp.MustCompile(`\(([0-9]+) bytes\) -> .*?\(([0-9]+) bytes\)`)
)

func atoi64(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// gc and compact through the command line, on 50 sessions: the dry run
// lists what the run then removes and writes nothing; a held session is
// skipped and named, and makes compact refuse; compact gives the space
// back; every remaining session shows byte for byte as before.
func TestGCAndCompactCommands(t *testing.T) {
	db := filepath.Join(t.TempDir(), "retrace.db")
	old, recent := gcFixture(t, db, 50)
	shows := map[string]string{}
	for _, id := range recent {
		shows[id] = retrace(t, "show", id, "--json", "--db", db).ok(t).stdout
	}

	holder, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if err := holder.Claim(context.Background(), old[0]); err != nil {
		t.Fatal(err)
	}
	skipped := fmt.Sprintf("skipped %s  \"session 0\": in use by another retrace process (pid %d)", old[0], os.Getpid())

	before, size0 := sum(t, db), fileSize(t, db)
	dry := retrace(t, "gc", "--older-than", "90d", "--branches", "--dry-run", "--db", db).ok(t).stdout
	if sum(t, db) != before {
		t.Fatal("gc --dry-run changed the file")
	}
	for _, want := range []string{"would remove 24 sessions:", "not updated for 199 days", "would remove 5 abandoned branches:", "branch 1 after v2: v3, v4, v5, v6", skipped, "nothing was changed"} {
		if !strings.Contains(dry, want) {
			t.Errorf("dry run says:\n%s\nwant %q in it", dry, want)
		}
	}
	for _, id := range old[1:] {
		if !strings.Contains(dry, id) {
			t.Errorf("the dry run does not name %s", id)
		}
	}
	m := freedRE.FindStringSubmatch(dry)
	if m == nil {
		t.Fatalf("no bytes in the dry run:\n%s", dry)
	}
	wouldFree := atoi64(t, m[1])

	out := retrace(t, "gc", "--older-than", "90d", "--branches", "--db", db).ok(t).stdout
	if m = freedRE.FindStringSubmatch(out); m == nil || atoi64(t, m[1]) != wouldFree {
		t.Fatalf("gc says:\n%s\nwant it to free the %d bytes the dry run said", out, wouldFree)
	}
	if !strings.Contains(out, "removed 24 sessions:") || !strings.Contains(out, skipped) {
		t.Errorf("gc says:\n%s", out)
	}
	list := retrace(t, "sessions", "--db", db).ok(t).stdout
	for _, id := range old[1:] {
		if strings.Contains(list, id) {
			t.Errorf("%s is still listed", id)
		}
	}
	size1 := fileSize(t, db)

	refused := retrace(t, "compact", "--db", db)
	if refused.code != exitError || !strings.Contains(refused.stderr, old[0]) || !strings.Contains(refused.stderr, fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("compact with a session held: exit %d, %s", refused.code, refused.stderr)
	}
	if fileSize(t, db) != size1 {
		t.Fatal("a refused compact changed the file")
	}
	holder.Close()
	out = retrace(t, "compact", "--db", db).ok(t).stdout
	m = compactRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("compact says %q", out)
	}
	was, now := atoi64(t, m[1]), atoi64(t, m[2])
	if was != size1 || now != fileSize(t, db) || size1-now < wouldFree/2 {
		t.Fatalf("compact says %d -> %d; the file was %d and is %d; gc freed %d", was, now, size1, fileSize(t, db), wouldFree)
	}
	t.Logf("50 sessions: %d bytes; gc of 24 sessions and 5 branches freed %d bytes (file still %d); compact: %d -> %d", size0, wouldFree, size1, was, now)
	for id, want := range shows {
		if got := retrace(t, "show", id, "--json", "--db", db).ok(t).stdout; got != want {
			t.Errorf("session %s shows differently after gc and compact", id)
		}
	}
	if err := boltstore.Verify(context.Background(), db); err != nil {
		t.Fatal(err)
	}
}

func TestGCBadInput(t *testing.T) {
	db := filepath.Join(t.TempDir(), "retrace.db")
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"gc"}, "say what to remove"},
		{[]string{"gc", "--older-than", "90"}, "such as 90d, 36h or 45m"},
		{[]string{"gc", "--older-than", "3w"}, "such as 90d, 36h or 45m"},
		{[]string{"gc", "--older-than", "0d"}, "would take every session"},
		{[]string{"gc", "--branches", "--keep", "abc"}, "--keep wants ID:VERSION"},
		{[]string{"gc", "--older-than", "9d", "--keep", "abc:3"}, "give --branches too"},
		{[]string{"compact", "extra"}, "want no arguments"},
	} {
		r := retrace(t, append(c.args, "--db", db)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.says) {
			t.Errorf("%v: exit %d, %q; want 2 saying %q", c.args, r.code, r.stderr, c.says)
		}
	}
}

// `retrace gc --cache` removes from the content cache the contents no
// workspace holds any more, and keeps those a workspace's files hold.
func TestGCCache(t *testing.T) {
	cacheHome := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cacheHome)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	ws := t.TempDir()
	file := filepath.Join(ws, "a.txt")
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("the first")
	w, err := snapshot.New(ws, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := w.Mark(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	write("the second, which the workspace holds")
	if _, _, err := w.Changes(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	// A stamp this recent vouches for nothing, and the index leaves it
	// out; once it is older, the next scan writes it to the index.
	for info, err := os.Stat(file); time.Since(info.ModTime()) < time.Second; {
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := w.Mark(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Old enough that eviction may take them.
	packs, _ := filepath.Glob(filepath.Join(cacheHome, "retrace", "objects", "packs", "*"))
	if len(packs) == 0 {
		t.Fatal("the scans left no pack")
	}
	for _, p := range packs {
		old := time.Now().Add(-time.Hour)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	r := retrace(t, "gc", "--cache").ok(t)
	if !strings.Contains(r.stdout, "content cache: removed 1 file content,") {
		t.Fatalf("gc --cache:\n%s", r.stdout)
	}
	if r := retrace(t, "gc", "--cache", "--dry-run"); r.code != 2 {
		t.Errorf("gc --cache --dry-run: exit %d, want 2\n%s", r.code, r.stderr)
	}
}

// A file compact cannot shrink (compacted already) stays the same file,
// byte for byte; compact says so plainly, exits 0, and never prints a
// negative amount given back.
func TestCompactCommandKeepsAFileItCannotShrink(t *testing.T) {
	db := filepath.Join(t.TempDir(), "retrace.db")
	gcFixture(t, db, 4)
	retrace(t, "gc", "--older-than", "90d", "--db", db).ok(t)
	first := retrace(t, "compact", "--db", db).ok(t).stdout
	if !compactRE.MatchString(first) {
		t.Fatalf("the first compact says %q", first)
	}
	before, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	was := sum(t, db)
	out := retrace(t, "compact", "--db", db).ok(t).stdout
	t.Logf("compact again: %s", out)
	want := fmt.Sprintf("no smaller than the file's %s; the file is kept as it was, nothing given back", bytesOf(before.Size()))
	if !strings.Contains(out, want) || regexp.MustCompile(`-[0-9]`).MatchString(out) {
		t.Fatalf("compact of a file compacted already says:\n%s\nwant %q in it", out, want)
	}
	after, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) || sum(t, db) != was {
		t.Fatal("the file was replaced or changed")
	}
}
