// Package llmtest is the test side of retrace's fake OpenAI-compatible
// server: it checks every request the way strict servers do, so a test
// proves both that the agent survives what servers send (llmserver's
// scripts) and that what it sends back would be accepted.
//
// # Basics
//
// NewServer starts an llmserver.Server on 127.0.0.1 that closes at the end
// of the test, with the checker as its gate. Script it and point the
// go-openai client at it as llmserver's documentation shows:
//
//	srv := llmtest.NewServer(t)
//	srv.Enqueue(llmserver.TextReply("Hello."))
//	cfg := openai.DefaultConfig("k")
//	cfg.BaseURL = srv.URL()
//	client := openai.NewClientWithConfig(cfg)
//
// Strict installs the same checker on a server started elsewhere, such as
// the demo model, which ships without it. Check runs the rules on a body
// built by hand, without a server.
//
// # The strict checker
//
// Every request is checked by Check before it is answered. A request that
// breaks a rule gets the error body a real server sends (400 unless noted)
// and is recorded in Violations; it does not consume a scripted response.
// The rules, each a Rule constant:
//
//   - the request is a POST to /v1/chat/completions (else 404);
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
// A valid request that finds no scripted response and no handler (or a
// handler that returns nil) is answered 500 "llmtest: no scripted response
// left" and recorded as RuleNoScript. A test of a well-behaved client ends
// with
//
//	if v := srv.Violations(); len(v) != 0 {
//		t.Fatalf("requests a real server would reject: %v", v)
//	}
//
// Every checker of the process counts what it saw; a TestMain prints
// Summary at the end of the run.
//
// # Caveats
//
// The checker judges one request at a time; it does not model a
// conversation, and the script is replayed whatever the request said.
// Rules must be set before the first request. A server has one gate, so
// Strict replaces any gate the server had.
package llmtest
