package instructions_test

import (
	"encoding/base64"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"retrace/agent/instructions"
	"retrace/agent/tokens"
)

// words counts a text's tokens as one a word: enough to hold the cap to.
func words(s string) int { return len(strings.Fields(s)) }

func write(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func paths(in instructions.Instructions) []string {
	var out []string
	for _, f := range in.Files {
		out = append(out, f.Path)
	}
	return out
}

// From the person's own file, then the repository's root down to the
// workspace; CLAUDE.md where a directory has no AGENTS.md; nothing above
// the repository, and nothing from a directory with neither.
func TestReadFindsTheFilesUpToTheRepository(t *testing.T) {
	top := t.TempDir()
	repo := filepath.Join(top, "repo")
	ws := filepath.Join(repo, "services", "api")
	user := filepath.Join(top, "config", "retrace")
	write(t, filepath.Join(top, "AGENTS.md"), "above the repository: never read")
	write(t, filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(repo, "AGENTS.md"), "Run tests with make check.")
	write(t, filepath.Join(repo, "CLAUDE.md"), "Claude's file, where AGENTS.md is: not read")
	write(t, filepath.Join(repo, "services", "CLAUDE.md"), "Services talk over gRPC.")
	write(t, filepath.Join(ws, "AGENTS.md"), "The API is versioned under /v2.")
	write(t, filepath.Join(user, "AGENTS.md"), "Answer briefly.")

	in, err := instructions.Read(instructions.Options{Workspace: ws, UserDir: user, Count: words})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		filepath.Join(user, "AGENTS.md"),
		filepath.Join(repo, "AGENTS.md"),
		filepath.Join(repo, "services", "CLAUDE.md"),
		filepath.Join(ws, "AGENTS.md"),
	}
	if got := paths(in); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("read %q, want %q", got, want)
	}
	prompt := in.Prompt()
	for i, text := range []string{"Answer briefly.", "Run tests with make check.", "Services talk over gRPC.", "The API is versioned under /v2."} {
		if !strings.Contains(prompt, "--- "+want[i]+" ---\n"+text) {
			t.Errorf("the prompt does not hold %s under its path:\n%s", text, prompt)
		}
	}
	if strings.Contains(prompt, "never read") || strings.Contains(prompt, "not read") {
		t.Errorf("the prompt holds a file it should not:\n%s", prompt)
	}
	for _, f := range in.Recorded() {
		if f.Tokens == 0 || f.Truncated {
			t.Errorf("%s recorded as %+v", f.Path, f)
		}
	}
}

// Without a repository, the workspace's own file only.
func TestReadWithoutARepository(t *testing.T) {
	top := t.TempDir()
	ws := filepath.Join(top, "scratch")
	write(t, filepath.Join(top, "AGENTS.md"), "a parent's")
	write(t, filepath.Join(ws, "AGENTS.md"), "the workspace's")
	in, err := instructions.Read(instructions.Options{Workspace: ws, Count: words})
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(in); len(got) != 1 || got[0] != filepath.Join(ws, "AGENTS.md") {
		t.Fatalf("read %q", got)
	}
	none, err := instructions.Read(instructions.Options{Workspace: t.TempDir(), Count: words})
	if err != nil || len(none.Files) != 0 || none.Prompt() != "" {
		t.Fatalf("a workspace with no files: %+v, %v", none, err)
	}
}

