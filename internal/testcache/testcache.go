// Package testcache keeps what a test run's commands and retraces cache
// out of the user's own cache directory. Each workspace's commands get a
// cache under $XDG_CACHE_HOME/retrace/sandbox, and retrace keeps files
// under $XDG_CACHE_HOME too: a test run that left them in ~/.cache would
// leave a directory per temporary workspace it ever made.
package testcache

import (
	"fmt"
	"os"
)

// marker tells a test binary run again as a helper (and maybe killed
// there, with no chance to clean up) that its parent's directory is in
// use already.
const marker = "RETRACE_TEST_CACHE"

// Isolate points XDG_CACHE_HOME at a new temporary directory and returns
// the function that removes it; a package's TestMain calls it around
// m.Run. In a helper child it changes nothing: the parent's directory
// serves, and the parent removes it.
func Isolate() (done func()) {
	if os.Getenv(marker) != "" {
		return func() {}
	}
	dir, err := os.MkdirTemp("", "retrace-test-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testcache:", err)
		os.Exit(1)
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	os.Setenv(marker, dir)
	return func() { os.RemoveAll(dir) }
}
