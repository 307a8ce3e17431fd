// Package llmserver is a scripted OpenAI-compatible chat-completions
// server: the wire half of retrace's fake model. It listens where it is
// told (127.0.0.1 in tests and the demo), speaks the exact bytes real
// servers send (docs: /work/shared/reference/openai-wire.md), and answers
// each request from a script, so retrace, its tests and its demo model
// take the same code path as with a real endpoint. It does not import
// testing: the demo model ships in the binary. Tests use it through
// llmtest, which adds the checks strict servers make.
//
// # Basics
//
// Start serves on an address; Close stops it. Point the go-openai client
// at URL(), which ends in /v1:
//
//	srv, err := llmserver.Start("127.0.0.1:0") // in a test: llmtest.NewServer(t)
//	...
//	defer srv.Close()
//	cfg := openai.DefaultConfig("k")
//	cfg.BaseURL = srv.URL()
//	client := openai.NewClientWithConfig(cfg)
//
// Each request to POST /v1/chat/completions takes the next Response from
// the queue (Enqueue); when the queue is empty, the handler (SetHandler)
// answers, and without one the server answers 500 "llmserver: no scripted
// response left". Any other path gets OpenAI's 404. Requests returns
// everything received, decoded but with presence kept (a missing
// "content" key is not "content":null); Decode does the same for a body
// built by hand and reports the values of the wrong JSON type.
//
// # Scripting a scenario
//
// A scenario is a list of responses. The scripts cover the common turns;
// Stream with a Chunker and the Event helpers covers everything else. A
// tool call answered by text, then a stream that breaks:
//
//	srv.Enqueue(
//		llmserver.ToolCallReply([]llmserver.Call{{ID: "call_1", Name: "read_file", Args: `{"path":"a.go"}`}}),
//		llmserver.TextReply("a.go declares package main."),
//	)
//	c := llmserver.Chunker{Dialect: llmserver.Ollama}
//	srv.Enqueue(
//		llmserver.RateLimit("2"),           // 429 with Retry-After: 2
//		llmserver.Stream(                   // both calls at index 0 (ollama#15457)
//			c.ToolWhole(0, "call_ab12cd34", "read_file", `{"path":"a.go"}`),
//			c.ToolWhole(0, "call_ef56gh78", "read_file", `{"path":"b.go"}`),
//			c.Finish("tool_calls"), llmserver.Done(),
//		),
//		llmserver.Stream(c.Role(), c.Text("partial"), llmserver.ResetNow()),
//	)
//
// Events write bytes exactly as given and flush after each, so the client
// reads what a real server's TCP stream would carry: Data, Done, Comment,
// Line (raw framing), Bytewise (one byte per write), Truncate (a line cut
// short), Unterminated (a whole last event with no newline after it),
// Pause and Block (slow streams and cancellation), ResetNow (a TCP RST
// mid-stream). Reset answers a request with a RST before any byte. JSON,
// TextCompletion and ToolCallCompletion answer a streaming request as a
// server that ignores "stream":true does. Render shows the bytes events
// would write.
//
// # Gates
//
// SetGate puts a Gate between every request and its answer. The gate is
// given the decoded request and a function that produces the server's own
// answer; it may call that function and pass the answer on, or refuse the
// request with a Response of its own, which leaves the queue alone. The
// server knows no rules: llmtest's strict checker is one gate.
//
// # Caveats
//
// The server answers; it does not model a conversation. Scripted
// responses are replayed whatever the request said, so a script must
// match the turn the caller drives. Nothing checks that a request would be
// accepted by a real server unless a gate does. Close ends every Pause and
// Block and waits for the answers in flight, so a forgotten stream cannot
// hang a test binary or outlive its test.
package llmserver
