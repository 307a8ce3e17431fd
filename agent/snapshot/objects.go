package snapshot

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/klauspost/compress/zstd"
)

// codec is the one zstd encoder and decoder every Watcher shares: they are
// costly to build and safe for concurrent EncodeAll and DecodeAll.
var codec = sync.OnceValues(func() (*zstd.Encoder, *zstd.Decoder) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		panic(fmt.Sprintf("zstd encoder with fixed options: %v", err))
	}
	// The cap limit makes DecodeAll stop at the size the caller expects,
	// so a damaged object cannot make us allocate what its header claims.
	dec, err := zstd.NewReader(nil, zstd.WithDecodeAllCapLimit(true))
	if err != nil {
		panic(fmt.Sprintf("zstd decoder with fixed options: %v", err))
	}
	return enc, dec
})

// objects is the content cache: one zstd file per digest under dir, named
// by the digest's hex split after two digits so no directory grows huge.
// It is a cache, not a store: objects are written without fsync, and a
// damaged or missing one reads as "not kept", never as wrong bytes.
type objects struct {
	dir string

	mu   sync.Mutex      // a scan's goroutines put side by side
	made map[string]bool // fan-out directories known to exist
}

func newObjects(dir string) *objects {
	return &objects{dir: dir, made: map[string]bool{}}
}

func (o *objects) path(sum [sha256.Size]byte) (dir, file string) {
	h := hex.EncodeToString(sum[:])
	dir = filepath.Join(o.dir, h[:2])
	return dir, filepath.Join(dir, h[2:]+".zst")
}

// put keeps data under its digest sum, unless an object is already there.
// A concurrent put of the same digest by another process is harmless: both
// rename the same bytes into place.
func (o *objects) put(sum [sha256.Size]byte, data []byte) error {
	dir, file := o.path(sum)
	if _, err := os.Lstat(file); err == nil {
		return nil
	}
	if err := o.makeDir(dir); err != nil {
		return err
	}
	enc, _ := codec()
	return writeAtomic(file, enc.EncodeAll(data, make([]byte, 0, len(data)/2+64)))
}

func (o *objects) makeDir(dir string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.made[dir] {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("make cache directory %s: %w", dir, err)
	}
	o.made[dir] = true
	return nil
}

// get returns the content kept under sum, which must be size bytes long;
// ok is false when the object is missing, damaged, or holds anything else.
func (o *objects) get(sum [sha256.Size]byte, size int64) (data []byte, ok bool) {
	_, file := o.path(sum)
	packed, err := os.ReadFile(file)
	if err != nil {
		return nil, false
	}
	_, dec := codec()
	// One byte of room past size lets a too-long object show itself.
	data, err = dec.DecodeAll(packed, make([]byte, 0, size+1))
	if err != nil || int64(len(data)) != size || sha256.Sum256(data) != sum {
		return nil, false
	}
	return data, true
}

// writeAtomic replaces file with data through a temporary file in the same
// directory, so a reader sees the old file or the new one, never a torn
// one. It does not fsync: it is for caches, which a crash may lose.
func writeAtomic(file string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), ".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", file, err)
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", file, err)
	}
	return nil
}

// isMissing reports whether err means the path is not there, including a
// parent that is a file rather than a directory.
func isMissing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDir)
}

var errNotDir error = syscall.ENOTDIR