// Over the cap, each file has an equal share of it and a short one
// leaves the rest to the others: the short file stays whole, the long
// ones are cut at a line, say so, and are recorded as cut. The whole
// stays within the cap, and a share too small for any text leaves a
// file out, saying so.
func TestReadCutsToTheCap(t *testing.T) {
	top := t.TempDir()
	repo := filepath.Join(top, "repo")
	ws := filepath.Join(repo, "app")
	write(t, filepath.Join(repo, ".git", "HEAD"), "x")
	write(t, filepath.Join(repo, "AGENTS.md"), strings.Repeat("a rule of the repository\n", 40)) // 200 words
	write(t, filepath.Join(ws, "AGENTS.md"), strings.Repeat("app rule\n", 30))                   // 60 words
	user := filepath.Join(top, "user")
	write(t, filepath.Join(user, "AGENTS.md"), "the person's own")

	in, err := instructions.Read(instructions.Options{Workspace: ws, UserDir: user, Cap: 100, Count: words})
	if err != nil {
		t.Fatal(err)
	}
	rec := in.Recorded()
	if len(rec) != 3 || rec[0].Path != filepath.Join(user, "AGENTS.md") || rec[0].Truncated || rec[0].Tokens != 3 {
		t.Fatalf("recorded %+v", rec)
	}
	// 97 left for two: 48 and 49, each cut.
	for i, f := range rec[1:] {
		if !f.Truncated || f.Tokens > 49 || f.Tokens < 40 {
			t.Fatalf("file %d recorded as %+v", i+2, f)
		}
		text := in.Files[i+1].Text
		if !strings.HasSuffix(text, "\n[… cut here: the rest did not fit the cap on instructions]") || strings.Count(text, "\n[…") != 1 {
			t.Fatalf("cut as %q", text)
		}
	}
	total := 0
	for _, f := range in.Files {
		total += words(f.Text)
	}
	if total > 100 {
		t.Fatalf("%d tokens of instructions over a cap of 100", total)
	}

	// A cap of 14: the short file takes 3, and the 5 and 11 left for the
	// others are too few for any text once the note that it was cut
	// (11 words) is counted.
	in, err = instructions.Read(instructions.Options{Workspace: ws, UserDir: user, Cap: 14, Count: words})
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(in); len(got) != 1 || got[0] != filepath.Join(user, "AGENTS.md") || len(in.Skipped) != 2 || !strings.Contains(in.Skipped[0], "left out") {
		t.Fatalf("with a cap of 14, read %q, skipped %q", got, in.Skipped)
	}
}

