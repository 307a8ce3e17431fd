package transcript_test

import (
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
// message, the tool calls and the error. Each field carries its own tag
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
					{Role: state.RoleAssistant, Content: h("assistant:"), ToolCalls: []state.ToolRequest{
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
				"assistant:", "callid:", "callname:", "args:", "resultid:", "resultname:", "result:", "goal:", "step:",
				"notekey:", "notevalue:"} {
				if miss := inerttest.Missing(md, tag, c, 0); len(miss) != 0 {
					t.Errorf("the markdown lacks %q:\n%s", miss, md)
				}
			}
		})
	}
}
