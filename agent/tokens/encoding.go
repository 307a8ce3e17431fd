package tokens

import (
	"fmt"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// The names of the encodings this package uses, as tiktoken spells them.
const (
	// O200kBase is the encoding of gpt-4o and later OpenAI models.
	O200kBase = "o200k_base"
	// Cl100kBase is the encoding of gpt-4 and gpt-3.5-turbo, and this
	// package's stand-in for models whose tokenizer it does not carry.
	Cl100kBase = "cl100k_base"
)

// encoding is one tiktoken encoding, loaded on first use. Loading parses
// megabytes of ranks, so it happens at most once per process however many
// Counters share it.
type encoding struct {
	name string
	once sync.Once
	tk   *tiktoken.Tiktoken
	err  error
}

// encodings holds every encoding a Counter may use. The map is never written
// after initialisation, so reading it needs no lock; each entry guards its
// own loading.
var encodings = map[string]*encoding{
	O200kBase:  {name: O200kBase},
	Cl100kBase: {name: Cl100kBase},
}

// offline makes tiktoken read its tables from the copy compiled into the
// binary by tiktoken-go-loader. tiktoken-go's default loader would fetch
// them over HTTP and cache them in a temporary directory; an agent must
// count offline and without writing files. The loader is a package-wide
// setting of tiktoken-go, so it is set once, before the first load.
var offline sync.Once

// get returns the loaded encoding, loading it if this is the first use, or
// nil if it cannot be loaded.
func (e *encoding) get() *tiktoken.Tiktoken {
	e.once.Do(e.load)
	return e.tk
}

func (e *encoding) load() {
	offline.Do(func() { tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader()) })
	tk, err := tiktoken.GetEncoding(e.name)
	if err != nil {
		e.err = fmt.Errorf("tokens: load encoding %s: %w", e.name, err)
		return
	}
	e.tk = tk
}

// maxChunk bounds the text handed to tiktoken at once. Its byte-pair merge
// takes time quadratic in the length of a piece without breaks, so one
// 64 KiB run of minified code or base64 (a file a tool read) would take
// minutes. Cutting at whitespace keeps ordinary text's tokens intact; a
// cut inside a long run may add a token per cut, which a budget estimate
// can afford.
const maxChunk = 512

// count counts s in chunks of at most maxChunk bytes.
func count(tk *tiktoken.Tiktoken, s string) int {
	n := 0
	for len(s) > 0 {
		cut := chunkEnd(s)
		n += len(tk.EncodeOrdinary(s[:cut]))
		s = s[cut:]
	}
	return n
}

// chunkEnd is where the first chunk of s ends: all of s if it is short,
// else just before the last whitespace in the first maxChunk bytes (a
// token starts with its leading space), else at a character boundary.
func chunkEnd(s string) int {
	if len(s) <= maxChunk {
		return len(s)
	}
	for i := maxChunk; i > maxChunk/2; i-- {
		if r, _ := utf8.DecodeRuneInString(s[i:]); unicode.IsSpace(r) && utf8.RuneStart(s[i]) {
			return i
		}
	}
	i := maxChunk
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return max(i, 1)
}
