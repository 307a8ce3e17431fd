package agent_test

import (
	"fmt"
	"os"
	"testing"

	"retrace/agent/llmtest"
)

// TestMain reports how many requests the agent sent across every
// scenario, each checked against strict servers' rules.
func TestMain(m *testing.M) {
	code := m.Run()
	fmt.Println(llmtest.Summary())
	os.Exit(code)
}
