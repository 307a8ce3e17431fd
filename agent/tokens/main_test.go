package tokens_test

import (
	"fmt"
	"os"
	"testing"
)

// cacheDir is where tiktoken's default, downloading loader would cache the
// tables. It starts empty and must stay so.
var cacheDir string

// TestMain cuts the network off before any test loads a table: every proxy
// points at a closed port and the download cache is an empty directory, so
// a tokenizer that loads at all was loaded from the copy in the binary.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "tokens-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	cacheDir = dir
	for k, v := range map[string]string{
		"HTTP_PROXY":         "http://127.0.0.1:1",
		"HTTPS_PROXY":        "http://127.0.0.1:1",
		"http_proxy":         "http://127.0.0.1:1",
		"https_proxy":        "http://127.0.0.1:1",
		"TIKTOKEN_CACHE_DIR": dir,
	} {
		if err := os.Setenv(k, v); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	for _, k := range []string{"NO_PROXY", "no_proxy", "DATA_GYM_CACHE_DIR"} {
		if err := os.Unsetenv(k); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}
