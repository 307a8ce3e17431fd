package instructions

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"retrace/agent/tokens"
)

// cutWhole is cut as it was before it counted only a head of the text:
// the search over the whole text, every probe counted.
func cutWhole(text string, limit int, count func(string) int) string {
	note := "\n[… cut here: the rest did not fit the cap on instructions]"
	limit -= count(note)
	if limit <= 0 {
		return ""
	}
	lo, hi := 0, len(text)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if count(text[:mid]) <= limit {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	for lo > 0 && lo < len(text) && !utf8.RuneStart(text[lo]) {
		lo--
	}
	kept := text[:lo]
	if nl := strings.LastIndexByte(kept, '\n'); nl > len(kept)/2 {
		kept = kept[:nl]
	}
	if kept == "" {
		return ""
	}
	return kept + note
}

// texts are of the kinds instructions are written in, and some they are
// not: prose, code, other scripts, tables whose runs of dashes and
// spaces make long tokens, and lines that never end.
func texts(size int) map[string]string {
	r := rand.New(rand.NewPCG(1, 2))
	gen := func(pick func() string) string {
		var b strings.Builder
		for b.Len() < size {
			b.WriteString(pick())
		}
		return b.String()
	}
	of := func(parts ...string) func() string { return func() string { return parts[r.IntN(len(parts))] } }
	raw := make([]byte, size*3/4)
	rand.NewChaCha8([32]byte{}).Read(raw)
	return map[string]string{
		"prose": gen(of("Run the tests ", "before you commit. ", "The API is versioned", " under /v2.\n", "Never edit generated files; ", "regenerate them.\n\n", "- ", "Use tabs.\n")),
		"code":  gen(of("func (s *Server) Close() error {\n", "\treturn s.ln.Close()\n", "}\n", "\t\tif err != nil {\n", "\t\t\treturn fmt.Errorf(\"close: %w\", err)\n")),
		"other": gen(of("日本語の説明です。", "Ελληνικά κείμενα ", "emoji 🚀🔥 ", "проверка ", "\n", "中文指令，")),
		"table": gen(of("| name | value |\n", "|"+strings.Repeat("-", 80)+"|\n", strings.Repeat(" ", 120), "x\n")),
		"line":  gen(of("word ", "another ", "and ", "more ")),
		"b64":   base64.StdEncoding.EncodeToString(raw),
	}
}

// Counting only a head of a long text cuts it where counting all of it
// did, for every kind of text, counter and limit: with a tokenizer the
// agent uses, with one a word (few tokens in a long line), and with one
// a rune.
func TestCutAsWhenItCountedAll(t *testing.T) {
	counters := map[string]func(string) int{
		"o200k": tokens.NewCounter("gpt-4o").Text,
		"words": func(s string) int { return len(strings.Fields(s)) },
		"runes": utf8.RuneCountInString,
	}
	for kind, text := range texts(3000) {
		for name, count := range counters {
			for _, limit := range []int{1, 12, 40, 150, 700} {
				if got, want := cut(text, limit, count), cutWhole(text, limit, count); got != want {
					t.Errorf("%s text, %s, limit %d: cut to %d bytes, %d before", kind, name, limit, len(got), len(want))
				}
			}
		}
	}
}

// fitSorted is fit as it was before it counted only what it needed: each
// file counted whole, taken in the order of its tokens.
func (in *Instructions) fitSorted(limit int, count func(string) int) {
	need := make([]int, len(in.Files))
	order := make([]int, len(in.Files))
	for i, f := range in.Files {
		need[i], order[i] = count(f.Text), i
	}
	slices.SortStableFunc(order, func(a, b int) int { return need[a] - need[b] })
	left := limit
	for k, i := range order {
		f := &in.Files[i]
		share := left / (len(order) - k)
		n := need[i]
		if n > share {
			f.Text, n, f.Truncated = cutWhole(f.Text, share, count), 0, true
			if f.Text != "" {
				n = count(f.Text)
			}
		}
		f.Tokens, left = n, left-n
	}
	kept := in.Files[:0]
	for _, f := range in.Files {
		if f.Text != "" {
			kept = append(kept, f)
			continue
		}
		in.Skipped = append(in.Skipped, fmt.Sprintf("%s left out: its share of the cap of %d tokens was too small for any of it", f.Path, limit))
	}
	in.Files = kept
}

// Going round, counting only as far as the shares, fits the files as
// taking them in the order of their tokens did, where their lengths are
// in that order too: which files are kept whole, which are cut, and to
// what.
func TestFitAsWhenItCountedAll(t *testing.T) {
	words := func(s string) int { return len(strings.Fields(s)) }
	r := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		var files []File
		for i := range 1 + r.IntN(8) {
			lines := []int{1, 3, 10, 40, 200}[r.IntN(5)] + r.IntN(10)
			text := strings.Repeat("one rule of the project\n", lines)
			files = append(files, File{Text: text})
			files[i].Path = fmt.Sprint(i)
		}
		limit := 20 + r.IntN(800)
		got, want := Instructions{Files: slices.Clone(files)}, Instructions{Files: slices.Clone(files)}
		got.fit(limit, words)
		want.fitSorted(limit, words)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("cap %d: fit\n%+v\nwant\n%+v", limit, got, want)
		}
	}
}

// A file swapped for a link out of the repository between the check of
// where it leads and its opening is not read: the open itself refuses
// the link.
func TestReadTextRefusesALinkOut(t *testing.T) {
	repo, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "netrc")
	if err := os.WriteFile(secret, []byte("password hunter2"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(repo, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(repo)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if text, err := readText(root, "AGENTS.md", true); err == nil || strings.Contains(text, "hunter2") {
		t.Fatalf("read %q, %v", text, err)
	}
}
