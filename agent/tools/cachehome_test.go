package tools

import (
	"fmt"
	"os"
	"testing"
)

// TestMain keeps the caches of the commands these tests run (each
// workspace gets its own, under $XDG_CACHE_HOME/retrace/sandbox) in a
// directory of the test run's own, removed at its end, not the user's.
func TestMain(m *testing.M) {
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
	os.Exit(code)
}
