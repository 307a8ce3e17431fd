package llm_test

import (
	"testing"

	"retrace/agent/llmserver"
	"retrace/state"
)

// Tool-call fragments in the shapes servers send, beyond the baseline:
// each must give exactly the calls the model made.
func TestCallFragments(t *testing.T) {
	for name, tc := range map[string]struct {
		deltas []string
		want   []state.ToolRequest
	}{
		"id in a later fragment": {[]string{
			`{"tool_calls":[{"index":0,"type":"function","function":{"name":"read_file","arguments":"{\"path\":"}}]}`,
			`{"tool_calls":[{"index":0,"id":"call_late","function":{"arguments":"\"a\"}"}}]}`,
		}, []state.ToolRequest{{ID: "call_late", Name: "read_file", Arguments: `{"path":"a"}`}}},
		"id repeated, no index": {[]string{
			`{"tool_calls":[{"id":"call_x","type":"function","function":{"name":"read_file","arguments":"{\"pa"}}]}`,
			`{"tool_calls":[{"id":"call_x","function":{"arguments":"th\":\"a\"}"}}]}`,
		}, []state.ToolRequest{{ID: "call_x", Name: "read_file", Arguments: `{"path":"a"}`}}},
		"id repeated with its index": {[]string{
			`{"tool_calls":[{"index":0,"id":"call_x","type":"function","function":{"name":"read_file","arguments":"{\"pa"}}]}`,
			`{"tool_calls":[{"index":0,"id":"call_x","function":{"arguments":"th\":\"a\"}"}}]}`,
			`{"tool_calls":[{"index":1,"id":"call_y","type":"function","function":{"name":"list_files","arguments":"{}"}}]}`,
			`{"tool_calls":[{"index":0,"id":"call_x","function":{"arguments":""}}]}`,
		}, []state.ToolRequest{{ID: "call_x", Name: "read_file", Arguments: `{"path":"a"}`}, {ID: "call_y", Name: "list_files", Arguments: "{}"}}},
		"name in fragments": {[]string{
			`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_","arguments":""}}]}`,
			`{"tool_calls":[{"index":0,"function":{"name":"file","arguments":"{}"}}]}`,
		}, []state.ToolRequest{{ID: "call_1", Name: "read_file", Arguments: "{}"}}},
		// An entry with nothing in it is no call.
		"empty entry": {[]string{
			`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{}"}}]}`,
			`{"tool_calls":[{"index":1}]}`,
			`{"tool_calls":[{"index":2,"function":{"arguments":null}}]}`,
		}, []state.ToolRequest{{ID: "call_1", Name: "read_file", Arguments: "{}"}}},
		// An entry with only a name or only an id is a call the model
		// made; it gets "{}" (and an id if it has none).
		"a name alone": {[]string{
			`{"tool_calls":[{"index":0,"type":"function","function":{"name":"list_files"}}]}`,
		}, []state.ToolRequest{{Name: "list_files", Arguments: "{}"}}},
		"an id alone": {[]string{
			`{"tool_calls":[{"index":0,"id":"call_9","type":"function"}]}`,
		}, []state.ToolRequest{{ID: "call_9", Arguments: "{}"}}},
		// A first fragment with no index, id or name starts a call rather
		// than continuing one that does not exist.
		"arguments first": {[]string{
			`{"tool_calls":[{"function":{"arguments":"{\"a\":1}"}}]}`,
		}, []state.ToolRequest{{Arguments: `{"a":1}`}}},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			events := []llmserver.Event{c.Role()}
			for _, d := range tc.deltas {
				events = append(events, c.Delta(d))
			}
			h.srv.Enqueue(llmserver.Stream(append(events, c.Finish("tool_calls"), llmserver.Done())...))
			turn := h.ok(t, false)
			calls(t, turn, tc.want...)
			for _, call := range turn.Calls {
				if len(call.ID) == 0 {
					t.Errorf("call without an id: %+v", call)
				}
			}
		})
	}
}
