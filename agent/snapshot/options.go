package snapshot

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"retrace/state"
	"retrace/state/transcript"
)

// DefaultMaxFileSize is the size cap when Options.MaxFileSize is zero:
// large enough for any source file, small enough that a stray video or
// database in the workspace does not fill the store.
const DefaultMaxFileSize = 10 << 20

// DefaultMaxCallBytes is the most content one command's changes keep
// when Options.MaxCallBytes is zero.
const DefaultMaxCallBytes = 64 << 20

// DefaultMaxCallFiles is the most file contents one command's changes
// keep when Options.MaxCallFiles is zero.
const DefaultMaxCallFiles = 10_000

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

	// MaxCallFiles bounds how many file contents one command's changes
	// keep: a command that makes a hundred thousand small files has its
	// changes listed, and only the first contents kept. Zero or less
	// means DefaultMaxCallFiles.
	MaxCallFiles int

	// CacheBytes is the content cache's budget, in bytes: past it, a scan
	// evicts what no workspace's files hold any more (see Evict). Zero
	// or less means DefaultCacheBytes.
	CacheBytes int64

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
	if o.CacheBytes <= 0 {
		o.CacheBytes = DefaultCacheBytes
	}
	if o.MaxCallFiles <= 0 {
		o.MaxCallFiles = DefaultMaxCallFiles
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

// CacheDir is the directory of the content cache opts name: theirs, or
// the user's cache directory's.
func CacheDir(opts Options) (string, error) {
	opts, err := opts.withDefaults()
	return opts.CacheDir, err
}

// capReason says why a file's content was not kept, naming the real cap.
func capReason(limit int64) string {
	return "larger than the " + transcript.Size(limit) + " cap"
}

// budgetLead opens the reason of every image whose content a command's
// budget left out, so OverBudget can tell them from the others.
const budgetLead = "the command changed more than "

// callCapReason says why a change's content was not kept: the command
// changed more than the per-call cap of bytes.
func callCapReason(limit int64) string {
	return budgetLead + transcript.Size(limit) + " of files; past that, contents are not kept"
}

// callFilesReason says why a change's content was not kept: the command
// changed more than the per-call cap of files.
func callFilesReason(limit int) string {
	return budgetLead + transcript.Count(limit, "file") + "; past that, contents are not kept"
}

// OverBudget reports whether img was recorded without its content because
// the command that made it changed more than its budget of files or bytes.
func OverBudget(img state.FileImage) bool {
	return strings.HasPrefix(img.Untracked, budgetLead)
}
