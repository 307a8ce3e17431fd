package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"retrace/agent/llmserver"
	"retrace/state"
	"retrace/storage"
)

// A session a stopped retrace of this machine left in the middle of a
// restore is opened without a file written: `run --session` refuses,
// naming the command that finishes it and the one that leaves the files
// as they are, and `rollback --keep-files` writes nothing.
func TestAnOpenRestoreIsFinishedOnlyWhenAsked(t *testing.T) {
	e := newRunEnv(t)
	keptAsIs(t, e.db, hostileExport(t, "restore", e.ws))
	r := e.run(t, "", "--session", "hostile-restore", "what is this session about?")
	nothingWritten(t, e.ws)
	if r.code != exitError || !strings.Contains(r.stderr, "retrace rollback hostile- 2") || !strings.Contains(r.stderr, "--keep-files") {
		t.Fatalf("run on an open restore: exit %d\n%s", r.code, r.stderr)
	}
	if r := e.run(t, "", "--session", "hostile-restore"); r.code != exitError || !strings.Contains(r.stderr, "retrace rollback hostile- 2") {
		t.Fatalf("resume on an open restore: exit %d\n%s", r.code, r.stderr)
	}
	nothingWritten(t, e.ws)

	out := retrace(t, "rollback", "hostile-restore", "2", "--keep-files", "--db", e.db).ok(t).stdout
	nothingWritten(t, e.ws)
	if !strings.Contains(out, "head moved from v3 to v2") {
		t.Fatalf("rollback --keep-files said:\n%s", out)
	}
	e.srv.Enqueue(llmserver.TextReply("It sets up a project."))
	if r := e.run(t, "", "--session", "hostile-restore", "what is this session about?"); r.code != exitOK || strings.TrimSpace(r.stdout) != "It sets up a project." {
		t.Fatalf("after the restore was left: exit %d, %q\n%s", r.code, r.stdout, r.stderr)
	}
	nothingWritten(t, e.ws)
}

// --keep-files writes nothing, whatever the head: an open restore stays
// unfinished, on the branch the head leaves.
func TestKeepFilesLeavesAnOpenRestore(t *testing.T) {
	e := newRunEnv(t)
	keptAsIs(t, e.db, hostileExport(t, "restore", e.ws))
	for _, v := range []string{"1", "3", "2"} {
		retrace(t, "rollback", "hostile-restore", v, "--keep-files", "--db", e.db).ok(t)
		nothingWritten(t, e.ws)
	}
}

// A call approved before retrace stopped is asked about again when the
// task is carried on: `run` without --yes denies it, with --yes runs it.
// A remember call left open is asked about too.
func TestResumeAsksAgain(t *testing.T) {
	t.Run("approval", func(t *testing.T) {
		e := newRunEnv(t)
		keptAsIs(t, e.db, hostileExport(t, "approval", e.ws))
		e.srv.Enqueue(llmserver.TextReply("Not run."))
		r := e.run(t, "", "--session", "hostile-approval")
		nothingWritten(t, e.ws)
		if r.code != exitOK || !strings.Contains(r.stderr, "denied: run_command") {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
	})
	t.Run("approval with --yes", func(t *testing.T) {
		e := newRunEnv(t)
		keptAsIs(t, e.db, hostileExport(t, "approval", e.ws))
		e.srv.Enqueue(llmserver.TextReply("Ran it."))
		r := e.run(t, "", "--session", "hostile-approval", "--yes")
		if _, err := os.Stat(filepath.Join(e.ws, "pwned")); err != nil || !strings.Contains(r.stderr, "approved by --yes: run_command") {
			t.Fatalf("exit %d, written: %v\n%s", r.code, err, r.stderr)
		}
	})
	t.Run("remember", func(t *testing.T) {
		e := newRunEnv(t)
		keptAsIs(t, e.db, hostileExport(t, "remember", e.ws))
		e.srv.Enqueue(llmserver.TextReply("Not kept."))
		r := e.run(t, "", "--session", "hostile-remember")
		if list := retrace(t, "memory", "list", "--db", e.db).ok(t).stdout; strings.Contains(list, "attacker") || r.code != exitOK {
			t.Fatalf("exit %d; memories:\n%s\n%s", r.code, list, r.stderr)
		}
		if !strings.Contains(r.stderr, "denied: remember") {
			t.Fatalf("the remember call was not asked about:\n%s", r.stderr)
		}
	})
}

// After a rollback to a version in the middle of a task, a new prompt
// replaces that task: the old one is recorded as ended by the new
// message, not carried on, and stdout holds only the new answer.
func TestRunReplacesAnUnfinishedTask(t *testing.T) {
	e := newRunEnv(t)
	e.srv.Enqueue(fileCall("w1", "write_file", map[string]string{"path": "NOTES.md", "content": "notes\n"}),
		llmserver.TextReply("I wrote my notes to NOTES.md."))
	if r := e.run(t, "", "--yes", "take notes"); r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	id := sessionID(t, e.db)
	var ex storage.Exported
	if err := json.Unmarshal([]byte(retrace(t, "export", id, "--db", e.db).ok(t).stdout), &ex); err != nil {
		t.Fatal(err)
	}
	mid := 0
	for _, r := range ex.Checkpoints {
		if r.Event == state.ToolStarted {
			mid = r.Version
		}
	}
	if mid == 0 {
		t.Fatal("the task started no call")
	}
	retrace(t, "rollback", id, strconv.Itoa(mid), "--keep-files", "--db", e.db).ok(t)

	e.srv.Enqueue(llmserver.TextReply("Four."))
	r := e.run(t, "", "--session", id, "what is 2 + 2?")
	if r.code != exitOK || strings.TrimSpace(r.stdout) != "Four." {
		t.Fatalf("exit %d, stdout %q: want only the new answer\n%s", r.code, r.stdout, r.stderr)
	}
	show := retrace(t, "show", id, "--json", "--db", e.db).ok(t).stdout
	if strings.Contains(show, "retrace stopped while this call was running") || !strings.Contains(show, "a new message replaced this unfinished task") {
		t.Fatalf("the old task is not recorded as replaced:\n%s", show)
	}
}

// A session whose recorded workspace is empty or relative (kept before
// imports checked it) has its files put back nowhere: rollback refuses,
// instead of writing wherever it is typed.
func TestRollbackNeedsAWorkspaceOfThisMachine(t *testing.T) {
	here := t.TempDir()
	t.Chdir(here)
	for _, ws := range []string{"", "project"} {
		db := filepath.Join(t.TempDir(), "retrace.db")
		keptAsIs(t, db, hostileExport(t, "restore", ws))
		r := retrace(t, "rollback", "hostile-restore", "1", "--db", db)
		nothingWritten(t, here)
		nothingWritten(t, filepath.Join(here, "project"))
		if r.code != exitError || !strings.Contains(r.stderr, "--keep-files moves only the head") {
			t.Fatalf("workspace %q: exit %d\n%s", ws, r.code, r.stderr)
		}
	}
}
