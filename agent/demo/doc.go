// Package demo is a scripted model: an OpenAI-compatible server that plays
// a small agent on any workspace, so retrace can be tried, and tested end
// to end, with no API key and no network. It plans, lists and reads files,
// writes a notes file (which asks for approval), answers, and copes with a
// follow-up question. It speaks the same streamed bytes a real server
// does, through llmserver, so retrace takes the same code path as with a
// real endpoint. It does not check what it is sent the way strict servers
// do: that is for tests, which install llmtest's checker on it.
//
// The model reads retrace's own instructions to know where it is ("You are
// carrying out step 2 of the plan: ..."), which is exactly what a real
// model does with them.
package demo
