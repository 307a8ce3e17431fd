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
	// The caches of the commands these tests run (each workspace gets
	// its own, under $XDG_CACHE_HOME/retrace/sandbox) go in a directory of
	// the run's own, not the user's.
	// A test's own child (a test binary run again as a helper, and
	// maybe killed) keeps its parent's, which the parent removes.
	if os.Getenv("RETRACE_TEST_CACHE") != "" {
		os.Exit(m.Run())
	}
	cache, err := os.MkdirTemp("", "retrace-test-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	os.Setenv("RETRACE_TEST_CACHE", cache)
	code := m.Run()
	os.RemoveAll(cache)
	fmt.Println(llmtest.Summary())
	os.Exit(code)
}
