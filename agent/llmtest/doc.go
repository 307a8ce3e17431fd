// Package llmtest is a fake OpenAI-compatible chat-completions server for
// tests and for a demo mode. It listens on 127.0.0.1 only, speaks the exact
// bytes real servers send (docs: /work/shared/reference/openai-wire.md),
// and checks every request the way strict servers do, so a test proves
// both that the agent survives what servers send and that what it sends
// back would be accepted.
//
// # Basics
//
// NewServer starts a server that closes at the end of the test. Point the
// go-openai client at URL(), which ends in /v1:
//
//	srv := llmtest.NewServer(t)
//	cfg := openai.DefaultConfig("k")
//	cfg.BaseURL = srv.URL()
//	client := openai.NewClientWithConfig(cfg)
//
// Each valid request takes the next Response from the queue (Enqueue);
// when the queue is empty, the handler (SetHandler) answers, and without
// one the server answers 500 "llmtest: no scripted response left" and
// records a violation. Requests returns everything received, decoded but
// with presence kept (a missing "content" key is not "content":null).
//
// # Scripting a scenario
//
// A scenario is a list of responses. The scripts cover the common turns;
// Stream with a Chunker and the Event helpers covers everything else. A
// tool call answered by text, then a stream that breaks:
//
//	srv.Enqueue(
//		llmtest.ToolCallReply([]llmtest.Call{{ID: "call_1", Name: "read_file", Args: `{"path":"a.go"}`}}),
//		llmtest.TextReply("a.go declares package main."),
//	)
//	c := llmtest.Chunker{Dialect: llmtest.Ollama}
//	srv.Enqueue(
//		llmtest.RateLimit("2"),           // 429 with Retry-After: 2
//		llmtest.Stream(                   // both calls at index 0 (ollama#15457)
//			c.ToolWhole(0, "call_ab12cd34", "read_file", `{"path":"a.go"}`),
//			c.ToolWhole(0, "call_ef56gh78", "read_file", `{"path":"b.go"}`),
//			c.Finish("tool_calls"), llmtest.Done(),
//		),
//		llmtest.Stream(c.Role(), c.Text("partial"), llmtest.ResetNow()),
//	)
//
// Events write bytes exactly as given and flush after each, so the client
// reads what a real server's TCP stream would carry: Data, Done, Comment,
// Line (raw framing), Bytewise (one byte per write), Truncate (a line cut
// short), Pause and Block (slow streams and cancellation), ResetNow (a TCP
// RST mid-stream). Reset answers a request with a RST before any byte.
// Render shows the bytes events would write.
//
// # The strict checker
//
// Every request is checked by Check before it is answered. A request that
// breaks a rule gets the error body a real server sends (400 unless noted)
// and is recorded in Violations; it does not consume a scripted response.
// The rules, each a Rule constant:
//
//   - the body is JSON, "model" is present, "messages" is present and
//     non-empty, and every role is one OpenAI knows;
//   - every message has content or tool calls, and a tool message has a
//     "content" key (go-openai drops it for an empty result);
//   - every tool call has an id (a string), type "function", a function
//     name, and arguments that are a non-empty string;
//   - every tool call id is answered by exactly one tool message before
//     the next non-tool message, and every tool message answers an id of
//     the assistant message it follows;
//   - and, when enabled in Rules: Mistral's 9-character ids, Ollama's
//     JSON-object arguments, DeepSeek R1's ban on echoed
//     reasoning_content, DeepSeek thinking mode's demand for it.
//
// A test of a well-behaved client ends with
//
//	if v := srv.Violations(); len(v) != 0 {
//		t.Fatalf("requests a real server would reject: %v", v)
//	}
//
// # Caveats
//
// The server checks and answers; it does not model a conversation.
// Scripted responses are replayed whatever the request said, so a script
// must match the turn the test drives. Rules must be set before the first
// request. Close (or the end of the test) ends every Pause and Block, so a
// forgotten stream cannot hang the test binary.
package llmtest
