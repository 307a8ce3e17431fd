package llm_test

import (
	"reflect"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"retrace/agent/llm"
	"retrace/state"
)

// Messages sends what strict servers accept (wire.go's list): the system
// text first and only once, a tool message never empty, tool arguments
// always a JSON object string, every call of type function.
func TestMessages(t *testing.T) {
	history := []state.Message{
		{Role: state.RoleUser, Content: "fix it"},
		{Role: state.RoleSystem, Content: "folded into the system text by the caller"},
		{Role: state.RoleAssistant, Content: "Looking.", ToolCalls: []state.ToolRequest{
			{ID: "call_1", Name: "read_file", Arguments: `{"path":"a.go"}`},
			{ID: "call_2", Name: "list_files", Arguments: ""},
			{ID: "call_3", Name: "read_file", Arguments: `{'path': 'a.go'}`},
			{ID: "call_4", Name: "read_file", Arguments: `["a.go"]`},
			{ID: "call_5", Name: "list_files", Arguments: "  "},
		}},
		{Role: state.RoleTool, ToolCallID: "call_1", Content: "package a\n"},
		{Role: state.RoleTool, ToolCallID: "call_2", Content: ""},
		{Role: state.RoleTool, ToolCallID: "call_3", Content: " \n\t"},
		{Role: state.RoleAssistant, Content: "Done."},
	}
	fn := func(name, args string) openai.FunctionCall { return openai.FunctionCall{Name: name, Arguments: args} }
	want := []openai.ChatCompletionMessage{
		{Role: "system", Content: "You are retrace."},
		{Role: "user", Content: "fix it"},
		{Role: "assistant", Content: "Looking.", ToolCalls: []openai.ToolCall{
			{ID: "call_1", Type: "function", Function: fn("read_file", `{"path":"a.go"}`)},
			{ID: "call_2", Type: "function", Function: fn("list_files", "{}")},
			{ID: "call_3", Type: "function", Function: fn("read_file", "{}")},
			{ID: "call_4", Type: "function", Function: fn("read_file", "{}")},
			{ID: "call_5", Type: "function", Function: fn("list_files", "{}")},
		}},
		{Role: "tool", ToolCallID: "call_1", Content: "package a\n"},
		{Role: "tool", ToolCallID: "call_2", Content: "(no output)"},
		{Role: "tool", ToolCallID: "call_3", Content: "(no output)"},
		{Role: "assistant", Content: "Done."},
	}
	if got := llm.Messages("You are retrace.", history); !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}

	// No system text: nothing is sent for it.
	got := llm.Messages("", []state.Message{{Role: state.RoleUser, Content: "hi"}})
	if want := []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("without a system text: %+v", got)
	}
	// No history yet: the system text alone.
	got = llm.Messages("sys", nil)
	if want := []openai.ChatCompletionMessage{{Role: "system", Content: "sys"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("without history: %+v", got)
	}
}
