// Package llm talks to an OpenAI-compatible chat endpoint through
// github.com/sashabaranov/go-openai, and makes its many dialects look like
// one.
//
// # What it papers over
//
// Real servers differ in what they stream (see the project's notes,
// shared/reference/openai-wire.md): tool calls split over many chunks or
// sent whole, all at index 0 (Ollama) or with no index, arguments as a JSON
// object, reasoning under reasoning_content or reasoning, Azure's empty
// first chunk, keep-alive comments by the hundred, errors in half a dozen
// shapes. go-openai decodes some of these badly and drops others, so Stream
// reads every chunk raw (RecvRaw) and decodes it here, and an HTTP client
// wrapper watches the bytes of each response: it captures the headers
// (go-openai hides Retry-After), sees error lines go-openai swallows, and
// notices a connection that went silent.
//
// # What it promises
//
// A Turn is returned only for a stream that reached a finish_reason; a
// stream that ends without one is an *Error of kind Incomplete, with what
// streamed so far, and partial tool calls are never returned as calls.
// Transient failures are retried (429 honouring Retry-After up to 60 s,
// 5xx, dropped connections) before any output is shown; everything else is
// an *Error whose message says what to fix.
package llm
