package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"retrace/state"
	"retrace/state/statetest"
	"retrace/storage"
	"retrace/storage/boltstore"
	"retrace/storage/storetest"
)

// retraceIn is retrace with stdin.
// copyCorpus copies a file of the schema corpus to a temporary path: the
// files in testdata are never changed (opening one migrates it).
func copyCorpus(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("storage", "boltstore", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// scriptedDB writes a database with a session made the way the storage
// conformance suite makes them: scripted events with file contents, and
// branches from rollbacks.
func scriptedDB(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "retrace.db")
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	info, err := st.Create(ctx, storage.NewSession{Title: "scripted \x1b[2J", Model: "gpt-test", Workspace: "/src/app"})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	s := state.New(info.ID)
	for i := range 120 {
		if i == 50 || i == 90 {
			if err := st.SetHead(ctx, info.ID, i-20); err != nil {
				t.Fatal(err)
			}
			if s, err = st.Head(ctx, info.ID); err != nil {
				t.Fatal(err)
			}
		}
		if s, err = storage.Commit(ctx, st, s, storetest.WithContents(statetest.NextEvent(rng, s))); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// TestImportRoundTripsEveryCorpusSession: for every session of the test
// corpus (the schema corpus files, the command line's fixture, a scripted
// session with branches and file contents), export, import into a fresh
// database, export again: the bytes are the same, but for the imported
// checkpoint the session arrived with, and the workspace chosen for it.
func TestImportRoundTripsEveryCorpusSession(t *testing.T) {
	fixtureDB, _, _ := fixture(t)
	for _, db := range []string{copyCorpus(t, "schema1.db"), copyCorpus(t, "schema2.db"), fixtureDB, scriptedDB(t)} {
		st, err := boltstore.Open(db, boltstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		list, err := st.Sessions(context.Background())
		st.Close()
		if err != nil || len(list) == 0 {
			t.Fatalf("%s: %d sessions, %v", db, len(list), err)
		}
		for i, info := range list {
			t.Run(filepath.Base(db)+"/"+info.ID, func(t *testing.T) {
				before := retrace(t, "export", info.ID, "--db", db).ok(t).stdout
				fresh, ws := filepath.Join(t.TempDir(), "fresh.db"), t.TempDir()
				if i%2 == 0 {
					file := filepath.Join(t.TempDir(), "export.json")
					if err := os.WriteFile(file, []byte(before), 0o600); err != nil {
						t.Fatal(err)
					}
					retrace(t, "import", file, "--workspace", ws, "--db", fresh).ok(t)
				} else {
					retraceIn(t, strings.NewReader(before), "import", "-", "--workspace", ws, "--db", fresh).ok(t)
				}
				after := retrace(t, "export", info.ID, "--db", fresh).ok(t).stdout
				if want := arrivedAs(t, before, after, ws); after != want {
					t.Fatalf("export → import → export changed the bytes:\nbefore %d bytes\nafter  %d bytes, want %d", len(before), len(after), len(want))
				}
				if err := boltstore.Verify(context.Background(), fresh); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

func TestImportCommand(t *testing.T) {
	db, forked, _ := fixture(t)
	exported := retrace(t, "export", forked, "--db", db).ok(t).stdout
	file := filepath.Join(t.TempDir(), "export.json")
	if err := os.WriteFile(file, []byte(exported), 0o600); err != nil {
		t.Fatal(err)
	}

	t.Run("into a database holding the session", func(t *testing.T) {
		before := sum(t, db)
		r := retrace(t, "import", file, "--workspace", t.TempDir(), "--db", db)
		if r.code != exitError || !strings.Contains(r.stderr, forked) || !strings.Contains(r.stderr, "--new-id") {
			t.Fatalf("exit %d, stderr %q: want 1 and an error naming the session and --new-id", r.code, r.stderr)
		}
		if sum(t, db) != before {
			t.Fatal("a refused import changed the database")
		}
	})
	t.Run("under a new id", func(t *testing.T) {
		r := retrace(t, "import", file, "--new-id", "--workspace", t.TempDir(), "--db", db).ok(t)
		if !strings.Contains(r.stdout, "imported session") || strings.Contains(r.stdout, forked) {
			t.Fatalf("stdout %q: want the new session named", r.stdout)
		}
		if n := strings.Count(retrace(t, "sessions", "--db", db).ok(t).stdout, "fix the build"); n != 2 {
			t.Fatalf("%d sessions titled \"fix the build\" after importing a copy, want 2", n)
		}
	})

	truncated := exported[:len(exported)/2]
	spoilt := strings.Replace(exported, `"parent": 2`, `"parent": 9`, 1)
	for _, c := range []struct {
		name, input string
		args        []string
		code        int
		want        string
	}{
		{"no file named", "", nil, exitUsage, "want FILE.json"},
		{"a missing file", "", []string{filepath.Join(t.TempDir(), "nope.json")}, exitError, "nope.json"},
		{"truncated", truncated, []string{"-"}, exitError, "ends early"},
		{"not JSON", "hello", []string{"-"}, exitError, "not a retrace export"},
		{"another document", `{"format":"something-else/1","session":{"id":"x"}}`, []string{"-"}, exitError, "something-else/1"},
		{"a parent that does not exist", spoilt, []string{"-"}, exitError, "parent v9"},
		{"an empty input", "", []string{"-"}, exitError, "ends early"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fresh := filepath.Join(t.TempDir(), "fresh.db")
			r := retraceIn(t, strings.NewReader(c.input), append([]string{"import", "--workspace", t.TempDir(), "--db", fresh}, c.args...)...)
			if r.code != c.code || !strings.Contains(r.stderr, c.want) {
				t.Fatalf("exit %d, stderr %q: want %d and %q", r.code, r.stderr, c.code, c.want)
			}
			if _, err := os.Stat(fresh); !os.IsNotExist(err) {
				t.Fatalf("a refused import made the database: %v", err)
			}
		})
	}
}

// A session continues with the model server it recorded, and sends the
// key there: an import whose session talks to a server that is not the
// person's, wherever it is (a private address takes the key as well), or
// reads the key from another variable, is refused unless they say they
// trust it. The demo takes no key, and is imported as it is.
func TestImportRefusesAForeignModelServer(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("OPENAI_BASE_URL", "")
	db, forked, _ := fixture(t)
	var ex storage.Exported
	if err := json.Unmarshal([]byte(retrace(t, "export", forked, "--db", db).ok(t).stdout), &ex); err != nil {
		t.Fatal(err)
	}
	ex.Session.Workspace = t.TempDir()
	i := slices.IndexFunc(ex.Checkpoints, func(r storage.Record) bool { return r.Data.Kind == state.UserMessage })
	if i < 0 {
		t.Fatal("the fixture has no user message")
	}
	for _, c := range []struct {
		ep      state.Endpoint
		refused string // what the refusal names; "" imports
	}{
		{state.Endpoint{BaseURL: "https://models.example.net/v1"}, "where you did not choose: to https://models.example.net/v1 (yours: https://api.openai.com/v1 with the key in $OPENAI_API_KEY)"},
		{state.Endpoint{BaseURL: "http://127.0.0.1:8080/v1"}, "to http://127.0.0.1:8080/v1"},
		{state.Endpoint{BaseURL: "http://192.168.1.50/v1"}, "to http://192.168.1.50/v1"},
		{state.Endpoint{BaseURL: "https://api.openai.com/v1", KeyEnv: "GITHUB_TOKEN"}, "choose: the key in $GITHUB_TOKEN"},
		{state.Endpoint{BaseURL: "https://api.openai.com/v1/"}, ""}, // the default, which the person's key is for
		{state.Endpoint{BaseURL: "https://api.openai.com/v1", KeyEnv: "OPENAI_API_KEY"}, ""},
		{state.Endpoint{BaseURL: demoEndpoint}, ""},
	} {
		ep := c.ep
		ep.Model = "m"
		ex.Checkpoints[i].Data.Endpoint = &ep
		b, err := json.Marshal(ex)
		if err != nil {
			t.Fatal(err)
		}
		fresh := filepath.Join(t.TempDir(), "fresh.db")
		r := retraceIn(t, bytes.NewReader(b), "import", "-", "--db", fresh)
		if c.refused == "" {
			r.ok(t)
			continue
		}
		if r.code != exitError || !strings.Contains(r.stderr, c.refused) || !strings.Contains(r.stderr, "--trust-endpoints") {
			t.Fatalf("%+v: exit %d, %s", c.ep, r.code, r.stderr)
		}
		if _, err := os.Stat(fresh); !os.IsNotExist(err) {
			t.Fatalf("a refused import made the database: %v", err)
		}
		retraceIn(t, bytes.NewReader(b), "import", "-", "--trust-endpoints", "--db", fresh).ok(t)

		// A database handed over is refused the same way by copy.
		into := filepath.Join(t.TempDir(), "into.db")
		r = retrace(t, "copy", "--from", fresh, "--to", into)
		if r.code != exitError || !strings.Contains(r.stderr, c.refused) {
			t.Fatalf("copy of %+v: exit %d, %s", c.ep, r.code, r.stderr)
		}
		retrace(t, "copy", "--from", fresh, "--to", into, "--trust-endpoints").ok(t)
	}
}
