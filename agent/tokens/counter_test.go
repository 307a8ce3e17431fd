package tokens_test

import (
	"os"
	"strings"
	"sync"
	"testing"

	"retrace/agent/tokens"
	"retrace/state"
)

func TestOfflineLoader(t *testing.T) {
	for _, model := range []string{"gpt-4o", "llama3.1:8b"} {
		c := tokens.NewCounter(model)
		if !c.Exact() {
			t.Fatalf("NewCounter(%q) estimates with the network cut off: %v", model, c.Err())
		}
		if got := c.Text("hello world"); got != 2 {
			t.Errorf("NewCounter(%q).Text(hello world) = %d, want 2", model, got)
		}
	}
	entries, err := os.ReadDir(cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("the download cache has %d entries, want none: a table was fetched", len(entries))
	}
}

func TestText(t *testing.T) {
	tests := []struct {
		encoding string
		text     string
		want     int
	}{
		// "hello world", "tiktoken is great!" and the Japanese greeting have
		// the counts OpenAI's cookbook shows; the code line was counted with
		// this library and checked piece by piece ("func", " main", "()",
		// " {\n", "\tfmt", ".Println", "(\"", "hi", "\")\n", "}\n").
		{tokens.Cl100kBase, "", 0},
		{tokens.Cl100kBase, "hello world", 2},
		{tokens.Cl100kBase, "tiktoken is great!", 6},
		{tokens.Cl100kBase, "お誕生日おめでとう", 9},
		{tokens.Cl100kBase, "func main() {\n\tfmt.Println(\"hi\")\n}\n", 10},
		{tokens.O200kBase, "", 0},
		{tokens.O200kBase, "hello world", 2},
		{tokens.O200kBase, "tiktoken is great!", 6},
		{tokens.O200kBase, "お誕生日おめでとう", 8},
		{tokens.O200kBase, "func main() {\n\tfmt.Println(\"hi\")\n}\n", 10},
	}
	counters := map[string]*tokens.Counter{
		tokens.Cl100kBase: tokens.NewCounter("gpt-4"),
		tokens.O200kBase:  tokens.NewCounter("gpt-4o"),
	}
	for _, tt := range tests {
		c := counters[tt.encoding]
		if got := c.Text(tt.text); got != tt.want {
			t.Errorf("%s: Text(%q) = %d, want %d", tt.encoding, tt.text, got, tt.want)
		}
	}
}

func TestTextSpecialTokensAreText(t *testing.T) {
	c := tokens.NewCounter("gpt-4")
	// Counted as ordinary text, "<|endoftext|>" is several tokens; as a
	// control token it would be one. Either way it must not panic.
	if got := c.Text("<|endoftext|>"); got <= 1 {
		t.Errorf("Text(<|endoftext|>) = %d, want it counted as text (> 1)", got)
	}
}

func TestEncodingFor(t *testing.T) {
	tests := []struct {
		model string
		want  string
	}{
		{"gpt-4o", tokens.O200kBase},
		{"gpt-4o-mini-2024-07-18", tokens.O200kBase},
		{"chatgpt-4o-latest", tokens.O200kBase},
		{"gpt-4.1-nano", tokens.O200kBase},
		{"gpt-4.5-preview", tokens.O200kBase},
		{"gpt-5", tokens.O200kBase},
		{"GPT-5-mini", tokens.O200kBase},
		{"openai/gpt-oss-20b", tokens.O200kBase},
		{"o1", tokens.O200kBase},
		{"o3-mini", tokens.O200kBase},
		{"openai/o4-mini", tokens.O200kBase},
		{"gpt-4", tokens.Cl100kBase},
		{"gpt-4-turbo", tokens.Cl100kBase},
		{"gpt-3.5-turbo", tokens.Cl100kBase},
		{"llama3.1:8b", tokens.Cl100kBase},
		{"qwen2.5-coder:7b", tokens.Cl100kBase},
		{"deepseek-chat", tokens.Cl100kBase},
		{"mistral-7b-v0.1", tokens.Cl100kBase},
		{"", tokens.Cl100kBase},
	}
	for _, tt := range tests {
		if got := tokens.EncodingFor(tt.model); got != tt.want {
			t.Errorf("EncodingFor(%q) = %q, want %q", tt.model, got, tt.want)
		}
		if got := tokens.NewCounter(tt.model).Encoding(); got != tt.want {
			t.Errorf("NewCounter(%q).Encoding() = %q, want %q", tt.model, got, tt.want)
		}
	}
}

// cookbookMessages is the example of OpenAI's "How to count tokens with
// tiktoken", for which the API reported 129 prompt tokens on gpt-4 and
// gpt-3.5-turbo and 124 on gpt-4o.
var cookbookMessages = []state.Message{
	{Role: "system", Content: "You are a helpful, pattern-following assistant that translates corporate jargon into plain English."},
	{Role: "system", Name: "example_user", Content: "New synergies will help drive top-line growth."},
	{Role: "system", Name: "example_assistant", Content: "Things working well together will increase revenue."},
	{Role: "system", Name: "example_user", Content: "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage."},
	{Role: "system", Name: "example_assistant", Content: "Let's talk later when we're less busy about how to do better."},
	{Role: "user", Content: "This late pivot means we don't have time to boil the ocean for the client deliverable."},
}

