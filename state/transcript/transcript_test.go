package transcript_test

import (
	"strings"
	"testing"
	"time"

	"retrace/state"
	"retrace/state/transcript"
)

func TestInert(t *testing.T) {
	for in, want := range map[string]string{
		"plain text\n\twith tab":             "plain text\n\twith tab",
		"\x1b[2J\x1b[H":                      "^[[2J^[[H",
		"\x1b]0;pwned\x07":                   "^[]0;pwned^G",
		"\x1b]52;c;ZWNobyBoaQ==\x07":         "^[]52;c;ZWNobyBoaQ==^G",
		"\x1b]8;;http://x\x1b\\link":         "^[]8;;http://x^[\\link",
		"over\rwrite":                        "over^Mwrite",
		"del\x7f":                            "del^?",
		"c1 \u009b31m":                       "c1 <U+009B>31m",
		"bidi \u202eevil":                    "bidi <U+202E>evil",
		"bad \xff utf8":                      "bad \uFFFD utf8",
		"résumé ✓ 数据 🙂":                      "résumé ✓ 数据 🙂",
		"":                                   "",
		"NUL\x00":                            "NUL^@",
		"\x1b[31mred\x1b[0m and \x1bP+q\x1b": "^[[31mred^[[0m and ^[P+q^[",
	} {
		if got := transcript.Inert(in); got != want {
			t.Errorf("Inert(%q) = %q, want %q", in, got, want)
		}
		if got := transcript.Inert(in); strings.ContainsAny(got, "\x1b\x07\r\u009b\u202e") {
			t.Errorf("Inert(%q) still holds a control character: %q", in, got)
		}
	}
}

func TestMarkdown(t *testing.T) {
	s := state.State{
		SessionID: "abc", Version: 3, Phase: state.Done,
		History: []state.Message{
			{Role: state.RoleUser, Content: "read main.go \x1b]0;title\x07"},
			{Role: state.RoleAssistant, ToolCalls: []state.ToolRequest{{ID: "c1", Name: "read_file", Arguments: `{"path":"main.go"}`}}},
			{Role: state.RoleTool, ToolCallID: "c1", Name: "read_file", Content: "```go\npackage main\n```"},
			{Role: state.RoleAssistant, Content: "It is a main package."},
		},
		Memory: state.WorkingMemory{Plan: []state.Step{{Text: "read", Status: state.StepDone}}, Notes: map[string]string{"lang": "go"}},
	}
	md := transcript.Markdown(transcript.Header{Title: "demo", SessionID: "abc", Version: 3, Versions: 5, Head: 3, Exported: time.Now()}, s)
	for _, want := range []string{
		"# demo", "v3 of 5 (head)", "### User", "read main.go ^[]0;title^G", "**Tool call:** read main.go (`read_file`, c1)",
		"````text\n```go\npackage main\n```\n````", "It is a main package.", "- [x] read (done)", "**lang:** go",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.ContainsRune(md, '\x1b') {
		t.Error("markdown holds a raw escape")
	}
}
