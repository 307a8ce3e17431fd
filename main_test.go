package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"retrace/agent/llmtest"
	"retrace/internal/testcache"
)

// binDir holds the retrace binary the process tests build once.
var (
	binDir   string
	binOnce  sync.Once
	binPath  string
	binError error
)

func TestMain(m *testing.M) {
	// Every retrace this test binary runs, in process or as a child, keeps
	// its file cache in a directory of its own, not the user's.
	done := testcache.Isolate()
	code := m.Run()
	done()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	fmt.Println(llmtest.Summary())
	os.Exit(code)
}

// builtBinary builds retrace once for every test that runs it as a
// separate process.
func builtBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binError = os.MkdirTemp("", "retrace-bin-"); binError != nil {
			return
		}
		binPath = filepath.Join(binDir, "retrace")
		if out, err := testCommand(t, "go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
			binError = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if binError != nil {
		t.Fatal(binError)
	}
	return binPath
}
