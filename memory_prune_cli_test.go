package main

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"retrace/state"
)

// memory prune folds away the entries of removed memories and the
// earlier texts of edited ones, keeping the memories as they are; its
// dry run changes nothing, and gc --memories does the same.
func TestMemoryPrune(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	db := filepath.Join(t.TempDir(), "retrace.db")
	ws := t.TempDir()
	on := func(args ...string) string { return retrace(t, append(args, "--db", db)...).ok(t).stdout }
	list := func() []state.Memory {
		t.Helper()
		var l []state.Memory
		if err := json.Unmarshal([]byte(on("memory", "list", "--json")), &l); err != nil {
			t.Fatal(err)
		}
		return l
	}
	entries := func() int {
		t.Helper()
		var log []state.MemoryEvent
		if err := json.Unmarshal([]byte(on("memory", "log", "--json")), &log); err != nil {
			t.Fatal(err)
		}
		return len(log)
	}
	for _, text := range []string{"tabs", "make check", "kestrel"} {
		on("memory", "add", "--workspace", ws, text)
	}
	l := list()
	on("memory", "rm", l[0].ID)
	on("memory", "edit", l[1].ID, "make test")
	before := list()

	if out := on("memory", "prune", "--dry-run"); !strings.Contains(out, "would fold the memory log's 5 entries into 2 entries: the entries of 1 memory removed since") ||
		!strings.Contains(out, "nothing was changed") {
		t.Fatalf("the dry run said:\n%s", out)
	}
	if n := entries(); n != 5 {
		t.Fatalf("the dry run left %d entries", n)
	}
	if out := on("memory", "prune"); !strings.Contains(out, "folded the memory log's 5 entries into 2 entries") || !strings.Contains(out, "v1 to v2") {
		t.Fatalf("the prune said:\n%s", out)
	}
	if n, after := entries(), list(); n != 2 || !reflect.DeepEqual(after, before) {
		t.Fatalf("after the prune: %d entries, memories %+v, not %+v", n, after, before)
	}
	if out := on("memory", "prune"); !strings.Contains(out, "nothing to prune: the memory log holds 2 memories") {
		t.Fatalf("a second prune said:\n%s", out)
	}

	// Everything restored away, then pruned by gc: an empty log.
	on("memory", "restore", "0")
	if out := on("gc", "--memories", "--dry-run"); !strings.Contains(out, "would fold the memory log's 3 entries into 0 entries") {
		t.Fatalf("gc --memories --dry-run said:\n%s", out)
	}
	on("gc", "--memories")
	if n := entries(); n != 0 || len(list()) != 0 {
		t.Fatalf("after gc --memories: %d entries", n)
	}
	if r := retrace(t, "memory", "list", "--dry-run", "--db", db); r.code != exitUsage {
		t.Fatalf("memory list --dry-run: exit %d", r.code)
	}
}
