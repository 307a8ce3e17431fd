package boltstore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
	"retrace/storage/storetest"
)

// The schema corpus: a store file written by each schema version, kept in
// testdata and never modified. Each must open with this build, migrate to
// the current schema, read back exactly as it did when it was written, and
// take new checkpoints, with file contents.
//
//	testdata/schema0.db           a bbolt file with no buckets
//	testdata/schema1.db           two sessions, one of them forked
//	testdata/schema1.golden.json  what schema1.db reads back as
//	testdata/schema2.db           those two, and a session whose tool calls
//	                              change files (contents in the blobs bucket)
//	testdata/schema2.golden.json  what schema2.db reads back as
//	testdata/schema3.db           the same sessions as schema2.db (schema 3
//	                              only allows gaps gc makes)
//	testdata/schema3.golden.json  what schema3.db reads back as
//	testdata/schema4.db           the same, its checkpoints in record format 2
//	testdata/schema4.golden.json  what schema4.db reads back as
//	testdata/schema5.db           the same, and a chat long enough to keep
//	                              snapshots
//	testdata/schema5.golden.json  what schema5.db reads back as
//	testdata/schema6.db           the same, and a memory log
//	testdata/schema6.golden.json  what schema6.db reads back as
//	testdata/schema7.db           the same, and a content past 1 MiB, in chunks
//	testdata/schema7.golden.json  what schema7.db reads back as
//
// RETRACE_UPDATE_TESTDATA=1 writes the current schema's files again, and
// only those: a file of an older schema is the record of what old builds
// wrote, which this build can no longer write. Once a newer schema exists,
// only an old schema's golden file may be rewritten (when the JSON of a
// state changes on purpose): RETRACE_UPDATE_GOLDEN=1 writes what this
// build reads each old file as.

const updateEnv = "RETRACE_UPDATE_TESTDATA"

// corpusGolden is what a corpus file reads back as.
type corpusGolden struct {
	Sessions []storage.SessionInfo      `json:"sessions"`
	Trees    map[string]storage.Tree    `json:"trees"`
	Heads    map[string]json.RawMessage `json:"heads"`
	States   map[string]map[int]string  `json:"states"` // SHA-256 of every version's state as JSON
	// Blobs are the file contents the sessions refer to: digest -> length.
	Blobs map[string]int `json:"blobs,omitempty"`
	// Memories is the memory log (schema 6 on).
	Memories []state.MemoryEvent `json:"memories,omitempty"`
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
		if got := fileSchema(t, path); got != boltstore.SchemaVersion {
			t.Fatalf("after opening, the file has schema %d, want %d", got, boltstore.SchemaVersion)
		}
		resumeCorpus(t, st, path, "")
	})
	for schema := 1; schema <= boltstore.SchemaVersion; schema++ {
		t.Run(fmt.Sprintf("schema %d", schema), func(t *testing.T) { checkCorpusFile(t, schema) })
	}
}

// checkCorpusFile opens testdata/schema<n>.db, checks it reads back as its
// golden file says (after migrating it), and resumes every session in it.
func checkCorpusFile(t *testing.T, schema int) {
	ctx := context.Background()
	name := fmt.Sprintf("schema%d", schema)
	var want corpusGolden
	readJSON(t, filepath.Join("testdata", name+".golden.json"), &want)
	path := copyTestdata(t, name+".db")
	if got := fileSchema(t, path); got != schema {
		t.Fatalf("testdata/%s.db has schema %d", name, got)
	}
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got := fileSchema(t, path); got != boltstore.SchemaVersion {
		t.Fatalf("after opening, the file has schema %d, want %d", got, boltstore.SchemaVersion)
	}
	got := readCorpus(t, st)
	if os.Getenv("RETRACE_UPDATE_GOLDEN") != "" {
		js, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("testdata", name+".golden.json"), append(js, '\n'), 0o644); err != nil {
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
		{"the file contents", got.Blobs, want.Blobs},
		{"the memory log", got.Memories, want.Memories},
	} {
		if g, w := mustJSON(t, c.got), mustJSON(t, c.want); !bytes.Equal(g, w) {
			t.Errorf("%s differ from testdata/%s.golden.json:\n got %.600s\nwant %.600s", c.what, name, g, w)
		}
	}
	if schema >= 2 && len(want.Blobs) == 0 {
		t.Errorf("testdata/%s.golden.json records no file contents", name)
	}
	if schema >= 6 && len(want.Memories) == 0 {
		t.Errorf("testdata/%s.golden.json records no memories", name)
	}
	if schema >= 7 && !slices.ContainsFunc(slices.Collect(maps.Values(want.Blobs)), func(n int) bool { return n > boltstore.ChunkSize }) {
		t.Errorf("testdata/%s.golden.json records no content kept in chunks", name)
	}
	// The recent part of every version is the whole's: from the events
	// alone in a file of an old schema, through snapshots in a new one.
	for _, info := range want.Sessions {
		for v := 1; v <= info.Versions; v++ {
			storetest.SameRecent(t, st, info.ID, v, 10)
		}
	}
	for _, info := range want.Sessions {
		resumeCorpus(t, st, path, info.ID)
	}
	if _, err := st.Tree(ctx, want.Sessions[0].ID); err != nil {
		t.Fatal(err)
	}
}

