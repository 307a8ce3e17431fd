package transcript_test

import (
	"encoding/json"
	"strings"
	"testing"

	"retrace/state"
	"retrace/state/transcript"
	"retrace/state/transcript/inerttest"
)

// The checker the matrix tests share is not toothless: every class's raw
// text is caught by it, and plain text, newlines and tabs are not.
func TestInertMatrixCheckerCatchesEveryClass(t *testing.T) {
	for _, c := range inerttest.Classes {
		if p := inerttest.Problems(c.Text, "\n\t"); len(p) == 0 {
			t.Errorf("%s: the checker passes the raw text %q", c.Name, c.Text)
		}
	}
	if p := inerttest.Problems("plain\n\ttext, résumé ✓ 数据 🙂 \uFFFD <U+202E> ^[", "\n\t"); len(p) != 0 {
		t.Errorf("the checker flags harmless text: %v", p)
	}
	if p := inerttest.Problems("a\tb", "\n"); len(p) != 1 {
		t.Errorf("a tab where only newlines are allowed: %v", p)
	}
}

// Inert on every class: nothing left a terminal acts on, and each control
// shown as its documented stand-in, in place, with the text around it.
func TestInertMatrixInert(t *testing.T) {
	for _, c := range inerttest.Classes {
		t.Run(c.Name, func(t *testing.T) {
			got := transcript.Inert("<" + c.Text + ">\n\tnext line")
			if p := inerttest.Problems(got, "\n\t"); len(p) != 0 {
				t.Errorf("Inert(%q) = %q: %v", c.Text, got, p)
			}
			if miss := inerttest.Missing(got, "<", c, 0); len(miss) != 0 {
				t.Errorf("Inert(%q) = %q lacks %q", c.Text, got, miss)
			}
			if !strings.HasSuffix(got, ">\n\tnext line") {
				t.Errorf("Inert(%q) = %q: newline and tab must stay", c.Text, got)
			}
		})
	}
}

// The markdown export (what `retrace export --format md` prints) on every
// class, in every field it writes: the header, the memory, each kind of
// message and its thinking, the tool calls and the error. Each field carries its own tag
// before the hostile text, so each is seen to be shown.
func TestInertMatrixMarkdown(t *testing.T) {
	for _, c := range inerttest.Classes {
		t.Run(c.Name, func(t *testing.T) {
			h := func(tag string) string { return tag + c.Text }
			s := state.State{
				SessionID: "s1", Version: 1, Phase: state.Error,
				Summary:      h("summary:"),
				ErrorMessage: h("error:"),
				History: []state.Message{
					{Role: state.RoleSystem, Content: h("system:")},
					{Role: state.RoleUser, Content: h("user:")},
					{Role: state.RoleAssistant, Content: h("assistant:"), Reasoning: h("thinking:"), ToolCalls: []state.ToolRequest{
						{ID: h("callid:"), Name: h("callname:"), Arguments: h("args:")}}},
					{Role: state.RoleTool, ToolCallID: h("resultid:"), Name: h("resultname:"), Content: h("result:")},
				},
				Memory: state.WorkingMemory{
					CurrentGoal: h("goal:"),
					Plan:        []state.Step{{Text: h("step:")}},
					Notes:       map[string]string{h("notekey:"): h("notevalue:")},
				},
			}
			md := transcript.Markdown(transcript.Header{Title: h("title:"), SessionID: h("id:"), Model: h("model:"),
				Workspace: h("workspace:"), Version: 1, Versions: 1, Head: 1}, s)
			if p := inerttest.Problems(md, "\n"); len(p) != 0 {
				t.Errorf("the markdown carries %v:\n%q", p, md)
			}
			for _, tag := range []string{"title:", "id:", "model:", "workspace:", "summary:", "error:", "system:", "user:",
				"assistant:", "thinking:", "callid:", "callname:", "args:", "resultid:", "resultname:", "result:", "goal:", "step:",
				"notekey:", "notevalue:"} {
				if miss := inerttest.Missing(md, tag, c, 0); len(miss) != 0 {
					t.Errorf("the markdown lacks %q:\n%s", miss, md)
				}
			}
		})
	}
}

// InertJSON escapes what encoding/json leaves raw, and nothing else: the
// JSON stays valid and decodes to the very same text.
func TestInertJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":"plain, résumé ✓ 数据 🙂","b":[1,2]}`:   `{"a":"plain, résumé ✓ 数据 🙂","b":[1,2]}`,
		"{\"a\":\"del\x7f\"}":                      `{"a":"del\u007f"}`,
		"{\"a\":\"csi\u009b2J nel\u0085\"}":        `{"a":"csi\u009b2J nel\u0085"}`,
		"{\"a\":\"\u202eevil\u2066\u200f\u061c\"}": `{"a":"\u202eevil\u2066\u200f\u061c"}`,
		"{\"a\":\"raw\x9b\"}":                      `{"a":"raw\ufffd"}`,
		"{\n  \"a\": \"\\u001b]0;t\\u0007\"\n}":    "{\n  \"a\": \"\\u001b]0;t\\u0007\"\n}",
	} {
		if got := string(transcript.InertJSON([]byte(in))); got != want {
			t.Errorf("InertJSON(%q) = %q, want %q", in, got, want)
		}
	}
	for _, c := range inerttest.Classes {
		text := strings.ToValidUTF8(c.Text, "\uFFFD")
		b, err := json.Marshal(map[string]string{text: text})
		if err != nil {
			t.Fatal(err)
		}
		got := transcript.InertJSON(b)
		if p := inerttest.Problems(string(got), ""); len(p) != 0 {
			t.Errorf("%s: InertJSON left %v in %q", c.Name, p, got)
		}
		var back map[string]string
		if err := json.Unmarshal(got, &back); err != nil || back[text] != text {
			t.Errorf("%s: %q does not decode to the text: %q, %v", c.Name, got, back, err)
		}
	}
}
