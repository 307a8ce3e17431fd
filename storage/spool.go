package storage

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"maps"
	"os"
	"slices"

	"retrace/state"
)

// Spool holds the file contents of an export read by ReadExport: on disk,
// in one temporary file that is gone once closed (or once the process
// ends), and read back one at a time as an import writes them. A content
// is hashed as it is spooled and again as it is read back, so what an
// import keeps is what the export's digest names.
type Spool struct {
	f     *os.File
	size  int64
	where map[string]spooled
}

// spooled is where one content lies in the spool, and what its bytes hash
// to (which an import checks against the digest it was filed under).
type spooled struct {
	off, len int64
	digest   string
}

// newSpool makes an empty spool in dir (the system's temporary directory
// when empty). The file is unlinked at once where the system allows it,
// so a killed import leaves nothing behind.
func newSpool(dir string) (*Spool, error) {
	f, err := os.CreateTemp(dir, "retrace-import-*")
	if err != nil {
		return nil, fmt.Errorf("a temporary file for the export's file contents: %w", err)
	}
	_ = os.Remove(f.Name())
	return &Spool{f: f, where: map[string]spooled{}}, nil
}

// add copies one content from r to the end of the spool, hashing it, and
// files it under digest.
func (s *Spool) add(digest string, r io.Reader) error {
	if _, dup := s.where[digest]; dup {
		return fmt.Errorf("file content %s appears twice", digest)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(&offsetWriter{s.f, s.size}, h), r)
	if err != nil {
		return err
	}
	s.where[digest] = spooled{off: s.size, len: n, digest: "sha256:" + hex.EncodeToString(h.Sum(nil))}
	s.size += n
	return nil
}

// offsetWriter writes to f from off on.
type offsetWriter struct {
	f   *os.File
	off int64
}

func (w *offsetWriter) Write(p []byte) (int, error) {
	n, err := w.f.WriteAt(p, w.off)
	w.off += int64(n)
	return n, err
}

// Digests lists the digests the contents are filed under, sorted.
func (s *Spool) Digests() []string { return slices.Sorted(maps.Keys(s.where)) }

// Has reports whether a content is filed under digest.
func (s *Spool) Has(digest string) bool { _, ok := s.where[digest]; return ok }

// Size is the length of the content filed under digest.
func (s *Spool) Size(digest string) int64 { return s.where[digest].len }

// check says why the content filed under digest is not the content digest
// names, or returns nil.
func (s *Spool) check(digest string) error {
	sp, ok := s.where[digest]
	switch {
	case !state.ValidDigest(digest):
		return fmt.Errorf("%q is not a sha256 digest", digest)
	case !ok:
		return fmt.Errorf("it is not in the export")
	case sp.digest != digest:
		return fmt.Errorf("its %d bytes hash to %s", sp.len, sp.digest)
	}
	return nil
}

// Read returns the content filed under digest, checked against it.
func (s *Spool) Read(digest string) ([]byte, error) {
	if _, ok := s.where[digest]; !ok {
		return nil, fmt.Errorf("file content %s is not in the export: %w", digest, ErrBlobNotFound)
	}
	data, err := s.readUnchecked(digest)
	if err != nil {
		return nil, err
	}
	if err := CheckBlob(digest, data); err != nil {
		return nil, fmt.Errorf("file content %s changed in %s: %v: %w", digest, s.f.Name(), err, ErrInvalid)
	}
	return data, nil
}

// readUnchecked returns the bytes filed under digest, whatever they hash
// to.
func (s *Spool) readUnchecked(digest string) ([]byte, error) {
	sp := s.where[digest]
	data := make([]byte, sp.len)
	if _, err := s.f.ReadAt(data, sp.off); err != nil {
		return nil, fmt.Errorf("read file content %s back from %s: %w", digest, s.f.Name(), err)
	}
	return data, nil
}

// open returns a reader of the content filed under digest, checked
// against digest as it is read (see checkedReader).
func (s *Spool) open(digest string) (io.Reader, error) {
	sp, ok := s.where[digest]
	if !ok {
		return nil, fmt.Errorf("file content %s is not in the export: %w", digest, ErrBlobNotFound)
	}
	where := fmt.Sprintf("file content %s changed in %s", digest, s.f.Name())
	return newCheckedReader(io.NewSectionReader(s.f, sp.off, sp.len), digest, where), nil
}

// Close removes the spool.
func (s *Spool) Close() error {
	err := s.f.Close()
	_ = os.Remove(s.f.Name())
	return err
}

// Content returns the file content ex holds under digest: from its Blobs,
// or read from its Spool.
func (ex Export) Content(digest string) ([]byte, error) {
	if ex.Spool != nil {
		return ex.Spool.Read(digest)
	}
	data, ok := ex.Blobs[digest]
	if !ok {
		return nil, fmt.Errorf("file content %s is not in the export: %w", digest, ErrBlobNotFound)
	}
	return data, nil
}

// OpenContent returns a reader of the file content ex holds under digest,
// so that an import can write a large one a piece at a time. The reader
// checks what it gives against digest: where the bytes hash to anything
// else, its last Read returns an error instead of io.EOF.
func (ex Export) OpenContent(digest string) (io.Reader, error) {
	if ex.Spool != nil {
		return ex.Spool.open(digest)
	}
	data, ok := ex.Blobs[digest]
	if !ok {
		return nil, fmt.Errorf("file content %s is not in the export: %w", digest, ErrBlobNotFound)
	}
	return newCheckedReader(bytes.NewReader(data), digest, "file content "+digest), nil
}

// ContentSize is the length of the content ex holds under digest.
func (ex Export) ContentSize(digest string) int64 {
	if ex.Spool != nil {
		return ex.Spool.Size(digest)
	}
	return int64(len(ex.Blobs[digest]))
}

// contentDigests lists the digests of the contents ex carries, sorted.
func (ex Export) contentDigests() []string {
	if ex.Spool != nil {
		return ex.Spool.Digests()
	}
	return slices.Sorted(maps.Keys(ex.Blobs))
}

// hasContent reports whether ex carries a content under digest.
func (ex Export) hasContent(digest string) bool {
	if ex.Spool != nil {
		return ex.Spool.Has(digest)
	}
	_, ok := ex.Blobs[digest]
	return ok
}

// checkContent says why the content ex carries under digest is not the
// content digest names, or returns nil.
func (ex Export) checkContent(digest string) error {
	if ex.Spool != nil {
		return ex.Spool.check(digest)
	}
	return CheckBlob(digest, ex.Blobs[digest])
}

// checkedReader hashes what it reads and, at the end, compares the sum
// with the digest the content was filed under.
type checkedReader struct {
	r      io.Reader
	h      hash.Hash
	digest string
	where  string // what an error says first
}

func newCheckedReader(r io.Reader, digest, where string) *checkedReader {
	return &checkedReader{r: r, h: sha256.New(), digest: digest, where: where}
}

func (c *checkedReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	if err == io.EOF {
		if got := "sha256:" + hex.EncodeToString(c.h.Sum(nil)); got != c.digest {
			return n, fmt.Errorf("%s: its bytes hash to %s: %w", c.where, got, ErrInvalid)
		}
	}
	return n, err
}
