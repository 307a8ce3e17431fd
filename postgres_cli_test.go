package main

import (
	"context"
	"encoding/json"
	"fmt"
	neturl "net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"retrace/storage"
	"retrace/storage/boltstore"
	"retrace/storage/pgstore"
	"retrace/storage/pgstore/pgtest"
)

// Every command that reads or writes sessions works the same on a
// PostgreSQL database as on a file: the same sessions, written into both,
// read back alike through sessions, show (and --json), log and both
// exports, and take the same writes.
func TestCommandsOnPostgres(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "retrace.db")
	bolt, err := boltstore.Open(file, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fForked, fOther := fixtureIn(t, bolt)
	bolt.Close()
	pg, err := pgstore.Open(ctx, url, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pForked, pOther := fixtureIn(t, pg)
	pg.Close()

	// Ids are random: each side's are named alike before comparing. The
	// markdown export says when it was made, to the second: each side's
	// time is checked to be one, then named alike too.
	same := func(out, forked, other string) string {
		out = exportedAt.ReplaceAllString(out, "- **Exported:** TIME\n")
		return strings.NewReplacer(forked, "FORKED", other, "OTHER").Replace(out)
	}
	for _, args := range [][]string{
		{"sessions"},
		{"sessions", "--json"},
		{"show", "%F"},
		{"show", "%F", "--json"},
		{"show", "%F", "--version", "3"},
		{"log", "%F"},
		{"export", "%F"},
		{"export", "%F", "--format", "md"},
		{"show", "%O"},
	} {
		run := func(db, forked, other string) string {
			a := []string{}
			for _, x := range args {
				a = append(a, strings.NewReplacer("%F", forked, "%O", other).Replace(x))
			}
			return same(retrace(t, append(a, "--db", db)...).ok(t).stdout, forked, other)
		}
		fromFile, fromPG := run(file, fForked, fOther), run(url, pForked, pOther)
		if fromFile != fromPG {
			t.Errorf("retrace %s differs:\nfile:\n%s\npostgres:\n%s", strings.Join(args, " "), fromFile, fromPG)
		}
		if md := slices.Contains(args, "md"); md != strings.Contains(fromFile, "- **Exported:** TIME\n") {
			t.Errorf("retrace %s: the export's time is not where it belongs:\n%s", strings.Join(args, " "), fromFile)
		}
	}

	// verify checks the database whole, as it does a file.
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	password, _ := u.User.Password()
	if out := retrace(t, "verify", "--db", url).ok(t).stdout; !strings.Contains(out, "is sound: 2 sessions, 8 versions") || password == "" || strings.Contains(out, password) {
		t.Errorf("verify of the database:\n%s", out)
	}

	// Writes: a rollback, then the session read back at its new head.
	retrace(t, "rollback", pForked, "1", "--db", url).ok(t)
	var list []storage.SessionInfo
	if err := json.Unmarshal([]byte(retrace(t, "sessions", "--json", "--db", url).ok(t).stdout), &list); err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		if s.ID == pForked && (s.Head != 1 || s.Versions != 6) {
			t.Errorf("after rollback to v1: head v%d of %d versions", s.Head, s.Versions)
		}
	}
	retrace(t, "rm", pOther, "--db", url).ok(t)
	if r := retrace(t, "show", pOther, "--db", url); r.code == exitOK || !strings.Contains(r.stderr, "no session") {
		t.Errorf("show of a removed session: exit %d, %s", r.code, r.stderr)
	}
}

// exportedAt is the markdown export's line that says when it was made.
var exportedAt = regexp.MustCompile(`- \*\*Exported:\*\* \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)\n`)

