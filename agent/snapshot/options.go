package snapshot

import (
	"fmt"
	"os"
	"path/filepath"

	"retrace/state/transcript"
)

// DefaultMaxFileSize is the size cap when Options.MaxFileSize is zero:
// large enough for any source file, small enough that a stray video or
// database in the workspace does not fill the store.
const DefaultMaxFileSize = 10 << 20

// DefaultMaxCallBytes is the most content one command's changes keep
// when Options.MaxCallBytes is zero.
const DefaultMaxCallBytes = 64 << 20

// Options tune a Watcher. The zero value is ready to use.
type Options struct {
	// MaxFileSize is the largest file whose content is kept, in bytes.
	// A larger file is noted with its size and mode only, and is never
	// read whole into memory. Zero or less means DefaultMaxFileSize.
	MaxFileSize int64

	// Exclude lists gitignore-syntax patterns, relative to the root, for
	// paths the user never wants kept (secrets, build output). They come
	// on top of the workspace's .gitignore files and win over them.
	Exclude []string

	// MaxCallBytes bounds the contents one command's changes keep, in
	// bytes: a build or an install that writes thousands of files must
	// not turn one checkpoint into a copy of them. Past it, changes are
	// recorded without content. Zero or less means DefaultMaxCallBytes.
	MaxCallBytes int64

	// CacheDir holds the content cache, shared by every workspace, and
	// one stat index per workspace. Empty means the user's cache
	// directory: os.UserCacheDir()/retrace/objects.
	CacheDir string
}

// withDefaults fills in what the zero value leaves open.
func (o Options) withDefaults() (Options, error) {
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.MaxCallBytes <= 0 {
		o.MaxCallBytes = DefaultMaxCallBytes
	}
	if o.CacheDir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return o, fmt.Errorf("find the user's cache directory: %w", err)
		}
		o.CacheDir = filepath.Join(base, "retrace", "objects")
	}
	return o, nil
}

// capReason says why a file's content was not kept, naming the real cap.
func capReason(limit int64) string {
	return "larger than the " + transcript.Size(limit) + " cap"
}

// callCapReason says why a change's content was not kept: the command
// changed more than the per-call cap.
func callCapReason(limit int64) string {
	return "the command changed more than " + transcript.Size(limit) + " of files; past that, contents are not kept"
}
