package instructions_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"retrace/agent/instructions"
)

// words counts a text's tokens as one a word: enough to hold the cap to.
func words(s string) int { return len(strings.Fields(s)) }

func write(t *testing.T, path, text string) {
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