// resumeCorpus commits a new checkpoint to session id at its head (to a
// new session when id is empty), then a tool call that changes a file,
// whose content the store must keep and give back, and verifies the file.
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
	cur := storage.NewCursor(st, head)
	next, err := cur.Commit(ctx, ev)
	if err != nil {
		t.Fatalf("resume session %s at v%d (%s): %v", id, head.Version, head.Phase, err)
	}
	if again, err := st.Head(ctx, id); err != nil || stateSum(again) != stateSum(next) {
		t.Fatalf("after resuming, the head is not the state committed: %v", err)
	}

	content := []byte("written after migrating session " + id + "\n")
	changed := state.FileImage{Blob: storage.Digest(content), Size: int64(len(content)), Mode: 0o644}
	events := boltstore.FileChangeEvents(next.Phase, "call_resumed", state.FileChange{Path: "resumed.txt", Before: state.FileImage{Absent: true}, After: changed})
	events[len(events)-1].Blobs = []state.Blob{{Digest: changed.Blob, Data: content}}
	for _, ev := range events {
		if next, err = cur.Commit(ctx, ev); err != nil {
			t.Fatalf("session %s: %s after migrating: %v", id, ev.Kind, err)
		}
	}
	if got, err := st.Blob(ctx, changed.Blob); err != nil || !bytes.Equal(got, content) {
		t.Fatalf("the content appended after migrating reads back as %q, %v", got, err)
	}
	if again, err := st.Head(ctx, id); err != nil || stateSum(again) != stateSum(next) || again.Files["resumed.txt"].Now != changed {
		t.Fatalf("after the file change, the head is not the state committed: %v", err)
	}
	if err := boltstore.Verify(ctx, path); err != nil {
		t.Fatal(err)
	}
}

// readCorpus reads everything a golden file records.
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
		ex, err := st.Export(ctx, info.ID)
		if err != nil {
			t.Fatal(err)
		}
		for d, data := range ex.Blobs {
			if g.Blobs == nil {
				g.Blobs = map[string]int{}
			}
			g.Blobs[d] = len(data)
		}
	}
	if g.Memories, err = st.MemoryEvents(context.Background()); err != nil {
		t.Fatal(err)
	}
	return g
}

