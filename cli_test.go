package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// result is what one command line printed and returned.
type result struct {
	code           int
	stdout, stderr string
}

// retraceIn runs the command line with stdin, as a shell would.
func retraceIn(t *testing.T, stdin io.Reader, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, stdin, &out, &errOut)
	return result{code, out.String(), errOut.String()}
}

func retrace(t *testing.T, args ...string) result {
	t.Helper()
	return retraceIn(t, strings.NewReader(""), args...)
}

func (r result) ok(t *testing.T) result {
	t.Helper()
	if r.code != exitOK {
		t.Fatalf("exit %d, stderr: %s", r.code, r.stderr)
	}
	return r
}

// fixture writes a database with two sessions: "fix the build" has a fork
// (v1..v4 on branch 1, v5..v6 from v2), "other" has one turn. Text holds an
// escape sequence that must never reach a terminal raw.
func fixture(t *testing.T) (db, forked, other string) {
	t.Helper()
	db = filepath.Join(t.TempDir(), "retrace.db")
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	forked, other = fixtureIn(t, st)
	return db, forked, other
}

// fixtureIn writes fixture's sessions into st.
func fixtureIn(t *testing.T, st storage.Store) (forked, other string) {
	t.Helper()
	ctx := context.Background()
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	turn := func(s state.State, q, a string) state.State {
		cur := storage.NewCursor(st, s)
		for _, ev := range []state.Event{
			{Kind: state.UserMessage, At: at, Messages: []state.Message{{Role: state.RoleUser, Content: q}}},
			{Kind: state.Answered, At: at.Add(time.Second), Messages: []state.Message{{Role: state.RoleAssistant, Content: a}}},
		} {
			if _, err := cur.Commit(ctx, ev); err != nil {
				t.Fatal(err)
			}
		}
		at = at.Add(time.Minute)
		return cur.State()
	}
	a, err := st.Create(ctx, storage.NewSession{Title: "fix the build", Model: "gpt-test", Workspace: "/src/app", CreatedAt: at})
	if err != nil {
		t.Fatal(err)
	}
	s := turn(state.New(a.ID), "why does it fail?", "a missing import \x1b]0;pwned\x07")
	turn(s, "fix it", "fixed")
	if err := st.SetHead(ctx, a.ID, 2); err != nil {
		t.Fatal(err)
	}
	turn(s, "explain instead", "the import path changed")
	b, err := st.Create(ctx, storage.NewSession{Title: "other", CreatedAt: at})
	if err != nil {
		t.Fatal(err)
	}
	turn(state.New(b.ID), "hi", "hello")
	return a.ID, b.ID
}

func TestHelp(t *testing.T) {
	r := retrace(t, "help").ok(t)
	for _, cmd := range commands {
		if !strings.Contains(r.stdout, cmd.name) {
			t.Errorf("help does not list %s", cmd.name)
		}
		h := retrace(t, cmd.name, "--help").ok(t)
		if !strings.Contains(h.stdout, "usage: retrace "+cmd.name) || !strings.Contains(h.stdout, "-db") {
			t.Errorf("%s --help:\n%s", cmd.name, h.stdout)
		}
	}
}

func TestSessions(t *testing.T) {
	db, forked, other := fixture(t)
	r := retrace(t, "sessions", "--db", db).ok(t)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], other) || !strings.HasPrefix(lines[2], forked) {
		t.Fatalf("want the header, then %s (newer), then %s:\n%s", other, forked, r.stdout)
	}
	var list []storage.SessionInfo
	if err := json.Unmarshal([]byte(retrace(t, "sessions", "--json", "--db", db).ok(t).stdout), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[1].ID != forked || list[1].Versions != 6 || list[1].Head != 6 || list[1].Phase != state.Done {
		t.Fatalf("sessions --json: %+v", list)
	}

	empty := filepath.Join(t.TempDir(), "none.db")
	if r := retrace(t, "sessions", "--db", empty).ok(t); !strings.Contains(r.stdout, "no sessions") {
		t.Fatalf("empty: %q", r.stdout)
	}
	if r := retrace(t, "sessions", "--json", "--db", empty).ok(t); strings.TrimSpace(r.stdout) != "[]" {
		t.Fatalf("empty --json: %q", r.stdout)
	}
	if _, err := os.Stat(empty); err == nil {
		t.Fatal("listing sessions created a database file")
	}
}

