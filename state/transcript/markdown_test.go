package transcript_test

import (
	"strings"
	"testing"
	"time"

	"retrace/state"
	"retrace/state/transcript"
)

// The whole export of a session with every part filled in, written out by
// hand from what Markdown's documentation promises: a title, the facts as
// a list (empty ones left out), goal, plan, notes in key order, the
// conversation with the summary first, a reply's thinking folded before
// it, every tool call and result in a fence, and the error last.
func TestMarkdownWholeDocument(t *testing.T) {
	s := state.State{
		SessionID: "abc", Version: 2, Phase: state.Error,
		Usage: state.Usage{PromptTokens: 120, CompletionTokens: 30},
		History: []state.Message{
			{Role: state.RoleSystem, Content: "You are retrace."},
			{Role: state.RoleUser, Content: "fix the build"},
			{Role: state.RoleAssistant, Content: "let me look", Reasoning: "\nthe build log first?\nno, main.go\n", ToolCalls: []state.ToolRequest{{ID: "c1", Name: "read_file", Arguments: `{"path":"main.go"}`}}},
			{Role: state.RoleTool, ToolCallID: "c1", Name: "read_file", Content: "package main\n"},
			{Role: state.RoleAssistant, Content: "It does not build."},
		},
		Memory: state.WorkingMemory{
			CurrentGoal: "fix the build",
			Plan: []state.Step{
				{Text: "read main.go", Status: state.StepDone},
				{Text: "fix the\nimport", Status: state.StepFailed},
				{Text: "run the tests", Status: state.StepPending},
			},
			Notes: map[string]string{"b": "second\nline", "a": "first"},
		},
		Summary:      "they said hello",
		ErrorMessage: "the endpoint answered 503",
	}
	h := transcript.Header{SessionID: "abc", Model: "qwen", Version: 2, Versions: 5, Head: 5}
	want := "# retrace session abc\n" +
		"\n" +
		"- **Session:** `abc`\n" +
		"- **Version:** v2 of 5\n" +
		"- **Phase:** error\n" +
		"- **Model:** qwen\n" +
		"- **Tokens:** 120 prompt, 30 completion\n" +
		"\n## Goal\n\nfix the build\n" +
		"\n## Plan\n\n" +
		"- [x] read main.go (done)\n" +
		"- [ ] fix the import (failed)\n" +
		"- [ ] run the tests (pending)\n" +
		"\n## Notes\n\n" +
		"- **a:** first\n" +
		"- **b:** second line\n" +
		"\n## Conversation\n" +
		"\n> **Summary of earlier turns:** they said hello\n" +
		"\n### System\n\n```text\nYou are retrace.\n```\n" +
		"\n### User\n\nfix the build\n" +
		"\n### Assistant\n" +
		"\n<details>\n<summary>Thinking</summary>\n\n```text\nthe build log first?\nno, main.go\n```\n\n</details>\n" +
		"\nlet me look\n" +
		"\n**Tool call:** read main.go (`read_file`, c1)\n\n```text\n{\"path\":\"main.go\"}\n```\n" +
		"\n### Tool result: read_file (c1)\n\n```text\npackage main\n```\n" +
		"\n### Assistant\n\nIt does not build.\n" +
		"\n## Error\n\nthe endpoint answered 503\n"
	if got := transcript.Markdown(h, s); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s\n(diff at byte %d)", got, want, firstDiff(got, want))
	}
}

// A session with nothing but its id: no empty sections, and the head
// version says so.
func TestMarkdownEmptySession(t *testing.T) {
	h := transcript.Header{Title: "first\ntry  \x1b[2J", SessionID: "xyz", Workspace: "/src/app", Version: 1, Versions: 1, Head: 1,
		Exported: time.Date(2026, 11, 22, 10, 30, 0, 0, time.UTC)}
	s := state.New("xyz")
	s.Memory.Plan, s.Memory.Notes = []state.Step{}, map[string]string{}
	want := "# first try ^[[2J\n" +
		"\n" +
		"- **Session:** `xyz`\n" +
		"- **Version:** v1 of 1 (head)\n" +
		"- **Phase:** idle\n" +
		"- **Workspace:** /src/app\n" +
		"- **Tokens:** 0 prompt, 0 completion\n" +
		"- **Exported:** 2026-11-22T10:30:00Z\n" +
		"\n## Conversation\n"
	if got := transcript.Markdown(h, s); got != want {
		t.Fatalf("got:\n%q\nwant:\n%q", got, want)
	}
}

// Fences are longer than any run of backticks inside, and only as long as
// that needs: three at least.
func TestMarkdownFences(t *testing.T) {
	for _, c := range []struct{ content, fence string }{
		{"no ticks", "```"},
		{"`one` and ``two``", "```"},
		{"```go\nx\n```", "````"},
		{"a ``` b ````` c `", "``````"},
		{"``a``b``c``d``", "```"},
	} {
		s := state.State{History: []state.Message{{Role: state.RoleTool, ToolCallID: "c", Name: "t", Content: c.content}}}
		md := transcript.Markdown(transcript.Header{}, s)
		want := "\n" + c.fence + "text\n" + c.content + "\n" + c.fence + "\n"
		if !strings.HasSuffix(md, want) {
			t.Errorf("content %q: export ends\n%q\nwant\n%q", c.content, md[max(0, len(md)-len(want)-10):], want)
		}
	}
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// Thinking is folded in a <details> block, in a fence longer than any run
// of backticks in it, so nothing it holds (a fence, a closing tag, HTML)
// ends the block early; blank thinking is left out.
func TestMarkdownThinking(t *testing.T) {
	for _, c := range []struct{ reasoning, want string }{
		{"plain", "\n### Assistant\n\n<details>\n<summary>Thinking</summary>\n\n```text\nplain\n```\n\n</details>\n\nhi\n"},
		{"```go\n</details><img src=x>\n```", "\n### Assistant\n\n<details>\n<summary>Thinking</summary>\n\n" +
			"````text\n```go\n</details><img src=x>\n```\n````\n\n</details>\n\nhi\n"},
		{" \n\t\n", "\n### Assistant\n\nhi\n"},
	} {
		s := state.State{History: []state.Message{{Role: state.RoleAssistant, Content: "hi", Reasoning: c.reasoning}}}
		md := transcript.Markdown(transcript.Header{}, s)
		if !strings.HasSuffix(md, "\n## Conversation\n"+c.want) {
			t.Errorf("thinking %q: the conversation is\n%q\nwant\n%q", c.reasoning, md[strings.Index(md, "## Conversation"):], c.want)
		}
	}
}