// A file that is not text, or not a file, is passed over and named.
func TestReadPassesOverWhatIsNotText(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "AGENTS.md"), "binary\x00data")
	in, err := instructions.Read(instructions.Options{Workspace: ws, Count: words})
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Files) != 0 || len(in.Skipped) != 1 || !strings.Contains(in.Skipped[0], "not text") {
		t.Fatalf("%+v", in)
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "AGENTS.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	in, err = instructions.Read(instructions.Options{Workspace: dir, Count: words})
	if err != nil || len(in.Files) != 0 || len(in.Skipped) != 1 || !strings.Contains(in.Skipped[0], "not a regular file") {
		t.Fatalf("%+v, %v", in, err)
	}
	// A FIFO is refused, not waited on for a writer.
	fifo := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(fifo, "AGENTS.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err = instructions.Read(instructions.Options{Workspace: fifo, Count: words})
	if err != nil || len(in.Files) != 0 || len(in.Skipped) != 1 || !strings.Contains(in.Skipped[0], "not a regular file") {
		t.Fatalf("a FIFO: %+v, %v", in, err)
	}
}

func link(t *testing.T, target, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

// A repository may link its files anywhere, and is cloned by a person
// with secrets: a file whose links lead out of the repository is not
// read, whether the link is relative or absolute, the file's or a
// directory's on the way, and says where it leads. Links that stay
// inside are followed, and so is the person's own file's, wherever it
// leads: it is theirs (a dotfiles repository, say), not a repository's.
func TestReadRefusesLinksOutOfTheTree(t *testing.T) {
	top := t.TempDir()
	repo := filepath.Join(top, "repo")
	ws := filepath.Join(repo, "a", "b", "c")
	user := filepath.Join(top, "config", "retrace")
	netrc := filepath.Join(top, "netrc")
	write(t, netrc, "machine example.com password hunter2")
	write(t, filepath.Join(top, "config", "config.toml"), "database = \"postgres://me:swordfish@db\"")
	write(t, filepath.Join(repo, ".git", "HEAD"), "x")
	link(t, "../netrc", filepath.Join(repo, "AGENTS.md"))
	write(t, filepath.Join(repo, "CLAUDE.md"), "Claude's file stands in.")
	link(t, netrc, filepath.Join(repo, "a", "AGENTS.md"))
	write(t, filepath.Join(repo, "docs", "b.md"), "Linked from b, inside.")
	link(t, "../../docs/b.md", filepath.Join(repo, "a", "b", "AGENTS.md"))
	write(t, filepath.Join(repo, "docs", "c.md"), "Linked from c by its full path, inside.")
	link(t, filepath.Join(repo, "docs", "c.md"), filepath.Join(ws, "AGENTS.md"))
	write(t, filepath.Join(top, "dotfiles", "retrace.md"), "Answer briefly, from my dotfiles.")
	link(t, "../../dotfiles/retrace.md", filepath.Join(user, "AGENTS.md"))

	in, err := instructions.Read(instructions.Options{Workspace: ws, UserDir: user, Count: words})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(user, "AGENTS.md"), filepath.Join(repo, "CLAUDE.md"), filepath.Join(repo, "a", "b", "AGENTS.md"), filepath.Join(ws, "AGENTS.md")}
	if got := paths(in); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("read %q, want %q", got, want)
	}
	if p := in.Prompt(); strings.Contains(p, "hunter2") || strings.Contains(p, "swordfish") || !strings.Contains(p, "by its full path, inside.") {
		t.Fatalf("the prompt:\n%s", p)
	}
	skipped := []string{
		filepath.Join(repo, "AGENTS.md") + " not read: it links to " + netrc + ", outside " + repo,
		filepath.Join(repo, "a", "AGENTS.md") + " not read: it links to " + netrc + ", outside " + repo,
	}
	if strings.Join(in.Skipped, "\n") != strings.Join(skipped, "\n") {
		t.Fatalf("skipped %q, want %q", in.Skipped, skipped)
	}

	// A workspace reached through a directory linked out of the
	// repository; and the person's directory itself a link, which is
	// theirs to make.
	write(t, filepath.Join(top, "elsewhere", "AGENTS.md"), "outside, through a directory")
	link(t, filepath.Join(top, "elsewhere"), filepath.Join(repo, "out"))
	write(t, filepath.Join(top, "dotfiles", "AGENTS.md"), "Answer briefly.")
	dot := filepath.Join(top, "dot")
	link(t, filepath.Join(top, "dotfiles"), dot)
	in, err = instructions.Read(instructions.Options{Workspace: filepath.Join(repo, "out"), UserDir: dot, Count: words})
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(in); len(got) != 2 || got[0] != filepath.Join(dot, "AGENTS.md") || got[1] != filepath.Join(repo, "CLAUDE.md") {
		t.Fatalf("read %q", got)
	}
	if s := strings.Join(in.Skipped, "\n"); !strings.Contains(s, filepath.Join(repo, "out", "AGENTS.md")+" not read: it links to "+filepath.Join(top, "elsewhere", "AGENTS.md")+", outside "+repo) {
		t.Fatalf("skipped %q", in.Skipped)
	}
}

// An AGENTS.md that cannot be read does not silence the CLAUDE.md beside
// it, and says why it was not read.
func TestReadFallsBackToClaudeMD(t *testing.T) {
	for name, put := range map[string]func(path string) error{
		"a directory": func(path string) error { return os.Mkdir(path, 0o755) },
		"a FIFO":      func(path string) error { return syscall.Mkfifo(path, 0o644) },
		"not text":    func(path string) error { return os.WriteFile(path, []byte("\x00\x01"), 0o644) },
		"a link out": func(path string) error {
			secret := filepath.Join(t.TempDir(), "secret")
			write(t, secret, "hunter2")
			return os.Symlink(secret, path)
		},
	} {
		t.Run(name, func(t *testing.T) {
			ws := t.TempDir()
			agents := filepath.Join(ws, "AGENTS.md")
			if err := put(agents); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(ws, "CLAUDE.md"), "Claude's file.")
			in, err := instructions.Read(instructions.Options{Workspace: ws, Count: words})
			if err != nil {
				t.Fatal(err)
			}
			if got := paths(in); len(got) != 1 || got[0] != filepath.Join(ws, "CLAUDE.md") {
				t.Fatalf("read %q, skipped %q", got, in.Skipped)
			}
			if len(in.Skipped) != 1 || !strings.HasPrefix(in.Skipped[0], agents+" not read: ") {
				t.Fatalf("skipped %q", in.Skipped)
			}
		})
	}
}

