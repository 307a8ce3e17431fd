package boltstore

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
	bolt "go.etcd.io/bbolt"

	"retrace/state"
	"retrace/storage"
)

// A file content (blob) is stored under the 32 raw bytes of its SHA-256,
// sealed like every other record (see record.go), so a flipped byte is
// caught by the CRC before any decompression runs. Its payload:
//
//	[0]   codec: 0 the content as is, 1 zstd
//	      uvarint the content's length
//	rest  the content, as the codec says
//
// The checksum guards the record; the digest guards the content: every
// read decompresses and hashes it again, and refuses what does not match
// the key it was found under.
const (
	codecRaw  = 0
	codecZstd = 1
)

// maxBlobSize bounds one content. bbolt refuses values of 2 GiB and more,
// and a read holds the whole content in memory; workspace files past a few
// MiB are not tracked at all. The bound also caps what a damaged length
// could make a read allocate.
const maxBlobSize = 1 << 30

// One encoder and one decoder serve the whole process: both are safe for
// concurrent EncodeAll and DecodeAll, and making them costs far more than
// a small file's compression.
var (
	zstdEncoder = sync.OnceValue(func() *zstd.Encoder {
		// Our seal's CRC and the digest already check every byte, so
		// zstd's own frame checksum would be a third.
		//
		// No input is larger than a chunk (chunk.go), so a window of
		// one chunk loses nothing, and each of the encoders EncodeAll
		// keeps holds a history of 1 MiB, not the default's 8.
		e, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(false), zstd.WithWindowSize(chunkSize), zstd.WithEncoderConcurrency(1))
		if err != nil {
			panic(fmt.Sprintf("zstd encoder: %v", err)) // only bad options fail
		}
		return e
	})
	zstdDecoder = sync.OnceValue(func() *zstd.Decoder {
		// DecodeAll may write no more than the capacity it is given: the
		// length the record declares, never what damaged data claims.
		d, err := zstd.NewReader(nil, zstd.WithDecodeAllCapLimit(true), zstd.WithDecoderMaxMemory(maxBlobSize))
		if err != nil {
			panic(fmt.Sprintf("zstd decoder: %v", err))
		}
		return d
	})
)

// blobKey is a digest as a bucket key: the 32 bytes its hex spells.
// ok is false for anything but "sha256:" and 64 lowercase hex digits.
func blobKey(digest string) ([]byte, bool) {
	h, found := strings.CutPrefix(digest, "sha256:")
	if !found || len(h) != 64 || strings.ToLower(h) != h {
		return nil, false
	}
	k, err := hex.DecodeString(h)
	return k, err == nil
}

// keyDigest is the digest a blob key stands for.
func keyDigest(k []byte) string { return "sha256:" + hex.EncodeToString(k) }

// encodeBlob seals data, compressed when that makes it smaller (text
// does; an image or an archive does not, and is kept as is so reading it
// costs no decompression).
//
// One buffer serves both tries, sized so that it never grows: a large
// content is held twice while it is sealed (as given, and sealed), not
// four times. A large content whose first MiB does not compress is kept
// as is without compressing the rest.
func encodeBlob(data []byte) []byte {
	head := func(buf []byte, codec byte) []byte {
		buf = append(buf[:sealSize], codec)
		return binary.AppendUvarint(buf, uint64(len(data)))
	}
	buf := make([]byte, sealSize, sealSize+1+binary.MaxVarintLen64+len(data)+len(data)>>7+64)
	if compressible(data) {
		z := head(buf, codecZstd)
		if out := zstdEncoder().EncodeAll(data, z); len(out)-len(z) < len(data) {
			return seal(out)
		}
	}
	return seal(append(head(buf, codecRaw), data...))
}

// compressible reports whether compressing data may make it smaller:
// always for a small content, and for a large one when its first MiB
// compresses by a tenth.
func compressible(data []byte) bool {
	const sample = 1 << 20
	if len(data) <= 4*sample {
		return true
	}
	z := zstdEncoder().EncodeAll(data[:sample], make([]byte, 0, sample+sample>>7+64))
	return len(z) < sample*9/10
}

// decodeBlob checks a blob record and returns the content it holds, in
// memory of its own. It does not check the digest: readBlob does.
func decodeBlob(b []byte) ([]byte, error) { return appendBlob(nil, b) }

