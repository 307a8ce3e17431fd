package llmserver_test

import (
	"fmt"

	"retrace/agent/llmserver"
)

// The bytes a stream writes, as the client's TCP stream carries them:
// every event is its own SSE frame, and Render skips the Pause.
func ExampleRender() {
	c := llmserver.Chunker{}
	fmt.Print(llmserver.Render(c.Text("Hi"), llmserver.Pause(1), llmserver.Comment("keep-alive"), llmserver.Done()))
	// Output:
	// data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-x","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}]}
	//
	// : keep-alive
	//
	// data: [DONE]
}
