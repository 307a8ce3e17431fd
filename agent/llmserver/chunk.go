package llmserver

import (
	"strconv"
	"strings"
)

// Dialect selects which server's chunk shapes a Chunker produces
// (openai-wire.md §1 and §2).
type Dialect int

const (
	// OpenAI is the baseline: role on the first chunk only, delta {} on
	// the finish chunk, "logprobs":null in every choice.
	OpenAI Dialect = iota
	// Ollama puts "role":"assistant" and "content":"" on every chunk, even
	// tool-call and finish chunks, and sends no logprobs.
	Ollama
	// Azure sorts keys, adds content_filter_results to choices, and opens
	// the stream (Role) with a chunk of choices:[] and
	// prompt_filter_results whose id, model and created are empty.
	Azure
)

// String names the dialect.
func (d Dialect) String() string {
	switch d {
	case Ollama:
		return "ollama"
	case Azure:
		return "azure"
	}
	return "openai"
}

// Chunker builds chat.completion.chunk events with a fixed id, model and
// created time. Zero fields get the defaults chatcmpl-1, gpt-x and
// 1700000000, so Chunker{} is ready to use.
type Chunker struct {
	ID      string
	Model   string
	Created int64
	Dialect Dialect
	// UsageNull adds "usage":null to every chunk but the usage chunk, as
	// OpenAI does when stream_options.include_usage is set.
	UsageNull bool
}

func (c Chunker) norm() Chunker {
	if c.ID == "" {
		c.ID = "chatcmpl-1"
	}
	if c.Model == "" {
		c.Model = "gpt-x"
	}
	if c.Created == 0 {
		c.Created = 1700000000
	}
	return c
}

// safeFilter is Azure's verdict on a piece of text that passed.
const safeFilter = `{"hate":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"},` +
	`"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}}`

// Role is the first chunk of a text answer: delta
// {"role":"assistant","content":""}. In the Azure dialect it is preceded
// by the prompt_filter_results chunk.
func (c Chunker) Role() Event {
	switch c.Dialect {
	case Azure:
		return Seq(c.PromptFilter(), c.choice(`{"content":"","role":"assistant"}`, "", "{}"))
	case Ollama:
		return c.Delta(`{"role":"assistant","content":""}`)
	}
	return c.Delta(`{"role":"assistant","content":"","refusal":null}`)
}

// RoleToolStart is OpenAI's first chunk of a tool-call answer: the role,
// "content":null and the first fragment of call index in one delta.
func (c Chunker) RoleToolStart(index int, id, name string) Event {
	return c.Delta(`{"role":"assistant","content":null,"tool_calls":[` + toolStart(index, id, name) + `],"refusal":null}`)
}

// Text is a content delta.
func (c Chunker) Text(s string) Event {
	if c.Dialect == Azure {
		return c.choice(`{"content":`+quote(s)+`}`, "", safeFilter)
	}
	if c.Dialect == Ollama {
		return c.Delta(`{"role":"assistant","content":` + quote(s) + `}`)
	}
	return c.Delta(`{"content":` + quote(s) + `}`)
}

// Reasoning is a delta.reasoning_content piece with "content":null, as
// DeepSeek and llama.cpp stream it.
func (c Chunker) Reasoning(s string) Event {
	return c.Delta(c.nullContent() + `"reasoning_content":` + quote(s) + `}`)
}

// ReasoningField is a delta.reasoning piece (vLLM after the rename,
// Ollama, OpenRouter), which go-openai's typed delta drops.
func (c Chunker) ReasoningField(s string) Event {
	return c.Delta(c.nullContent() + `"reasoning":` + quote(s) + `}`)
}

// ToolStart is the first fragment of a call: index, id, type, function
// name and "arguments":"".
func (c Chunker) ToolStart(index int, id, name string) Event {
	return c.Delta(c.ollama() + `"tool_calls":[` + toolStart(index, id, name) + `]}`)
}

// ToolArgs is a later fragment: index and an arguments piece only.
func (c Chunker) ToolArgs(index int, piece string) Event {
	return c.Delta(c.ollama() + `"tool_calls":[{"index":` + strconv.Itoa(index) +
		`,"function":{"arguments":` + quote(piece) + `}}]}`)
}

// ToolWhole is a whole call in one chunk, as Ollama, LM Studio and Gemini
// send them.
func (c Chunker) ToolWhole(index int, id, name, args string) Event {
	fn := `"function":{"name":` + quote(name) + `,"arguments":` + quote(args) + `}`
	if c.Dialect == Ollama {
		return c.Delta(c.ollama() + `"tool_calls":[{"id":` + quote(id) + `,"index":` + strconv.Itoa(index) +
			`,"type":"function",` + fn + `}]}`)
	}
	return c.Delta(`{"tool_calls":[{"index":` + strconv.Itoa(index) + `,"id":` + quote(id) + `,"type":"function",` + fn + `}]}`)
}

// Finish is the last choice chunk: an empty delta and finish_reason.
func (c Chunker) Finish(reason string) Event {
	return c.choice(c.emptyDelta(), reason, "{}")
}

