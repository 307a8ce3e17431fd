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
	requests, violations := llmtest.Stats()
	fmt.Printf("llmtest: %d requests checked against strict servers' rules, %d rejected\n", requests, violations)
	os.Exit(code)
}