func TestMessagesMatchTheAPI(t *testing.T) {
	for model, want := range map[string]int{"gpt-4": 129, "gpt-3.5-turbo": 129, "gpt-4o": 124, "gpt-4o-mini": 124} {
		if got := tokens.NewCounter(model).Messages(cookbookMessages); got != want {
			t.Errorf("%s: Messages(cookbook example) = %d, want %d as the API reported", model, got, want)
		}
	}
}

func TestMessage(t *testing.T) {
	c := tokens.NewCounter("gpt-4o")
	plain := state.Message{Role: state.RoleAssistant, Content: "Let me look."}
	// 3 framing + "assistant" 1 + "Let me look." 4.
	if got := c.Message(plain); got != 8 {
		t.Errorf("Message(plain) = %d, want 8", got)
	}

	named := plain
	named.Name = "helper"
	if got, want := c.Message(named), 8+1+c.Text("helper"); got != want {
		t.Errorf("Message(named) = %d, want %d (a name costs its tokens + 1)", got, want)
	}

	call := state.ToolRequest{ID: "call_abc123", Name: "read_file", Arguments: `{"path":"main.go"}`}
	withCall := plain
	withCall.ToolCalls = []state.ToolRequest{call}
	perCall := 3 + c.Text(call.Name) + c.Text(call.Arguments)
	if got, want := c.Message(withCall), 8+perCall; got != want {
		t.Errorf("Message(with one call) = %d, want %d", got, want)
	}
	withCall.ToolCalls = []state.ToolRequest{call, call}
	if got, want := c.Message(withCall), 8+2*perCall; got != want {
		t.Errorf("Message(with two calls) = %d, want %d", got, want)
	}

	// A call without arguments or a message without content still pays for
	// its framing.
	bare := state.Message{Role: state.RoleAssistant, ToolCalls: []state.ToolRequest{{Name: "now"}}}
	if got, want := c.Message(bare), 3+1+3+c.Text("now"); got != want {
		t.Errorf("Message(bare call) = %d, want %d", got, want)
	}

	// The call ID a tool result answers is not counted; its content is.
	result := state.Message{Role: state.RoleTool, ToolCallID: "call_abc123", Content: "package main"}
	noID := result
	noID.ToolCallID = ""
	if c.Message(result) != c.Message(noID) {
		t.Errorf("Message counts the tool call ID: %d != %d", c.Message(result), c.Message(noID))
	}
}

func TestMessages(t *testing.T) {
	c := tokens.NewCounter("llama3.1")
	if got := c.Messages(nil); got != 3 {
		t.Errorf("Messages(nil) = %d, want 3 for the reply primer", got)
	}
	ms := []state.Message{
		{Role: state.RoleUser, Content: "What is in main.go?"},
		{Role: state.RoleAssistant, ToolCalls: []state.ToolRequest{{ID: "1", Name: "read_file", Arguments: `{"path":"main.go"}`}}},
		{Role: state.RoleTool, ToolCallID: "1", Content: "package main\n\nfunc main() {}\n"},
	}
	want := 3
	for _, m := range ms {
		want += c.Message(m)
	}
	if got := c.Messages(ms); got != want {
		t.Errorf("Messages = %d, want %d (the sum of Message plus 3)", got, want)
	}
}

func TestZeroCounterEstimates(t *testing.T) {
	var c tokens.Counter
	if c.Exact() {
		t.Error("zero Counter: Exact() = true, want false")
	}
	if c.Err() == nil {
		t.Error("zero Counter: Err() = nil, want a reason")
	}
	// One token per four bytes, rounded up so no text is free.
	for s, want := range map[string]int{"": 0, "a": 1, "abcd": 1, "abcde": 2, "hello world": 3} {
		if got := c.Text(s); got != want {
			t.Errorf("zero Counter: Text(%q) = %d, want %d", s, got, want)
		}
	}
	if got := c.Messages([]state.Message{{Role: "user", Content: "abcdefgh"}}); got != 3+3+1+2 {
		t.Errorf("zero Counter: Messages = %d, want %d", got, 3+3+1+2)
	}
}

func TestConcurrentUse(t *testing.T) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20)
	models := []string{"gpt-4o", "gpt-4", "qwen3:8b", "o3"}
	want := make(map[string]int)
	for _, m := range models {
		want[m] = tokens.NewCounter(m).Text(text)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for i := range 16 {
		model := models[i%len(models)]
		wg.Go(func() {
			c := tokens.NewCounter(model)
			for range 20 {
				if got := c.Text(text); got != want[model] {
					errs <- model
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for m := range errs {
		t.Errorf("%s: concurrent Text disagrees with %d", m, want[m])
	}
}

// message300 is a 300-character message of the kind a conversation holds.
const message300 = "I looked at storage/bolt.go: Open waits for the file lock with a timeout of one second, " +
	"then returns ErrLocked wrapped with the path. The cursor copies keys out of the transaction before " +
	"returning them, so callers may keep them safely. Next I will run the tests with -race and check the benchmark. Ok"

func BenchmarkText(b *testing.B) {
	if len(message300) != 300 {
		b.Fatalf("message is %d characters, want 300", len(message300))
	}
	for _, model := range []string{"gpt-4o", "llama3.1"} {
		b.Run(tokens.EncodingFor(model), func(b *testing.B) {
			c := tokens.NewCounter(model)
			c.Text("warm up") // load the table outside the timed loop
			b.SetBytes(int64(len(message300)))
			for b.Loop() {
				c.Text(message300)
			}
		})
	}
}
