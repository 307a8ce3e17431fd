package tokens

import (
	"errors"
	"strings"

	"github.com/pkoukk/tiktoken-go"

	"retrace/state"
)

// The framing costs of OpenAI's chat format, from the cookbook's
// num_tokens_from_messages: each message is wrapped in
// <|start|>{role}<|message|>{content}<|end|>, a name adds a separator, and
// the reply is primed with <|start|>assistant<|message|>.
const (
	perMessage  = 3
	perName     = 1
	replyPrimer = 3
	// perToolCall treats a tool call as a message of its own: the cookbook
	// has no rule for calls inside a message, and framing comparable to a
	// message's is the closest thing it measured.
	perToolCall = perMessage
)

// bytesPerToken is the rule of thumb used when no tokenizer is available:
// English prose and code average about four bytes per token in both
// encodings.
const bytesPerToken = 4

// errNoEncoding is why the zero Counter estimates.
var errNoEncoding = errors.New("tokens: zero Counter has no encoding; use NewCounter")

// Counter counts tokens the way the model's tokenizer would, or close to it.
// It is safe for concurrent use. The zero Counter estimates from byte
// lengths; use NewCounter.
type Counter struct {
	enc *encoding
}

// NewCounter returns a Counter for the named model. It never fails: the
// tokenizer is loaded on first use, and if it cannot be, the Counter
// estimates instead (see Exact).
func NewCounter(model string) *Counter {
	return &Counter{enc: encodings[EncodingFor(model)]}
}

// EncodingFor returns the name of the encoding used for a model:
// O200kBase for OpenAI's gpt-4o, gpt-4.1, gpt-4.5, gpt-5, gpt-oss and
// o1/o3/o4 families, Cl100kBase for everything else. Matching ignores case,
// a provider prefix ("openai/gpt-4o") and separators ("gpt4o").
func EncodingFor(model string) string {
	n := normalize(model)
	for _, family := range []string{"gpt4o", "gpt4.1", "gpt4.5", "gpt5", "gptoss"} {
		if strings.Contains(n, family) {
			return O200kBase
		}
	}
	// The o-series names are so short that only a prefix is safe: "o1"
	// occurs inside many unrelated names.
	for _, family := range []string{"o1", "o3", "o4"} {
		if strings.HasPrefix(n, family) {
			return O200kBase
		}
	}
	return Cl100kBase
}

// Encoding returns the name of the encoding the Counter uses, or would use
// if it could load it.
func (c *Counter) Encoding() string {
	if c == nil || c.enc == nil {
		return ""
	}
	return c.enc.name
}

// Exact reports whether counts come from the tokenizer, loading it if this
// is the first use. When it is false, counts are estimates of one token per
// four bytes, and Err says why.
func (c *Counter) Exact() bool {
	return c.tokenizer() != nil
}

// Err returns why the Counter estimates rather than counts, or nil if it
// counts with its tokenizer. It is meant for a log line or a status bar;
// counting goes on either way.
func (c *Counter) Err() error {
	if c == nil || c.enc == nil {
		return errNoEncoding
	}
	if c.enc.get() != nil {
		return nil
	}
	// get has returned, so the load is over and err is settled.
	return c.enc.err
}

// tokenizer returns the loaded tokenizer, or nil when the Counter estimates.
func (c *Counter) tokenizer() *tiktoken.Tiktoken {
	if c == nil || c.enc == nil {
		return nil
	}
	return c.enc.get()
}

// Text returns the number of tokens in s. Special tokens such as
// <|endoftext|> are counted as the ordinary text they are when a person or
// a tool writes them, never as control tokens.
func (c *Counter) Text(s string) int {
	if s == "" {
		return 0
	}
	tk := c.tokenizer()
	if tk == nil {
		return (len(s) + bytesPerToken - 1) / bytesPerToken
	}
	return count(tk, s)
}

// Message returns the number of tokens m takes in a request: 3 for its
// framing, its role and content, its name plus 1 if it has one, and for
// each tool call 3 plus the call's name and arguments. The package
// documentation says where the rule comes from.
func (c *Counter) Message(m state.Message) int {
	n := perMessage + c.Text(m.Role) + c.Text(m.Content)
	if m.Name != "" {
		n += perName + c.Text(m.Name)
	}
	for _, call := range m.ToolCalls {
		n += perToolCall + c.Text(call.Name) + c.Text(call.Arguments)
	}
	return n
}

// Messages returns the number of tokens a request made of ms takes: the sum
// of its messages plus 3 that prime the model's reply.
func (c *Counter) Messages(ms []state.Message) int {
	n := replyPrimer
	for _, m := range ms {
		n += c.Message(m)
	}
	return n
}

// normalize reduces a model name to what identifies its family: lower case,
// without a provider or organisation prefix ("meta-llama/Llama-3.1-8B"), and
// without the separators that providers spell differently ("llama-3.1",
// "llama3.1", "llama_3.1").
func normalize(model string) string {
	n := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(n, '/'); i >= 0 {
		n = n[i+1:]
	}
	return separators.Replace(n)
}

// separators are the characters normalize drops.
var separators = strings.NewReplacer("-", "", "_", "", " ", "")