// appendBlob is decodeBlob appending to dst, as a chunked content's
// chunks are reassembled.
func appendBlob(dst, b []byte) ([]byte, error) {
	p, err := unseal(b)
	if err != nil {
		return nil, err
	}
	return appendPayload(dst, p)
}

// appendPayload is appendBlob of a record unsealed already.
func appendPayload(dst, p []byte) ([]byte, error) {
	if len(p) < 1 {
		return nil, errShort
	}
	codec := p[0]
	size, n := binary.Uvarint(p[1:])
	if n <= 0 {
		return nil, errors.New("bad content length")
	}
	if size > maxBlobSize {
		return nil, fmt.Errorf("content length %d is more than a blob may hold", size)
	}
	body := p[1+n:]
	switch codec {
	case codecRaw:
		if uint64(len(body)) != size {
			return nil, fmt.Errorf("holds %d bytes of content but declares %d", len(body), size)
		}
		return append(slices.Grow(dst, int(size)), body...), nil
	case codecZstd:
		// A zstd block holds at most 128 KiB and takes at least a few
		// bytes, so no data expands by more than 128 KiB a byte: a length
		// past that is damage, and must not size the allocation below.
		if size > uint64(len(body))<<17 {
			return nil, fmt.Errorf("declares %d bytes, more than %d compressed bytes can hold", size, len(body))
		}
		start := len(dst)
		out, err := zstdDecoder().DecodeAll(body, slices.Grow(dst, int(size)))
		if err != nil {
			return nil, fmt.Errorf("decompress: %w", err)
		}
		if uint64(len(out)-start) != size {
			return nil, fmt.Errorf("decompresses to %d bytes but declares %d", len(out)-start, size)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown content codec %d", codec)
}

// prepareBlobs checks the contents ev carries and seals each, before the
// transaction: hashing and compressing a large file is CPU work that must
// not hold the file lock other processes wait on. Contents the file turns
// out to hold already were sealed for nothing, which is the cheaper
// mistake: most contents an event carries are new.
func prepareBlobs(ev state.Event) ([]state.Blob, []sealedBlob, error) {
	blobs, err := storage.CheckBlobs(ev)
	if err != nil {
		return nil, nil, err
	}
	records, err := sealBlobs(ev, blobs)
	return blobs, records, err
}

// sealBlobs encodes contents checked already (by prepareBlobs, or by
// storage.CheckImport for a whole export) as the file keeps them.
func sealBlobs(ev state.Event, blobs []state.Blob) ([]sealedBlob, error) {
	records := make([]sealedBlob, len(blobs))
	for i, b := range blobs {
		if len(b.Data) > maxBlobSize {
			return nil, fmt.Errorf("%s carries file content %s of %d bytes; a blob holds at most %d: %w", ev.Kind, b.Digest, len(b.Data), maxBlobSize, storage.ErrInvalid)
		}
		records[i] = sealContent(b.Data)
	}
	return records, nil
}

// keepBlobs refuses ev if it refers to content neither it nor the file
// holds, and puts every carried content the file does not hold yet. It
// runs in the checkpoint's transaction: both are kept, or neither.
func (s *Store) keepBlobs(tx *bolt.Tx, ev state.Event, blobs []state.Blob, records []sealedBlob) error {
	if len(blobs) == 0 && len(ev.Files) == 0 {
		return nil
	}
	bucket, err := s.blobsOf(tx)
	if err != nil {
		return err
	}
	if err := s.guardBlobs(ev, blobs); err != nil {
		return err
	}
	held := func(d string) bool {
		k, ok := blobKey(d)
		return ok && bucket.Get(k) != nil
	}
	if err := storage.CheckReferences(ev, blobs, held); err != nil {
		return err
	}
	for i, b := range blobs {
		k, _ := blobKey(b.Digest) // CheckBlobs passed: a valid digest
		if bucket.Get(k) != nil {
			continue // content-addressed: what is there is the same
		}
		if err := s.putContent(tx, bucket, k, records[i]); err != nil {
			return fmt.Errorf("keep file content %s: %w", b.Digest, err)
		}
	}
	return nil
}

// putContent puts one sealed content under key: its chunks first, then
// the record that names them.
func (s *Store) putContent(tx *bolt.Tx, blobs *bolt.Bucket, key []byte, sb sealedBlob) error {
	if sb.chunks != nil || sb.staged != nil {
		chunks, err := s.chunksOf(tx)
		if err != nil {
			return err
		}
		if sb.staged != nil {
			err = moveChunks(sb.staged, chunks, key)
		} else {
			err = putChunks(chunks, key, sb.chunks)
		}
		if err != nil {
			return err
		}
	}
	return blobs.Put(key, sb.head)
}

// guardBlobs walks the way to every content ev refers to or carries (see
// guardBlob), before keepBlobs looks any of them up.
func (s *Store) guardBlobs(ev state.Event, blobs []state.Blob) error {
	digests := ev.BlobDigests()
	for _, b := range blobs {
		digests = append(digests, b.Digest)
	}
	for _, d := range digests {
		if k, ok := blobKey(d); ok {
			if err := s.guardBlob(k); err != nil {
				return err
			}
		}
	}
	return nil
}

// Blob returns the file content with the given digest, checked against
// the digest.
func (s *Store) Blob(ctx context.Context, digest string) ([]byte, error) {
	if _, ok := blobKey(digest); !ok {
		return nil, fmt.Errorf("file content %q: not a sha256 digest: %w", digest, storage.ErrInvalid)
	}
	var data []byte
	err := s.viewIn(ctx, fileHead, func(tx *bolt.Tx) error {
		c, err := s.contentsOf(tx)
		if err != nil {
			return err
		}
		data, err = s.blobIn(c, digest)
		return err
	})
	if errors.Is(err, errNoFile) {
		return nil, s.noBlob(digest)
	}
	return data, err
}

// Blobs reads many contents in one read transaction (see
// storage.BlobsReader).
func (s *Store) Blobs(ctx context.Context, digests []string, fn func(digest string, data []byte) error) error {
	err := s.viewIn(ctx, fileHead, func(tx *bolt.Tx) error {
		c, err := s.contentsOf(tx)
		if err != nil {
			return err
		}
		for _, d := range digests {
			data, err := s.blobIn(c, d)
			if err != nil {
				return err
			}
			if err := fn(d, data); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, errNoFile) && len(digests) > 0 {
		return s.noBlob(digests[0])
	}
	return err
}

func (s *Store) noBlob(digest string) error {
	return fmt.Errorf("%s holds no file content %s: %w", s.path, digest, storage.ErrBlobNotFound)
}

// blobIn reads one content from the blobs bucket: decoded into memory of
// its own (bbolt's dies with the transaction) and checked against its
// digest. It runs inside the transaction, so damage it finds stops the
// store writing, as damage any read finds does.
func (s *Store) blobIn(c contents, digest string) ([]byte, error) {
	k, ok := blobKey(digest)
	if !ok {
		return nil, fmt.Errorf("file content %q: not a sha256 digest: %w", digest, storage.ErrInvalid)
	}
	if err := s.guardBlob(k); err != nil {
		return nil, err
	}
	raw := c.blobs.Get(k)
	if raw == nil {
		return nil, s.noBlob(digest)
	}
	return s.readBlob(c, digest, raw)
}

// contents are the two buckets a file content may be read from.
type contents struct{ blobs, chunks *bolt.Bucket }

func (s *Store) contentsOf(tx *bolt.Tx) (contents, error) {
	blobs, err := s.blobsOf(tx)
	if err != nil {
		return contents{}, err
	}
	chunks, err := s.chunksOf(tx)
	return contents{blobs: blobs, chunks: chunks}, err
}

// readBlob decodes a blob record, and a chunked content's chunks, and
// checks the content against its digest.
func (s *Store) readBlob(c contents, digest string, raw []byte) ([]byte, error) {
	var data []byte
	var size uint64
	chunked := false
	p, err := unseal(raw)
	if err == nil {
		size, chunked, err = chunkedPayload(p)
	}
	switch {
	case err == nil && chunked:
		k, _ := blobKey(digest) // the caller found raw under it
		if err = s.guardChunks(k); err != nil {
			return nil, err
		}
		data, err = readChunks(c.chunks, k, size)
	case err == nil:
		data, err = appendPayload(nil, p)
	}
	if err == nil {
		err = storage.CheckBlob(digest, data)
	}
	if err != nil {
		return nil, &storage.CorruptError{Path: s.path, Blob: digest, Reason: err.Error()}
	}
	if data == nil {
		// An empty content is empty, not absent: JSON writes it as "",
		// where nil is null, which no import reads.
		data = []byte{}
	}
	return data, nil
}
