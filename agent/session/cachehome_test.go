package session

import (
	"os"
	"testing"

	"retrace/internal/testcache"
)

// TestMain keeps the caches of the commands these tests run in a
// directory of the run's own, not the user's.
func TestMain(m *testing.M) {
	done := testcache.Isolate()
	code := m.Run()
	done()
	os.Exit(code)
}