func TestShow(t *testing.T) {
	db, forked, _ := fixture(t)
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := st.Head(context.Background(), forked)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()

	var got state.State
	out := retrace(t, "show", forked[:5], "--json", "--db", db).ok(t).stdout
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("show --json is not the head state:\n%s", out)
	}
	for _, field := range []string{`"session_id"`, `"parent_version"`, `"history"`, `"memory"`, `"current_goal"`, `"final_answer"`, `"error_message"`, `"usage"`, `"summary"`, `"iteration"`} {
		if !strings.Contains(out, field) {
			t.Errorf("show --json lacks %s", field)
		}
	}

	text := retrace(t, "show", forked, "--version", "2", "--db", db).ok(t).stdout
	for _, want := range []string{"v2 of 6", "phase     done", "why does it fail?", "a missing import ^[]0;pwned^G"} {
		if !strings.Contains(text, want) {
			t.Errorf("show --version 2 lacks %q:\n%s", want, text)
		}
	}
	if strings.ContainsRune(text, '\x1b') {
		t.Fatal("show printed a raw escape sequence")
	}
	if text := retrace(t, "show", forked, "--db", db).ok(t).stdout; !strings.Contains(text, "explain instead") || strings.Contains(text, "fix it") {
		t.Fatalf("the head is on the fork, without the old branch's turn:\n%s", text)
	}
}

func TestLogRollbackAndBranches(t *testing.T) {
	db, forked, _ := fixture(t)
	var tree storage.Tree
	if err := json.Unmarshal([]byte(retrace(t, "log", forked, "--json", "--db", db).ok(t).stdout), &tree); err != nil {
		t.Fatal(err)
	}
	if tree.Head != 6 || len(tree.Nodes) != 6 || len(tree.Branches) != 2 || tree.Branches[1].Fork != 2 {
		t.Fatalf("log --json: %+v", tree)
	}
	text := retrace(t, "log", forked, "--db", db).ok(t).stdout
	for _, want := range []string{"head v6, 6 versions, 2 branches", "v1..v4  from the root", "v5..v6  from v2, 2 versions  (head)"} {
		if !strings.Contains(text, want) {
			t.Errorf("log lacks %q:\n%s", want, text)
		}
	}

	r := retrace(t, "rollback", forked, "v4", "--db", db).ok(t)
	if !strings.Contains(r.stdout, "from v6 to v4") {
		t.Fatalf("rollback said %q", r.stdout)
	}
	if text := retrace(t, "show", forked, "--db", db).ok(t).stdout; !strings.Contains(text, "fix it") {
		t.Fatalf("after rollback to v4 the head shows the first branch:\n%s", text)
	}
	if text := retrace(t, "log", forked, "--db", db).ok(t).stdout; !strings.Contains(text, "v1..v4  from the root, 4 versions  (head)") {
		t.Fatalf("log after rollback:\n%s", text)
	}
}

func TestExport(t *testing.T) {
	db, forked, _ := fixture(t)
	var ex struct {
		Format string `json:"format"`
		storage.Export
	}
	if err := json.Unmarshal([]byte(retrace(t, "export", forked, "--db", db).ok(t).stdout), &ex); err != nil {
		t.Fatal(err)
	}
	if ex.Format != "retrace-export/1" || len(ex.Checkpoints) != 6 || ex.Checkpoints[4].Parent != 2 || ex.Checkpoints[0].Data.Messages[0].Content != "why does it fail?" {
		t.Fatalf("export json: %+v", ex)
	}
	md := retrace(t, "export", forked, "--format", "md", "--db", db).ok(t).stdout
	for _, want := range []string{"# fix the build", "v6 of 6 (head)", "### User", "explain instead", "the import path changed"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.ContainsRune(md, '\x1b') {
		t.Fatal("markdown export holds a raw escape")
	}
}

func TestRemove(t *testing.T) {
	db, forked, other := fixture(t)
	if r := retrace(t, "rm", other, "--db", db).ok(t); !strings.Contains(r.stdout, "deleted session "+other) {
		t.Fatalf("rm said %q", r.stdout)
	}
	list := retrace(t, "sessions", "--db", db).ok(t).stdout
	if strings.Contains(list, other) || !strings.Contains(list, forked) {
		t.Fatalf("after rm:\n%s", list)
	}
}

func TestBench(t *testing.T) {
	var r map[string]float64
	if err := json.Unmarshal([]byte(retrace(t, "bench", "--turns", "20", "--json").ok(t).stdout), &r); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"turns", "checkpoints", "total_ms", "first100_ms_per_turn", "last100_ms_per_turn", "db_bytes", "load_latest_ms", "load_early_ms", "history_ms"} {
		if r[k] <= 0 {
			t.Errorf("bench --json: %s = %v", k, r[k])
		}
	}
	kept := filepath.Join(t.TempDir(), "b.db")
	retrace(t, "bench", "--turns", "5", "--db", kept).ok(t)
	if err := boltstore.Verify(context.Background(), kept); err != nil {
		t.Fatalf("the kept bench database: %v", err)
	}
	if r := retrace(t, "bench", "--turns", "5", "--db", kept); r.code != exitError || !strings.Contains(r.stderr, "exists") {
		t.Fatalf("bench over an existing file: %+v", r)
	}
}

