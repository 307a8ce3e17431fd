package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"retrace/state"
)

// A key pasted into `memory add` or `memory edit` is kept as the mark
// that says what stood there, as /remember and the model's remember
// calls keep it: never in the database, the list, the log or an export.
// The key of the variable the config file names is scrubbed too.
func TestMemoryAddAndEditScrubTheKey(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("OPENAI_API_KEY", secret)
	db := filepath.Join(t.TempDir(), "retrace.db")
	ws := t.TempDir()

	retrace(t, "memory", "add", "--workspace", ws, "--db", db, "the deploy key is", secret).ok(t)
	id := onlyMemory(t, db).ID
	retrace(t, "memory", "edit", id, "--db", db, "the key is "+secret+" still").ok(t)
	retraceIn(t, strings.NewReader("from stdin: "+secret+"\n"), "memory", "edit", id, "--db", db).ok(t)
	if got := onlyMemory(t, db).Text; got != "from stdin: [the API key]" {
		t.Fatalf("the memory reads %q", got)
	}

	// Another variable, named by the config file, and the environment's
	// usual one empty.
	other := "sk-OTHER-key-of-the-config-file-777"
	if err := os.MkdirAll(filepath.Join(cfg, "retrace"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "retrace", "config.toml"), []byte("api_key_env = \"TEAM_KEY\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("TEAM_KEY", other)
	retrace(t, "memory", "edit", id, "--db", db, "team key "+other).ok(t)
	if got := onlyMemory(t, db).Text; got != "team key [the API key]" {
		t.Fatalf("the memory reads %q", got)
	}

	seen := retrace(t, "memory", "log", "--json", "--db", db).ok(t).stdout + retrace(t, "memory", "list", "--db", db).ok(t).stdout
	raw, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{secret, other} {
		if strings.Contains(seen, key) || bytes.Contains(raw, []byte(key)) {
			t.Fatalf("the key %s was kept:\n%s", key, seen)
		}
	}
	if !strings.Contains(seen, "the deploy key is [the API key]") {
		t.Fatalf("the log does not say what stood there:\n%s", seen)
	}
}

// onlyMemory is the one memory db keeps.
func onlyMemory(t *testing.T, db string) state.Memory {
	t.Helper()
	var list []state.Memory
	if err := json.Unmarshal([]byte(retrace(t, "memory", "list", "--json", "--db", db).ok(t).stdout), &list); err != nil || len(list) != 1 {
		t.Fatalf("memory list: %+v, %v", list, err)
	}
	return list[0]
}
