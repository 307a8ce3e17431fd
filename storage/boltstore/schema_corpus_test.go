package boltstore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// The schema corpus: a store file written by each schema version, kept in
// testdata and never modified. Each must open with this build, migrate to
// the current schema, read back exactly as it did when it was written, and
// take new checkpoints.
//
//	testdata/schema0.db           a bbolt file with no buckets
//	testdata/schema1.db           two sessions, one of them forked
//	testdata/schema1.golden.json  what schema1.db reads back as
//
// RETRACE_UPDATE_TESTDATA=1 writes the files again. Do that for schema 1
// only while schema 1 is the current schema; once a newer one exists, the
// old files are the record of what old builds wrote, and only the golden
// file may be rewritten (when the JSON of a state changes on purpose):
// RETRACE_UPDATE_GOLDEN=1 writes what this build reads schema1.db as.

const updateEnv = "RETRACE_UPDATE_TESTDATA"

// corpusGolden is what a schema-1 file reads back as.
type corpusGolden struct {
	Sessions []storage.SessionInfo      `json:"sessions"`
	Trees    map[string]storage.Tree    `json:"trees"`
	Heads    map[string]json.RawMessage `json:"heads"`
	States   map[string]map[int]string  `json:"states"` // SHA-256 of every version's state as JSON
}

func TestSchemaCorpus(t *testing.T) {
	if os.Getenv(updateEnv) != "" {
		writeSchemaCorpus(t)
	}
	t.Run("schema 0", func(t *testing.T) {
		ctx := context.Background()
		path := copyTestdata(t, "schema0.db")
		if got := fileSchema(t, path); got != 0 {
			t.Fatalf("testdata/schema0.db has schema %d", got)
		}
		st, err := boltstore.Open(path, boltstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		list, err := st.Sessions(ctx)
		if err != nil || len(list) != 0 {
			t.Fatalf("sessions of a schema-0 file: %v, %v", list, err)
		}
		if got := fileSchema(t, path); got != 1 {
			t.Fatalf("after opening, the file has schema %d, want 1", got)
		}
		resumeCorpus(t, st, path, "")
	})
	t.Run("schema 1", func(t *testing.T) {
		ctx := context.Background()
		var want corpusGolden
		readJSON(t, filepath.Join("testdata", "schema1.golden.json"), &want)
		path := copyTestdata(t, "schema1.db")
		if got := fileSchema(t, path); got != 1 {
			t.Fatalf("testdata/schema1.db has schema %d", got)
		}
		st, err := boltstore.Open(path, boltstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		got := readCorpus(t, st)
		if os.Getenv("RETRACE_UPDATE_GOLDEN") != "" {
			js, err := json.MarshalIndent(got, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join("testdata", "schema1.golden.json"), append(js, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
			want = got
		}
		for _, c := range []struct {
			what      string
			got, want any
		}{
			{"the sessions", got.Sessions, want.Sessions},
			{"the trees", got.Trees, want.Trees},
			{"the heads", got.Heads, want.Heads},
			{"the states at every version", got.States, want.States},
		} {
			if g, w := mustJSON(t, c.got), mustJSON(t, c.want); !bytes.Equal(g, w) {
				t.Errorf("%s differ from testdata/schema1.golden.json:\n got %.600s\nwant %.600s", c.what, g, w)
			}
		}
		for _, info := range want.Sessions {
			resumeCorpus(t, st, path, info.ID)
		}
		if _, err := st.Tree(ctx, want.Sessions[0].ID); err != nil {
			t.Fatal(err)
		}
	})
}

// resumeCorpus commits a new checkpoint to session id at its head (to a
// new session when id is empty) and verifies the file.
func resumeCorpus(t *testing.T, st *boltstore.Store, path, id string) {
	t.Helper()
	ctx := context.Background()
	if id == "" {
		info, err := st.Create(ctx, storage.NewSession{Title: "after migration"})
		if err != nil {
			t.Fatal(err)
		}
		id = info.ID
	}
	head, err := st.Head(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var ev state.Event
	switch head.Phase {
	case state.Idle, state.Done, state.Error:
		ev = state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "and now?"}}}
	case state.Planning, state.Reflecting:
		ev = state.Event{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: "done"}}}
	default:
		ev = state.Event{Kind: state.Interrupted, Text: "resumed by a test"}
	}
	next, err := storage.NewCursor(st, head).Commit(ctx, ev)
	if err != nil {
		t.Fatalf("resume session %s at v%d (%s): %v", id, head.Version, head.Phase, err)
	}
	if again, err := st.Head(ctx, id); err != nil || stateSum(again) != stateSum(next) {
		t.Fatalf("after resuming, the head is not the state committed: %v", err)
	}
	if err := boltstore.Verify(ctx, path); err != nil {
		t.Fatal(err)
	}
}

// readCorpus reads everything a schema-1 golden records.
func readCorpus(t *testing.T, st *boltstore.Store) corpusGolden {
	t.Helper()
	ctx := context.Background()
	list, err := st.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	g := corpusGolden{Sessions: list, Trees: map[string]storage.Tree{}, Heads: map[string]json.RawMessage{}, States: map[string]map[int]string{}}
	for _, info := range list {
		tree, err := st.Tree(ctx, info.ID)
		if err != nil {
			t.Fatal(err)
		}
		head, err := st.Head(ctx, info.ID)
		if err != nil {
			t.Fatal(err)
		}
		g.Trees[info.ID], g.Heads[info.ID] = tree, mustJSON(t, head)
		g.States[info.ID] = map[int]string{}
		for v := 0; v <= info.Versions; v++ {
			g.States[info.ID][v] = stateSum(mustAt(t, st, info.ID, v))
		}
	}
	return g
}