// RETRACE_DB and the config file's database name the database when --db
// does not, in that order.
func TestDatabaseChosenByEnvironmentAndConfig(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	pg, err := pgstore.Open(ctx, url, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	forked, _ := fixtureIn(t, pg)
	pg.Close()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	t.Setenv("RETRACE_DB", url)
	if out := retrace(t, "sessions").ok(t).stdout; !strings.Contains(out, forked) {
		t.Errorf("RETRACE_DB: sessions lists\n%s", out)
	}
	t.Setenv("RETRACE_DB", "")
	if out := retrace(t, "sessions").ok(t).stdout; strings.Contains(out, forked) {
		t.Errorf("without RETRACE_DB, the default file lists\n%s", out)
	}
	cfg := filepath.Join(home, ".config", "retrace", "config.toml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("database = \""+url+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := retrace(t, "sessions").ok(t).stdout; !strings.Contains(out, forked) {
		t.Errorf("config database: sessions lists\n%s", out)
	}
	file := filepath.Join(home, "other.db")
	if out := retrace(t, "sessions", "--db", file).ok(t).stdout; strings.Contains(out, forked) {
		t.Errorf("--db beats the config, yet sessions lists\n%s", out)
	}
}

// The commands that work on the file itself (recover, and bench
// --sessions) refuse a PostgreSQL database in one line that names it
// without its password, and change nothing.
func TestFileCommandsRefusePostgres(t *testing.T) {
	url := "postgres://retrace:hunter2-secret@db.example:5432/sessions"
	for _, args := range [][]string{
		{"recover", filepath.Join(t.TempDir(), "new.db")},
		{"bench", "--sessions", "2", "--turns", "10"},
	} {
		r := retrace(t, append(args, "--db", url)...)
		if r.code == exitOK || strings.Contains(r.stderr+r.stdout, "hunter2") {
			t.Errorf("retrace %s on a URL: exit %d\n%s%s", args[0], r.code, r.stdout, r.stderr)
		}
		if args[0] != "bench" && !strings.Contains(r.stderr, "postgres://retrace@db.example:5432/sessions is a PostgreSQL database") {
			t.Errorf("retrace %s on a URL says:\n%s", args[0], r.stderr)
		}
	}
}

// copy round-trips a file of the corpus (sessions with branches, tool
// calls and file contents) to PostgreSQL and back: every session reads
// back byte-identical from both, but for the imported checkpoint each
// copy closes it with, and a second copy writes over nothing.
func TestCopyRoundTripsThroughPostgres(t *testing.T) {
	url := pgtest.NewDatabase(t)
	dir := t.TempDir()
	orig, back := filepath.Join(dir, "orig.db"), filepath.Join(dir, "back.db")
	corpus, err := os.ReadFile(filepath.Join("storage", "boltstore", "testdata", "schema6.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(orig, corpus, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := boltstore.Open(orig, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fixtureIn(t, st)
	list, err := st.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if len(list) != 6 {
		t.Fatalf("the corpus holds %d sessions, want 6", len(list))
	}

	ws := t.TempDir()
	out := retrace(t, "copy", "--from", orig, "--to", url, "--workspace", ws, "--memories", "--everywhere").ok(t).stdout
	if !strings.Contains(out, "6 sessions copied") || !strings.Contains(out, "copied the memory log: 5 entries") {
		t.Errorf("copy to PostgreSQL said:\n%s", out)
	}
	retrace(t, "copy", "--from", url, "--to", back, "--memories", "--everywhere").ok(t)
	// The memory log goes with a whole copy, entry for entry.
	want := retrace(t, "memory", "log", "--json", "--db", orig).ok(t).stdout
	for _, db := range []string{url, back} {
		if got := retrace(t, "memory", "log", "--json", "--db", db).ok(t).stdout; got != want || !strings.Contains(got, `"restored"`) {
			t.Errorf("the memory log in %s differs from the original:\n%s\nwant\n%s", locationName(db), got, want)
		}
	}
	for _, s := range list {
		id, head := s.ID, fmt.Sprint(s.Head)
		for _, args := range [][]string{{"show", id, "--version", "1", "--json"}, {"show", id, "--version", head, "--json"}} {
			want := retrace(t, append(args, "--db", orig)...).ok(t).stdout
			for _, db := range []string{url, back} {
				if got := retrace(t, append(args, "--db", db)...).ok(t).stdout; got != want {
					t.Errorf("retrace %s --db %s differs from the original:\n%s\nwant\n%s", strings.Join(args, " "), locationName(db), got, want)
				}
			}
		}
		exported := retrace(t, "export", id, "--db", orig).ok(t).stdout
		for _, db := range []string{url, back} {
			got := retrace(t, "export", id, "--db", db).ok(t).stdout
			if want := arrivedAs(t, exported, got, ws); got != want {
				t.Errorf("retrace export %s --db %s is not the original's with its arrival:\n%s\nwant\n%s", id, locationName(db), got, want)
			}
			exported = got
		}
	}
	ids := []string{list[0].ID, list[1].ID}

	// Again: the target holds every session, so nothing is copied and
	// nothing changes; the exit says so.
	before := retrace(t, "export", ids[0], "--db", url).ok(t).stdout
	r := retrace(t, "copy", "--from", orig, "--to", url, "--workspace", ws, ids[0][:6], ids[1])
	if r.code == exitOK || !strings.Contains(r.stderr, "2 of 2 sessions not copied") || !strings.Contains(r.stderr, "holds a session "+ids[0]+" already") {
		t.Errorf("a second copy: exit %d\n%s", r.code, r.stderr)
	}
	if after := retrace(t, "export", ids[0], "--db", url).ok(t).stdout; after != before {
		t.Error("a refused copy changed the session")
	}
}

// bench --db URL measures a scratch database made on that server, and
// drops it: the database the URL names is not touched.
func TestBenchOnPostgres(t *testing.T) {
	url := pgtest.NewDatabase(t)
	before := retrace(t, "sessions", "--json", "--db", url).ok(t).stdout
	out := retrace(t, "bench", "--turns", "20", "--json", "--db", url).ok(t).stdout
	var r benchReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if r.Checkpoints != 40 || r.CheckpointP50MS <= 0 || r.CheckpointP99MS < r.CheckpointP50MS || r.DBBytes < r.TextBytes || r.LoadLatestMS <= 0 || r.TaskCheckpoints != 0 {
		t.Errorf("bench on PostgreSQL: %+v", r)
	}
	if after := retrace(t, "sessions", "--json", "--db", url).ok(t).stdout; after != before {
		t.Errorf("bench changed the database it was given:\n%s", after)
	}
	var left int
	if err := pgtest.Connect(t, url).QueryRow(context.Background(), "SELECT count(*) FROM pg_database WHERE datname LIKE 'retrace\\_bench\\_%'").Scan(&left); err != nil || left != 0 {
		t.Errorf("scratch databases left: %d (%v)", left, err)
	}
}

// gc works on a database as on a file: a dry run says what would go and
// changes nothing; the run removes an abandoned branch, whose versions are
// then named as removed; the rest reads back as before.
func TestGCOnPostgres(t *testing.T) {
	url := pgtest.NewDatabase(t)
	pg, err := pgstore.Open(context.Background(), url, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	forked, other := fixtureIn(t, pg)
	pg.Close()
	showOther := retrace(t, "show", other, "--json", "--db", url).ok(t).stdout
	dry := retrace(t, "gc", "--branches", "--dry-run", "--db", url).ok(t).stdout
	if !strings.Contains(dry, "would remove 1 abandoned branch") || !strings.Contains(dry, "nothing was changed") {
		t.Errorf("gc --dry-run on PostgreSQL:\n%s", dry)
	}
	retrace(t, "show", forked, "--version", "3", "--db", url).ok(t)
	out := retrace(t, "gc", "--branches", "--db", url).ok(t).stdout
	if !strings.Contains(out, "removed 1 abandoned branch") || !strings.Contains(out, "PostgreSQL reuses the space") {
		t.Errorf("gc on PostgreSQL:\n%s", out)
	}
	if r := retrace(t, "show", forked, "--version", "3", "--db", url); r.code == exitOK || !strings.Contains(r.stderr, "removed") {
		t.Errorf("v3 after gc: exit %d\n%s", r.code, r.stderr)
	}
	if got := retrace(t, "show", other, "--json", "--db", url).ok(t).stdout; got != showOther {
		t.Error("a session gc did not touch reads differently")
	}
	retrace(t, "verify", "--db", url).ok(t)
	if out := retrace(t, "compact", "--db", url).ok(t).stdout; !strings.Contains(out, "compacted postgres://") {
		t.Errorf("compact on PostgreSQL:\n%s", out)
	}
	if got := retrace(t, "show", other, "--json", "--db", url).ok(t).stdout; got != showOther {
		t.Error("a session reads differently after compact")
	}
}

// A URL of another kind is refused, not taken for a path: nothing is made.
func TestUnknownURLSchemeIsRefused(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, db := range []string{"postgress://me@db/x", "mysql://me@db/x"} {
		r := retrace(t, "sessions", "--db", db)
		if r.code != exitUsage || !strings.Contains(r.stderr, "keeps sessions in a file (a path) or in PostgreSQL") {
			t.Errorf("--db %s: exit %d\n%s", db, r.code, r.stderr)
		}
	}
	if r := retrace(t, "copy", "--to", "postgress://me@db/x"); r.code != exitUsage || !strings.Contains(r.stderr, "--to names a postgress:// URL") {
		t.Errorf("copy --to of another kind: exit %d\n%s", r.code, r.stderr)
	}
	t.Setenv("RETRACE_DB", "sqlite://x.db")
	if r := retrace(t, "sessions"); r.code != exitUsage || !strings.Contains(r.stderr, "RETRACE_DB names a sqlite:// URL") {
		t.Errorf("RETRACE_DB of another kind: exit %d\n%s", r.code, r.stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("made %v", entries)
	}
}
