package llm_test

import (
	"fmt"
	"os"
	"testing"

	"retrace/agent/llmtest"
)

// TestMain reports how many requests the client sent across the wire
// scenarios, each checked against strict servers' rules.
func TestMain(m *testing.M) {
	code := m.Run()
	fmt.Println(llmtest.Summary())
	os.Exit(code)
}