// FinishUsage is a finish chunk that also carries usage, as some servers
// send instead of a separate usage chunk.
func (c Chunker) FinishUsage(reason string, prompt, completion int) Event {
	c = c.norm()
	return Data(c.envelope(`[`+c.choiceBody(c.emptyDelta(), reason, "{}")+`]`, c.usage(prompt, completion)))
}

// Usage is the usage chunk: "choices":[] and the token counts.
func (c Chunker) Usage(prompt, completion int) Event {
	c = c.norm()
	return Data(c.envelope(`[]`, c.usage(prompt, completion)))
}

// Delta is a chunk whose delta is the given raw JSON, for shapes no other
// method makes (a missing index, two entries with one index, an id that is
// a number, arguments as an object).
func (c Chunker) Delta(delta string) Event {
	return c.choice(delta, "", "{}")
}

// Chunk is a chunk with the envelope (id, object, created, model) and the
// given raw top-level fields after it, e.g. `"choices":[{"index":0}]`.
func (c Chunker) Chunk(fields string) Event {
	c = c.norm()
	return Data(`{"id":` + quote(c.ID) + `,"object":"chat.completion.chunk","created":` +
		strconv.FormatInt(c.Created, 10) + `,"model":` + quote(c.Model) + `,` + fields + `}`)
}

func (c Chunker) choice(delta, finish, filter string) Event {
	c = c.norm()
	usage := ""
	if c.UsageNull {
		usage = "null"
	}
	return Data(c.envelope(`[`+c.choiceBody(delta, finish, filter)+`]`, usage))
}

func (c Chunker) choiceBody(delta, finish, filter string) string {
	fin := "null"
	if finish != "" {
		fin = quote(finish)
	}
	switch c.Dialect {
	case Azure:
		return `{"content_filter_results":` + filter + `,"delta":` + delta + `,"finish_reason":` + fin + `,"index":0,"logprobs":null}`
	case Ollama:
		return `{"index":0,"delta":` + delta + `,"finish_reason":` + fin + `}`
	}
	return `{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + fin + `}`
}

// envelope wraps choices (and usage, unless "") in the dialect's key order.
func (c Chunker) envelope(choices, usage string) string {
	var b strings.Builder
	created := strconv.FormatInt(c.Created, 10)
	if c.Dialect == Azure {
		b.WriteString(`{"choices":` + choices + `,"created":` + created + `,"id":` + quote(c.ID) +
			`,"model":` + quote(c.Model) + `,"object":"chat.completion.chunk","system_fingerprint":"fp_azure"`)
	} else {
		b.WriteString(`{"id":` + quote(c.ID) + `,"object":"chat.completion.chunk","created":` + created +
			`,"model":` + quote(c.Model))
		if c.Dialect == Ollama {
			b.WriteString(`,"system_fingerprint":"fp_ollama"`)
		}
		b.WriteString(`,"choices":` + choices)
	}
	if usage != "" {
		b.WriteString(`,"usage":` + usage)
	}
	b.WriteString("}")
	return b.String()
}

func (c Chunker) usage(prompt, completion int) string {
	counts := `{"prompt_tokens":` + strconv.Itoa(prompt) + `,"completion_tokens":` + strconv.Itoa(completion) +
		`,"total_tokens":` + strconv.Itoa(prompt+completion)
	if c.Dialect == Ollama {
		return counts + `}`
	}
	return counts + `,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`
}

// ollama opens a delta object; in the Ollama dialect with the role and
// empty content every Ollama chunk carries.
func (c Chunker) ollama() string {
	if c.Dialect == Ollama {
		return `{"role":"assistant","content":"",`
	}
	return `{`
}

// nullContent opens a reasoning delta: content is null next to reasoning,
// except in Ollama, where it is always "".
func (c Chunker) nullContent() string {
	if c.Dialect == Ollama {
		return c.ollama()
	}
	return `{"content":null,`
}

func (c Chunker) emptyDelta() string {
	if c.Dialect == Ollama {
		return `{"role":"assistant","content":""}`
	}
	return `{}`
}

func toolStart(index int, id, name string) string {
	return `{"index":` + strconv.Itoa(index) + `,"id":` + quote(id) + `,"type":"function","function":{"name":` +
		quote(name) + `,"arguments":""}}`
}

// quote encodes s as a JSON string the way servers do, except that bytes
// which are not UTF-8 pass through unchanged: a test that splits a
// character across events must be able to put half of it on the wire.
// encoding/json would replace it with U+FFFD (and escape <, > and &).
func quote(s string) string {
	const hex = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == '"' || ch == '\\':
			b.WriteByte('\\')
			b.WriteByte(ch)
		case ch == '\n':
			b.WriteString(`\n`)
		case ch == '\r':
			b.WriteString(`\r`)
		case ch == '\t':
			b.WriteString(`\t`)
		case ch < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hex[ch>>4])
			b.WriteByte(hex[ch&0xf])
		default:
			b.WriteByte(ch)
		}
	}
	b.WriteByte('"')
	return b.String()
}