// writeSchemaCorpus writes the corpus files again (see the top of this
// file for when that is right).
func writeSchemaCorpus(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()

	db, err := bolt.Open(filepath.Join(tmp, "schema0.db"), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	path := filepath.Join(tmp, "schema1.db")
	clock := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	tick := func() time.Time { clock = clock.Add(7 * time.Second); return clock }
	st, err := boltstore.Open(path, boltstore.Options{Now: tick})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range corpusSessions() {
		info, err := st.Create(ctx, storage.NewSession{Title: s.title, Model: "gpt-test", Workspace: "/home/user/project", CreatedAt: tick()})
		if err != nil {
			t.Fatal(err)
		}
		cur := storage.NewCursor(st, state.New(info.ID))
		for i, ev := range s.events {
			if ev.Kind == 0 { // a rollback to ev.Step
				if err := st.SetHead(ctx, info.ID, ev.Step); err != nil {
					t.Fatal(err)
				}
				at, err := st.At(ctx, info.ID, ev.Step)
				if err != nil {
					t.Fatal(err)
				}
				cur = storage.NewCursor(st, at)
				continue
			}
			ev.At = tick()
			if _, err := cur.Commit(ctx, ev); err != nil {
				t.Fatalf("%s, event %d: %v", s.title, i, err)
			}
		}
	}
	golden := readCorpus(t, st)
	st.Close()

	js, err := json.MarshalIndent(golden, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	for name, from := range map[string]string{"schema0.db": filepath.Join(tmp, "schema0.db"), "schema1.db": path} {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("testdata", name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join("testdata", "schema1.golden.json"), append(js, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote testdata/schema0.db, testdata/schema1.db and testdata/schema1.golden.json")
}

// corpusSessions is what schema1.db holds: an agent run with a plan and a
// tool call, rolled back and forked; and a plain chat cut short. An event
// of kind 0 is a rollback to version Step.
func corpusSessions() []struct {
	title  string
	events []state.Event
} {
	user := func(text string) state.Event {
		return state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: text}}}
	}
	answer := func(text string) state.Event {
		return state.Event{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: text}}, Usage: state.Usage{PromptTokens: 120, CompletionTokens: 30}}
	}
	call := &state.ToolCall{ID: "call_1"}
	return []struct {
		title  string
		events []state.Event
	}{
		{"read main.go", []state.Event{
			{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleSystem, Content: "You are retrace."}, {Role: state.RoleUser, Content: "What does main.go do?"}}},
			{Kind: state.PlanSet, Goal: "explain main.go", Plan: []state.Step{{Text: "read main.go"}, {Text: "explain it"}}},
			{Kind: state.AssistantMessage, Messages: []state.Message{{Role: state.RoleAssistant, ToolCalls: []state.ToolRequest{{ID: "call_1", Name: "read_file", Arguments: `{"path":"main.go"}`}}}}},
			{Kind: state.ToolStarted, Tool: call},
			{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: "call_1", Result: "package main\n\nfunc main() { run() }", DurationMS: 12}},
			{Kind: state.StepCompleted, Step: 0},
			{Kind: state.Continue},
			{Kind: state.NoteSet, NoteKey: "language", NoteValue: "Go"},
			{Kind: state.StepCompleted, Step: 1},
			answer("main.go calls run, which opens the store and starts the interface."),
			{Step: 6}, // back to after the first step, and fork
			{Kind: state.Replan},
			answer("It starts the program; ask me for details."),
			user("Thanks. Résumé in one word? 🙂"),
			answer("Bootstrap."),
		}},
		{"quick chat", []state.Event{
			user("hello"),
			answer("Hello! What shall we do?"),
			user("write a haiku about checkpoints"),
			{Kind: state.Interrupted, Text: "cancelled by the user", Messages: []state.Message{{Role: state.RoleAssistant, Content: "Every state is kept"}}},
		}},
	}
}

// copyTestdata copies a testdata file to a new directory and returns the
// copy's path. When the test ends, the testdata file must be unchanged.
func copyTestdata(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("testdata", name)
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatalf("%v (write the corpus with %s=1)", err, updateEnv)
	}
	sum := sha256.Sum256(b)
	t.Cleanup(func() {
		if after, err := os.ReadFile(src); err != nil || sha256.Sum256(after) != sum {
			t.Errorf("%s changed during the test", src)
		}
	})
	path := filepath.Join(t.TempDir(), "retrace.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// fileSchema reads a file's schema version with bbolt directly: 0 when it
// has no retrace bucket.
func fileSchema(t *testing.T, path string) int {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	schema := 0
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("retrace"))
		if b == nil {
			return nil
		}
		v := b.Get([]byte("schema"))
		if len(v) != 4 {
			return fmt.Errorf("schema value %x", v)
		}
		schema = int(binary.BigEndian.Uint32(v))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return schema
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write the corpus with %s=1)", err, updateEnv)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
