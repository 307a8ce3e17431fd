package llmserver

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Call is one tool call a scripted model makes. Args is the arguments
// JSON text; "" sends no arguments fragment at all, the parameterless-tool
// quirk of vllm#28806.
type Call struct{ ID, Name, Args string }

// Opt adjusts a scripted reply.
type Opt func(*script)

type script struct {
	chunker           Chunker
	prompt, completed int
	noUsage           bool
	piece             int
	reasoning         string
	text              string
	bareEnd           bool
}

func newScript(opts []Opt) script {
	s := script{prompt: 100, completed: 20, piece: 5}
	for _, o := range opts {
		o(&s)
	}
	return s
}

// WithDialect sets the dialect of every chunk.
func WithDialect(d Dialect) Opt { return func(s *script) { s.chunker.Dialect = d } }

// WithChunker sets the chunk id, model, created time and dialect at once.
func WithChunker(c Chunker) Opt { return func(s *script) { s.chunker = c } }

// WithUsage sets the token counts of the usage chunk (default 100 and 20).
func WithUsage(prompt, completion int) Opt {
	return func(s *script) { s.prompt, s.completed = prompt, completion }
}

// WithoutUsage leaves out the usage chunk, as Ollama does unless
// include_usage is set and as an interrupted OpenAI stream does.
func WithoutUsage() Opt { return func(s *script) { s.noUsage = true } }

// WithPieceSize sets how many characters (runes) each text or arguments
// delta carries (default 5).
func WithPieceSize(n int) Opt {
	return func(s *script) {
		if n > 0 {
			s.piece = n
		}
	}
}

// WithReasoning streams text as reasoning before the answer: as
// reasoning_content, or as reasoning in the Ollama dialect.
func WithReasoning(text string) Opt { return func(s *script) { s.reasoning = text } }

// WithText streams text before a ToolCallReply's calls, as models that
// say what they are about to do send it.
func WithText(text string) Opt { return func(s *script) { s.text = text } }

// WithBareEnd ends a streamed reply right after its last chunk: no
// [DONE], and no newline after the last chunk's JSON.
func WithBareEnd() Opt { return func(s *script) { s.bareEnd = true } }

// TextReply streams an answer: the role chunk, the text in small deltas,
// finish_reason "stop", the usage chunk and [DONE].
func TextReply(text string, opts ...Opt) Response {
	s := newScript(opts)
	c := s.chunker
	events := []Event{c.Role()}
	events = append(events, s.reasoningEvents()...)
	for _, p := range split(text, s.piece) {
		events = append(events, c.Text(p))
	}
	events = append(events, c.Finish("stop"))
	return Stream(s.end(events)...)
}

// ToolCallReply streams tool calls and finish_reason "tool_calls", then
// the usage chunk and [DONE]. OpenAI and Azure stream the calls one after
// the other, the first sharing the role chunk, each with its arguments in
// small pieces; Ollama sends each call whole in one chunk.
func ToolCallReply(calls []Call, opts ...Opt) Response {
	s := newScript(opts)
	c := s.chunker
	var events []Event
	if c.Dialect == Azure {
		events = append(events, c.PromptFilter())
	}
	events = append(events, s.reasoningEvents()...)
	if s.text != "" {
		events = append(events, c.Role())
		for _, p := range split(s.text, s.piece) {
			events = append(events, c.Text(p))
		}
	}
	for i, call := range calls {
		switch {
		case c.Dialect == Ollama:
			events = append(events, c.ToolWhole(i, call.ID, call.Name, call.Args))
			continue
		case i == 0 && s.text == "":
			events = append(events, c.RoleToolStart(i, call.ID, call.Name))
		default:
			events = append(events, c.ToolStart(i, call.ID, call.Name))
		}
		for _, p := range split(call.Args, s.piece) {
			events = append(events, c.ToolArgs(i, p))
		}
	}
	events = append(events, c.Finish("tool_calls"))
	return Stream(s.end(events)...)
}

func (s script) reasoningEvents() []Event {
	var events []Event
	for _, p := range split(s.reasoning, s.piece) {
		if s.chunker.Dialect == Ollama {
			events = append(events, s.chunker.ReasoningField(p))
		} else {
			events = append(events, s.chunker.Reasoning(p))
		}
	}
	return events
}

func (s script) end(events []Event) []Event {
	if !s.noUsage {
		events = append(events, s.chunker.Usage(s.prompt, s.completed))
	}
	if s.bareEnd {
		events[len(events)-1] = Unterminated(events[len(events)-1])
		return events
	}
	return append(events, Done())
}

// TextCompletion is a non-stream answer (a chat.completion object), also
// what a server that ignores "stream":true sends. WithReasoning adds the
// thinking as message.reasoning_content, or as message.reasoning in the
// Ollama dialect.
func TextCompletion(text string, opts ...Opt) Response {
	s := newScript(opts)
	return JSON(s.completion(`{"role":"assistant","content":`+quote(text)+s.reasoningField()+`,"refusal":null}`, "stop"))
}

// ToolCallCompletion is a non-stream answer calling tools, with
// "content":null as OpenAI sends it, or WithText's text. WithReasoning
// adds the thinking as in TextCompletion.
func ToolCallCompletion(calls []Call, opts ...Opt) Response {
	s := newScript(opts)
	parts := make([]string, len(calls))
	for i, call := range calls {
		parts[i] = `{"id":` + quote(call.ID) + `,"type":"function","function":{"name":` + quote(call.Name) +
			`,"arguments":` + quote(call.Args) + `}}`
	}
	content := "null"
	if s.text != "" {
		content = quote(s.text)
	}
	msg := `{"role":"assistant","content":` + content + s.reasoningField() + `,"tool_calls":[` + strings.Join(parts, ",") + `],"refusal":null}`
	return JSON(s.completion(msg, "tool_calls"))
}

// reasoningField is the message's thinking, with its leading comma, or ""
// without WithReasoning.
func (s script) reasoningField() string {
	switch {
	case s.reasoning == "":
		return ""
	case s.chunker.Dialect == Ollama:
		return `,"reasoning":` + quote(s.reasoning)
	}
	return `,"reasoning_content":` + quote(s.reasoning)
}

func (s script) completion(message, finish string) string {
	c := s.chunker.norm()
	body := `{"id":` + quote(c.ID) + `,"object":"chat.completion","created":` + strconv.FormatInt(c.Created, 10) +
		`,"model":` + quote(c.Model) + `,"choices":[{"index":0,"message":` + message +
		`,"logprobs":null,"finish_reason":` + quote(finish) + `}]`
	if !s.noUsage {
		body += `,"usage":` + c.usage(s.prompt, s.completed)
	}
	return body + "}"
}

// split cuts s into pieces of n runes; a script never splits inside a
// character by accident (Bytewise and Data do it on purpose).
// Bytes that are not UTF-8 count as one character each and pass unchanged.
func split(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		end := 0
		for k := 0; k < n && end < len(s); k++ {
			_, size := utf8.DecodeRuneInString(s[end:])
			end += size
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}
