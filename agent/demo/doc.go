// Package demo is a scripted model: an OpenAI-compatible server that plays
// a small agent on any workspace, so retrace can be tried, and tested end
// to end, with no API key and no network. It plans, lists and reads files,
// writes a notes file (which asks for approval), answers, and copes with a
// follow-up question. It speaks the same streamed bytes a real server
// does, through llmserver, so retrace takes the same code path as with a
// real endpoint. It does not check what it is sent the way strict servers
// do: that is for tests, which install llmtest's checker on it.
//
// Like a real model it works from the conversation: the developer's last
// message and the tool results since. Its first reply sets a plan and
// makes the first call; each later one reports on a result, moves the
// plan on (set_plan with done) and makes the next call; the last answers.
package demo
