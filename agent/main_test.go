package agent_test

import (
	"fmt"
	"os"
	"testing"

	"retrace/agent/llmtest"
	"retrace/internal/testcache"
)

// TestMain reports how many requests the agent sent across every
// scenario, each checked against strict servers' rules.
func TestMain(m *testing.M) {
	// The caches of the commands these tests run go in a directory of
	// the run's own, not the user's.
	done := testcache.Isolate()
	code := m.Run()
	done()
	fmt.Println(llmtest.Summary())
	os.Exit(code)
}
