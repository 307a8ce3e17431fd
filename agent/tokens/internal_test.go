package tokens

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestUnloadableEncodingEstimates(t *testing.T) {
	c := &Counter{enc: &encoding{name: "no_such_encoding"}}
	if c.Exact() {
		t.Fatal("Exact() = true for an encoding that cannot load")
	}
	err := c.Err()
	if err == nil || !strings.Contains(err.Error(), "no_such_encoding") {
		t.Errorf("Err() = %v, want it to name the encoding", err)
	}
	if errors.Unwrap(err) == nil {
		t.Errorf("Err() = %v, want it to wrap tiktoken's error", err)
	}
	if got := c.Text("abcdefghi"); got != 3 {
		t.Errorf("Text(9 bytes) = %d, want 3", got)
	}
	if c.Encoding() != "no_such_encoding" {
		t.Errorf("Encoding() = %q", c.Encoding())
	}
}

func TestFirstLoadIsShared(t *testing.T) {
	// A fresh entry, so that the goroutines race to load it rather than
	// finding it loaded by another test.
	e := &encoding{name: Cl100kBase}
	var wg sync.WaitGroup
	got := make([]int, 8)
	for i := range got {
		wg.Go(func() {
			got[i] = (&Counter{enc: e}).Text("hello world")
		})
	}
	wg.Wait()
	for i, n := range got {
		if n != 2 {
			t.Errorf("goroutine %d counted %d, want 2", i, n)
		}
	}
}

func TestWindowRulesAreAllReachable(t *testing.T) {
	// A rule is dead if an earlier rule matches every name it matches.
	for j, later := range windowRules {
		for _, earlier := range windowRules[:j] {
			if earlier.matches(later.pattern) && (later.prefix || !earlier.prefix) {
				t.Errorf("rule %q is shadowed by the earlier rule %q", later.pattern, earlier.pattern)
			}
		}
		if later.pattern != normalize(later.pattern) {
			t.Errorf("rule %q is not in normalised form", later.pattern)
		}
	}
}

// A long run without a break is counted in chunks, in bounded time, and
// close to the whole count; ordinary text is cut only at spaces.
func TestLongRunsAreChunked(t *testing.T) {
	tk := encodings[Cl100kBase].get()
	if tk == nil {
		t.Fatal(encodings[Cl100kBase].err)
	}
	prose := strings.Repeat("the store writes one record per checkpoint and never the whole state again ", 40)
	if got, want := count(tk, prose), len(tk.EncodeOrdinary(prose)); got != want {
		t.Errorf("prose cut at spaces: %d tokens, whole %d", got, want)
	}
	blob := strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo", 2000) // 70 KB of base64, no break
	got := count(tk, blob)
	if whole := len(tk.EncodeOrdinary(blob[:4096])) * len(blob) / 4096; got < whole*9/10 || got > whole*11/10 {
		t.Errorf("a 70 KB run counts %d, about %d expected", got, whole)
	}
	for _, s := range []string{strings.Repeat("é", 1000), strings.Repeat("🙂", 300), "x"} {
		for rest := s; len(rest) > 0; {
			cut := chunkEnd(rest)
			if cut <= 0 || cut > maxChunk || !utf8.ValidString(rest[:cut]) {
				t.Fatalf("chunkEnd cut %d bytes into invalid UTF-8", cut)
			}
			rest = rest[cut:]
		}
	}
}
