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
// notices a connection that went silent. It also keeps what go-openai
// drops at the end of a body: a last data line with no newline after it,
// and a body that is one JSON document rather than a stream.
//
// # What it promises
//
// A Turn is returned only for a stream that reached a finish_reason (the
// last event counts even if no newline or [DONE] followed it); a stream
// that ends without one is an *Error of kind Incomplete, with what
// streamed so far, and partial tool calls are never returned as calls. A
// server that ignores "stream":true and answers with a whole
// chat.completion has answered: its reply is the Turn, shown to the
// Observer in one piece. An error object sent with status 200 is an
// *Error with the server's message, never retried.
// Transient failures are retried (429 honouring Retry-After up to 60 s,
// 5xx, dropped connections) before any output is shown; everything else is
// an *Error whose message says what to fix.
//
// # What it bounds
//
// One reply may carry Config.MaxReply bytes (2 MiB by default) of text,
// thinking and tool calls together, and make Config.MaxCalls calls (128).
// The client counts as it reads and stops where a reply passes either:
// the call fails with an *Error of kind TooLarge that names the bound and
// the server, keeps the reply's first 64 KiB of text and no call, and is
// not retried. Below the decoder, no line of the body (one event, or a
// reply sent as one JSON document) and no run of lines without data is
// read past four times the bound, so go-openai never buffers more either.
package llm
