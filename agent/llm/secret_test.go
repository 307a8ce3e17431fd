package llm_test

import (
	"strings"
	"testing"

	"retrace/agent/llm"
	"retrace/agent/llmserver"
	"retrace/state"
)

// A server that echoes the key into its reply gets it into nothing the
// caller sees: not the deltas shown as they stream (the key split over
// them, one byte a read, or whole in one), not the thinking, not a tool
// call's id, name or arguments. Text that only looks like the key's start
// is shown whole once the reply ends.
func TestEchoedKeyIsScrubbed(t *testing.T) {
	const key = "sk-proj-0123456789abcdef"
	reply := func(opts ...llmserver.Opt) llmserver.Response {
		return llmserver.ToolCallReply([]llmserver.Call{{ID: "call_" + key, Name: "note", Args: `{"key":"k","value":"` + key + `"}`}},
			append(opts, llmserver.WithText("you sent "+key+" and sk-proj-01"), llmserver.WithReasoning("echo "+key+"!"))...)
	}
	for how, tc := range map[string]struct {
		resp  llmserver.Response
		split splitReads
	}{
		"in pieces of 3":   {resp: reply(llmserver.WithPieceSize(3))},
		"one byte a read":  {resp: reply(llmserver.WithPieceSize(7)), split: oneByte},
		"whole, in one":    {resp: reply(llmserver.WithPieceSize(1000))},
		"a JSON reply too": {resp: llmserver.ToolCallCompletion([]llmserver.Call{{ID: "call_" + key, Name: "note", Args: `{"key":"k","value":"` + key + `"}`}}, llmserver.WithText("you sent "+key+" and sk-proj-01"), llmserver.WithReasoning("echo "+key+"!"))},
	} {
		t.Run(how, func(t *testing.T) {
			h := newHarness(t, func(c *llm.Config) {
				c.APIKey = key
				if tc.split != nil {
					c.HTTPClient = tc.split
				}
			})
			h.srv.Enqueue(tc.resp)
			turn, seen, err := streamSeen(t, h)
			if err != nil {
				t.Fatal(err)
			}
			shown := map[llm.DeltaKind]string{}
			for _, d := range seen {
				if strings.Contains(d.text, key) {
					t.Fatalf("a delta carries the key: %q", d.text)
				}
				shown[d.kind] += d.text
			}
			const text, thought = "you sent [the API key] and sk-proj-01", "echo [the API key]!"
			if turn.Content != text || turn.Reasoning != thought || shown[llm.Content] != text || shown[llm.Reasoning] != thought {
				t.Fatalf("turn %q / %q, shown %q / %q", turn.Content, turn.Reasoning, shown[llm.Content], shown[llm.Reasoning])
			}
			want := state.ToolRequest{ID: "call_[the API key]", Name: "note", Arguments: `{"key":"k","value":"[the API key]"}`}
			if len(turn.Calls) != 1 || turn.Calls[0].ToolRequest != want {
				t.Fatalf("calls %+v", turn.Calls)
			}
		})
	}
}

// A short key is a placeholder that local servers accept, no secret:
// replies that happen to contain it are left as they are.
func TestPlaceholderKeyIsNoSecret(t *testing.T) {
	for _, key := range []string{"x", "none", "ollama", "EMPTY", "lm-studio", "sk-no-key-req", "fifteen-chars-k"} {
		h := newHarness(t, func(c *llm.Config) { c.APIKey = key })
		text := "next: run ollama with none of the EMPTY lm-studio sk-no-key-req fifteen-chars-k settings"
		h.srv.Enqueue(llmserver.TextReply(text, llmserver.WithPieceSize(4)))
		turn, seen, err := streamSeen(t, h)
		if err != nil {
			t.Fatal(err)
		}
		shown := ""
		for _, d := range seen {
			shown += d.text
		}
		if turn.Content != text || shown != text {
			t.Errorf("key %q: the reply became %q, shown %q", key, turn.Content, shown)
		}
	}
}

// The shortest key that is scrubbed has 16 characters, as short as a real
// provider's key could be.
func TestSixteenCharacterKeyIsScrubbed(t *testing.T) {
	const key = "sixteen-chars-ky"
	h := newHarness(t, func(c *llm.Config) { c.APIKey = key })
	h.srv.Enqueue(llmserver.TextReply("echo " + key))
	turn, _, err := streamSeen(t, h)
	if err != nil || turn.Content != "echo [the API key]" {
		t.Fatalf("%q: %v", turn.Content, err)
	}
}