// Bad input: one line on stderr saying what and where, a non-zero exit,
// and the database exactly as it was.
func TestBadInput(t *testing.T) {
	db, forked, other := fixture(t)
	dir := t.TempDir()
	damaged := filepath.Join(dir, "damaged.db")
	good, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(damaged, good[:len(good)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("not a database at all, just notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A database whose lock directory cannot be made: a file is in the way.
	blocked := filepath.Join(dir, "blocked.db")
	if err := os.WriteFile(blocked, good, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(blocked+".locks", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// Two ids sharing a first character, for an ambiguous prefix.
	prefix, candidates := sharedPrefix(t, db, forked, other)

	cases := []struct {
		name string
		args []string
		code int
		want []string // what the line must mention
		file string   // a file that must not change
	}{
		{"damaged file", []string{"sessions", "--db", damaged}, exitError, []string{damaged, "damaged"}, damaged},
		{"damaged file, write", []string{"rollback", forked, "1", "--db", damaged}, exitError, []string{damaged}, damaged},
		{"not a database", []string{"show", forked, "--db", text}, exitError, []string{text, "not a retrace database"}, text},
		{"a directory as --db", []string{"sessions", "--db", dir}, exitError, []string{dir, "directory"}, ""},
		{"unwritable location", []string{"rollback", forked, "1", "--db", blocked}, exitError, []string{blocked}, blocked},
		{"unwritable bench location", []string{"bench", "--turns", "1", "--db", "/sys/retrace-test/b.db"}, exitError, []string{"/sys/retrace-test"}, ""},
		{"unknown session", []string{"show", "ffffffffffff", "--db", db}, exitError, []string{`"ffffffffffff"`, db, "retrace sessions"}, db},
		{"unknown session, rm", []string{"rm", "nope", "--db", db}, exitError, []string{`"nope"`}, db},
		{"ambiguous prefix", []string{"show", prefix, "--db", db}, exitError, append([]string{"ambiguous"}, candidates...), db},
		{"version out of range", []string{"show", forked, "--version", "99", "--db", db}, exitError, []string{"no version 99", "0 to 6"}, db},
		{"rollback out of range", []string{"rollback", forked, "7", "--db", db}, exitError, []string{"no version 7"}, db},
		{"version not a number", []string{"rollback", forked, "latest", "--db", db}, exitUsage, []string{`"latest"`}, db},
		{"negative version", []string{"show", forked, "--version", "-1", "--db", db}, exitUsage, []string{`"-1"`}, db},
		{"missing argument", []string{"show", "--db", db}, exitUsage, []string{"ID"}, db},
		{"unknown flag", []string{"log", forked, "--graph", "--db", db}, exitUsage, []string{"-graph"}, db},
		{"unknown command", []string{"resume"}, exitUsage, []string{`"resume"`}, ""},
		{"unknown export format", []string{"export", forked, "--format", "pdf", "--db", db}, exitUsage, []string{`"pdf"`}, db},
		{"empty argument", []string{"show", "", "--db", db}, exitUsage, []string{"argument 1 is empty", "ID"}, db},
		{"unknown theme", []string{"--theme", "purple", "--db", db}, exitUsage, []string{`"purple"`, "dark"}, db},
		{"unknown flag of the interface", []string{"--bogus", "--db", db}, exitUsage, []string{"retrace: flag provided but not defined: -bogus; see 'retrace --help'"}, db},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var before [32]byte
			if tc.file != "" {
				before = sum(t, tc.file)
			}
			r := retrace(t, tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", r.code, tc.code, r.stderr)
			}
			if strings.Count(r.stderr, "\n") != 1 || !strings.HasSuffix(r.stderr, "\n") {
				t.Fatalf("want exactly one line on stderr, got %q", r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("%q does not mention %q", r.stderr, w)
				}
			}
			if strings.Contains(r.stderr, "retrace :") || strings.Contains(r.stderr, "  ") {
				t.Errorf("%q has a stray space", r.stderr)
			}
			if tc.file != "" && sum(t, tc.file) != before {
				t.Fatalf("%s changed", tc.file)
			}
		})
	}
}

// sharedPrefix makes sessions until two share a first character and returns
// it with the ids that share it.
func sharedPrefix(t *testing.T, db string, ids ...string) (string, []string) {
	t.Helper()
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	byFirst := map[byte][]string{}
	for _, id := range ids {
		byFirst[id[0]] = append(byFirst[id[0]], id)
	}
	for {
		for first, group := range byFirst {
			if len(group) > 1 {
				return string(first), group
			}
		}
		info, err := st.Create(context.Background(), storage.NewSession{Title: fmt.Sprint("filler ", len(byFirst))})
		if err != nil {
			t.Fatal(err)
		}
		byFirst[info.ID[0]] = append(byFirst[info.ID[0]], info.ID)
	}
}

func sum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func TestRecoverCommand(t *testing.T) {
	db, forked, other := fixture(t)
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte("explain instead"))
	b[i] ^= 0x20
	if err := os.WriteFile(db, b, 0o600); err != nil {
		t.Fatal(err)
	}
	r := retrace(t, "show", forked, "--db", db)
	if r.code != exitError || !strings.Contains(r.stderr, "retrace recover") {
		t.Fatalf("a damaged record should point to recover: %q", r.stderr)
	}
	out := filepath.Join(t.TempDir(), "recovered.db")
	r = retrace(t, "recover", out, "--db", db).ok(t)
	if !strings.Contains(r.stdout, "recovered 2 sessions") || !strings.Contains(r.stdout, "session "+forked+" lost v5, v6") {
		t.Fatalf("recover said:\n%s", r.stdout)
	}
	retrace(t, "show", other, "--db", out).ok(t)
	if s := retrace(t, "show", forked, "--db", out).ok(t).stdout; !strings.Contains(s, "fix it") {
		t.Fatalf("the damaged session continues from its newest intact version:\n%s", s)
	}
}

// show says which tools the person approved for the rest of the session,
// because the agent will use them without asking.
func TestShowNamesToolsApprovedForTheSession(t *testing.T) {
	s := state.New("s1")
	var out bytes.Buffer
	renderState(&out, storage.SessionInfo{ID: "s1"}, s, nil, showOptions{})
	if strings.Contains(out.String(), "without asking") {
		t.Fatalf("nothing approved, yet:\n%s", out.String())
	}
	s.Memory.AllowedTools = []string{"run_command", "write_file"}
	out.Reset()
	renderState(&out, storage.SessionInfo{ID: "s1"}, s, nil, showOptions{})
	if !strings.Contains(out.String(), "runs without asking (approved for the session): run_command, write_file") {
		t.Fatalf("show:\n%s", out.String())
	}
}

// Words that name no command are a prompt for a new session in the
// interface; a near miss of a command, with the arguments that command
// takes, is a typo and gets the command suggested, not sent to a model.
func TestPromptOrCommand(t *testing.T) {
	db := filepath.Join(t.TempDir(), "retrace.db")
	prompt := []struct {
		name string
		args []string
		want string // the prompt read
	}{
		{"one quoted argument", []string{"fix the tests"}, "fix the tests"},
		{"several words", []string{"fix", "the", "tests"}, "fix the tests"},
		{"flags after the words", []string{"fix", "the", "tests", "--theme", "dark"}, "fix the tests"},
		{"--demo first", []string{"--demo", "say hello"}, "say hello"},
		{"a near miss with more words than the command takes", []string{"how", "does", "the", "store", "work"}, "how does the store work"},
		{"a near miss in a quoted prompt", []string{"shwo abc"}, "shwo abc"},
		{"a prompt with dashes, after --", []string{"--", "-v", "and", "-x", "mean", "what?"}, "-v and -x mean what?"},
	}
	for _, tc := range prompt {
		t.Run(tc.name, func(t *testing.T) {
			// The test has no terminal: the interface refuses to start,
			// after the command line was read as a prompt.
			args := append(slices.Clone(tc.args), "--db", db)
			if slices.Contains(tc.args, "--") { // after it, everything is the prompt
				args = append([]string{"--db", db}, tc.args...)
			}
			r := retrace(t, args...)
			if r.code != exitError || !strings.Contains(r.stderr, "needs a terminal") ||
				!strings.Contains(r.stderr, "retrace run "+shellQuote(tc.want)+"\n") {
				t.Fatalf("exit %d, stderr %q; want the words taken for the prompt %q", r.code, r.stderr, tc.want)
			}
		})
	}
	refused := []struct {
		name string
		args []string
		want []string
	}{
		{"a typo of a command with its argument", []string{"shwo", "abc"}, []string{`unknown command "shwo"`, "did you mean 'retrace show'?", "retrace -- shwo abc"}},
		{"a typo of a command alone", []string{"sesions"}, []string{`"sesions"`, "'retrace sessions'"}},
		{"a transposed command", []string{"exprot", "abc"}, []string{"'retrace export'"}},
		{"resume", []string{"resume", "abc"}, []string{`"resume"`, "retrace -r ID"}},
		{"continue", []string{"continue"}, []string{`"continue"`, "retrace -c"}},
		{"an empty prompt", []string{" "}, []string{"the prompt is empty"}},
		{"a prompt and -c", []string{"-c", "go on"}, []string{"-c", "new session"}},
		{"a prompt and -r", []string{"more", "-r", "abc"}, []string{"-r", "new session"}},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			r := retrace(t, append(tc.args, "--db", db)...)
			if r.code != exitUsage || strings.Count(r.stderr, "\n") != 1 {
				t.Fatalf("exit %d, stderr %q; want a usage error in one line", r.code, r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("%q does not mention %q", r.stderr, w)
				}
			}
		})
	}
	if _, err := os.Stat(db); err == nil {
		t.Fatal("a refused command line created the database")
	}
}