// writeSchemaCorpus writes the current schema's corpus file and its golden
// file again (see the top of this file for when that is right).
func writeSchemaCorpus(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("schema%d", boltstore.SchemaVersion)
	path := filepath.Join(t.TempDir(), name+".db")
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
	for _, ev := range corpusMemories() {
		ev.At = tick()
		if _, err := st.AppendMemory(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	golden := readCorpus(t, st)
	st.Close()

	js, err := json.MarshalIndent(golden, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", name+".db"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", name+".golden.json"), append(js, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote testdata/%s.db and testdata/%s.golden.json", name, name)
}

// corpusMemories is the memory log of the current schema's corpus file:
// a memory of every scope, edited, removed, and an earlier version back.
func corpusMemories() []state.MemoryEvent {
	return []state.MemoryEvent{
		{Kind: state.MemoryAdded, Memory: state.Memory{ID: "m0000001", Text: "The person is called Ada; she prefers short answers.", Source: "retrace memory"}},
		{Kind: state.MemoryAdded, Memory: state.Memory{ID: "m0000002", Project: "/home/user/project", Text: "Tests run with `make check`.", Source: "session 1 v4"}},
		{Kind: state.MemoryEdited, Memory: state.Memory{ID: "m0000002", Text: "Tests run with `go test ./...`."}},
		{Kind: state.MemoryRemoved, Memory: state.Memory{ID: "m0000001"}},
		{Kind: state.MemoryRestored, To: 3},
	}
}

// corpusSessions is what the current schema's corpus file holds: an agent
// run with a plan and a tool call, rolled back and forked; a plain chat
// cut short (these two are what schema1.db holds); and tool calls that
// change files, rolled back and forked, the fork referring to content the
// first branch kept. An event of kind 0 is a rollback to version Step.
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
		{"edit files", fileEvents()},
		{"long chat", longChat(user, answer)},
	}
}

// longChat is a corpus session long enough to keep snapshots on both of
// its branches, with a summary on the way (written since schema 5).
func longChat(user, answer func(string) state.Event) []state.Event {
	var evs []state.Event
	for i := range 300 {
		evs = append(evs, user(fmt.Sprintf("question %d", i+1)), answer(fmt.Sprintf("answer %d", i+1)))
		if i == 199 {
			evs = append(evs, state.Event{Kind: state.Summarized, Text: "Two hundred questions, answered.", Through: 380})
		}
	}
	evs = append(evs, state.Event{Step: 451}) // back, and fork
	for i := range 100 {
		evs = append(evs, user(fmt.Sprintf("again %d", i+1)), answer(fmt.Sprintf("once more %d", i+1)))
	}
	return evs
}

// fileEvents is the corpus session whose tool calls change files.
func fileEvents() []state.Event {
	content := func(text string) (state.FileImage, state.Blob) {
		b := state.Blob{Digest: storage.Digest([]byte(text)), Data: []byte(text)}
		return state.FileImage{Blob: b.Digest, Size: int64(len(text)), Mode: 0o644}, b
	}
	mainV1, mainV1Blob := content("package main\n\nfunc main() { run() }\n")
	mainV2, mainV2Blob := content("package main\n\nfunc main() { start() }\n")
	mainV3, mainV3Blob := content("package main\n\nfunc main() { start(); wait() }\n")
	readme, readmeBlob := content(strings.Repeat("retrace keeps every version of a session.\n", 200))
	// Past 1 MiB, so schema 7 on keeps it in chunks.
	data, dataBlob := content(strings.Repeat("retrace keeps a large content in chunks of its own.\n", 48<<10))
	absent := state.FileImage{Absent: true}
	logo := state.FileImage{Size: 11 << 20, Mode: 0o644, Untracked: "larger than the 10 MiB cap"}

	first := boltstore.FileChangeEvents(state.Idle, "call_1", state.FileChange{Path: "main.go", Before: mainV1, After: mainV2})
	first[0].Messages[0].Content = "rename run to start"
	first[len(first)-1].Blobs = []state.Blob{mainV1Blob, mainV2Blob}
	second := boltstore.FileChangeEvents(state.Executing, "call_2",
		state.FileChange{Path: "README.md", Before: absent, After: readme},
		state.FileChange{Path: "logo.png", Before: absent, After: logo},
		state.FileChange{Path: "data.txt", Before: absent, After: data})
	second[len(second)-1].Blobs = []state.Blob{readmeBlob, dataBlob}
	// The fork changes main.go again: its before is content the first
	// branch kept, so it travels no more.
	fork := boltstore.FileChangeEvents(state.Executing, "call_3", state.FileChange{Path: "main.go", Before: mainV2, After: mainV3})
	fork[len(fork)-1].Blobs = []state.Blob{mainV3Blob}

	done := []state.Event{
		{Kind: state.StepCompleted, Step: 0},
		{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: "Renamed."}}},
	}
	evs := append(first, second...)
	evs = append(evs, done...)
	evs = append(evs, state.Event{Step: len(first)}) // back to after the first call
	evs = append(evs, fork...)
	return append(evs, done...)
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