// nested makes a repository depth directories deep, each with a megabyte
// of random base64 as its AGENTS.md (one file, linked hard into each):
// the longest a file is read to, of the text a tokenizer is slowest on.
func nested(tb testing.TB, depth int) (repo, ws string) {
	repo = tb.TempDir()
	write(tb, filepath.Join(repo, ".git", "HEAD"), "x")
	raw := make([]byte, 3<<18)
	rand.NewChaCha8([32]byte{}).Read(raw)
	first := filepath.Join(repo, "AGENTS.md")
	write(tb, first, base64.StdEncoding.EncodeToString(raw))
	ws = repo
	for range depth {
		ws = filepath.Join(ws, "d")
		if err := os.Mkdir(ws, 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.Link(first, filepath.Join(ws, "AGENTS.md")); err != nil {
			tb.Fatal(err)
		}
	}
	return repo, ws
}

// A deep repository of long files costs the counter about the cap, not
// the files' length: it counted 300 MB before, minutes with a tokenizer.
// So many files are not all read either; the root's and the workspace's
// are.
func TestReadBoundsTheWorkOnLongFiles(t *testing.T) {
	repo, ws := nested(t, 150)
	counted := 0
	count := func(s string) int { counted += len(s); return (len(s) + 3) / 4 }
	in, err := instructions.Read(instructions.Options{Workspace: ws, Count: count})
	if err != nil {
		t.Fatal(err)
	}
	if counted > 1<<20 {
		t.Errorf("counted %d bytes of text, more than one of the files", counted)
	}
	got := paths(in)
	if len(got) == 0 || got[0] != filepath.Join(repo, "AGENTS.md") || got[len(got)-1] != filepath.Join(ws, "AGENTS.md") {
		t.Fatalf("read %q", got)
	}
	if looked := len(got) + len(in.Skipped) - 1; looked > 32 || !strings.Contains(in.Skipped[0], "not looked in") {
		t.Fatalf("looked in %d files of 151, skipped %q", looked, in.Skipped)
	}
	for _, f := range in.Recorded() {
		if !f.Truncated || f.Tokens == 0 {
			t.Fatalf("%s recorded as %+v", f.Path, f)
		}
	}
}

// BenchmarkReadLargeNested reads the deep repository of long files with
// the tokenizer the agent counts with: the report that found it measured
// 343 s a read before counting was bounded.
func BenchmarkReadLargeNested(b *testing.B) {
	_, ws := nested(b, 150)
	count := tokens.NewCounter("gpt-4o").Text
	for b.Loop() {
		if _, err := instructions.Read(instructions.Options{Workspace: ws, Count: count}); err != nil {
			b.Fatal(err)
		}
	}
}

// A home directory kept in git is not the project of every folder under
// it: a downloaded folder (no .git of its own) is its own project, and
// its AGENTS.md may not link to the home's files. A repository under the
// home is found as before.
func TestAHomeInGitIsNotEveryFoldersProject(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	write(t, filepath.Join(home, ".git", "HEAD"), "x")
	write(t, filepath.Join(home, ".netrc"), "machine api.github.com password ghp_SECRET")
	evil := filepath.Join(home, "Downloads", "evil-1.0")
	link(t, "../../.netrc", filepath.Join(evil, "AGENTS.md"))
	if root := instructions.ProjectRoot(evil); root != evil {
		t.Fatalf("the project of a folder under a home in git is %s, want the folder itself", root)
	}
	in, err := instructions.Read(instructions.Options{Workspace: evil, Count: words})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(in.Prompt(), "ghp_SECRET") || len(in.Files) != 0 || len(in.Skipped) != 1 || !strings.Contains(in.Skipped[0], "outside") {
		t.Fatalf("read %q, skipped %q", paths(in), in.Skipped)
	}
	repo := filepath.Join(home, "src", "app")
	write(t, filepath.Join(repo, ".git", "HEAD"), "x")
	if root := instructions.ProjectRoot(filepath.Join(repo, "cmd")); root != repo {
		t.Fatalf("a repository under the home: root %s, want %s", root, repo)
	}
}