// The quit hint names a command that works from where retrace was run:
// `go run .` builds into the Go build cache or a go-build temporary
// directory, where no `retrace` on PATH is the binary that ran.
func TestHowToRunAgain(t *testing.T) {
	for _, tc := range []struct {
		exe, arg0, gocache, want string
	}{
		{"/tmp/go-build3052547094/b001/exe/retrace", "/tmp/go-build3052547094/b001/exe/retrace", "", "go run ."},
		{"/root/.cache/go-build/d2/d2e3b8bd-d/retrace", "/root/.cache/go-build/d2/d2e3b8bd-d/retrace", "", "go run ."},
		{"/var/gocache/d2/d2e3b8bd-d/retrace", "/var/gocache/d2/d2e3b8bd-d/retrace", "/var/gocache", "go run ."},
		{"/usr/local/bin/retrace", "retrace", "", "retrace"},
		{"/home/dev/src/retrace/retrace", "./retrace", "", "./retrace"},
		{"/opt/my tools/retrace", "/opt/my tools/retrace", "", "'/opt/my tools/retrace'"},
		{"/opt/it's/retrace", "/opt/it's/retrace", "", `'/opt/it'\''s/retrace'`},
		{"", "", "", "retrace"},
	} {
		if got := runAgain(tc.exe, tc.arg0, tc.gocache); got != tc.want {
			t.Errorf("runAgain(%q, %q, %q) = %q, want %q", tc.exe, tc.arg0, tc.gocache, got, tc.want)
		}
	}
}

// The farewell says how to resume, spelled as retrace was run.
func TestFarewellNamesTheWayBack(t *testing.T) {
	db, forked, _ := fixture(t)
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out bytes.Buffer
	c := &cli{stdout: &out, self: "go run ."}
	if err := farewell(context.Background(), c, st, forked, nil); err != nil {
		t.Fatal(err)
	}
	if want := "resume it with: go run . -r " + forked[:8] + "\n"; !strings.HasSuffix(out.String(), want) {
		t.Fatalf("farewell %q lacks %q", out.String(), want)
	}
}
