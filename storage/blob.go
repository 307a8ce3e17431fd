package storage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"retrace/state"
)

// Digest returns data's content address, the form state.FileImage.Blob
// takes: "sha256:" and 64 lowercase hex digits.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// CheckBlob says why data is not the content digest names, or returns nil.
// Stores run it on what they are handed and on what they read back: a
// content's digest is its integrity.
func CheckBlob(digest string, data []byte) error {
	if !state.ValidDigest(digest) {
		return fmt.Errorf("%q is not a sha256 digest", digest)
	}
	if got := Digest(data); got != digest {
		return fmt.Errorf("its %d bytes hash to %s", len(data), got)
	}
	return nil
}

// CheckBlobs checks the contents ev carries to the store, before anything
// is written, and returns them with each digest once, in the order given.
// A blob that is not what its digest says is an error wrapping ErrInvalid
// that names the digest.
func CheckBlobs(ev state.Event) ([]state.Blob, error) {
	if len(ev.Blobs) == 0 {
		return nil, nil
	}
	out := make([]state.Blob, 0, len(ev.Blobs))
	seen := make(map[string]bool, len(ev.Blobs))
	for _, b := range ev.Blobs {
		if err := CheckBlob(b.Digest, b.Data); err != nil {
			return nil, fmt.Errorf("%s carries file content %s, but %v: %w", ev.Kind, b.Digest, err, ErrInvalid)
		}
		if !seen[b.Digest] {
			seen[b.Digest] = true
			out = append(out, b)
		}
	}
	return out, nil
}

// CheckReferences refuses an event that refers to content nobody kept:
// every digest its files name must be among the contents it carries or
// held by the store. The error wraps ErrBlobNotFound and names the first
// digest that is neither.
func CheckReferences(ev state.Event, carried []state.Blob, held func(digest string) bool) error {
	// A set, not a search of carried for each digest: a command that made
	// a hundred thousand files carries as many contents.
	have := make(map[string]bool, len(carried))
	for _, b := range carried {
		have[b.Digest] = true
	}
	for _, d := range ev.BlobDigests() {
		if !have[d] && !held(d) {
			return fmt.Errorf("%s refers to file content %s, which it does not carry and the store does not hold: %w", ev.Kind, d, ErrBlobNotFound)
		}
	}
	return nil
}

// BlobsReader is a store that reads many contents in one go: one
// transaction, or one query, where Blob takes one each. What `show` and a
// diff of a command that changed thousands of files read through it.
type BlobsReader interface {
	// Blobs calls fn with each content digests name, in their order, each
	// checked as Blob checks it; it stops at the first error, fn's or its
	// own (ErrBlobNotFound for a content the store does not hold).
	Blobs(ctx context.Context, digests []string, fn func(digest string, data []byte) error) error
}
