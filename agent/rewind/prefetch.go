package rewind

import (
	"context"

	"retrace/state"
	"retrace/storage"
)

// prefetchBatch bounds one read of contents ahead: enough that a command
// that changed thousands of files costs a few reads of the store, not one
// each, and little enough memory to hold at once.
var prefetchBatch = struct {
	contents int
	bytes    int64
}{contents: 512, bytes: 32 << 20}

// Prefetch is blobs read ahead for changes: when the store reads many
// contents in one go (storage.BlobsReader), the contents the changes
// refer to are read in batches, in the order DiffAll asks for them, and
// only the current batch is held. Any other store is read as it is.
func Prefetch(blobs BlobReader, changes []state.FileChange) BlobReader {
	br, ok := blobs.(storage.BlobsReader)
	if !ok {
		return blobs
	}
	p := &prefetcher{blobs: blobs, many: br, at: map[string]int{}}
	for _, c := range changes {
		if KindOf(c) == NotTracked {
			continue
		}
		for _, img := range []state.FileImage{c.Before, c.After} {
			if img.Blob == "" {
				continue
			}
			if _, dup := p.at[img.Blob]; !dup {
				p.at[img.Blob] = len(p.order)
				p.order = append(p.order, img)
			}
		}
	}
	return p
}

// prefetcher reads ahead along order, the contents in the order they are
// asked for.
type prefetcher struct {
	blobs BlobReader
	many  storage.BlobsReader
	order []state.FileImage
	at    map[string]int // a digest's place in order
	held  map[string][]byte
}

// Blob returns the content digest names: from the batch held, else from
// a new batch starting there; a digest outside the changes is read alone.
func (p *prefetcher) Blob(ctx context.Context, digest string) ([]byte, error) {
	if data, ok := p.held[digest]; ok {
		return data, nil
	}
	i, ok := p.at[digest]
	if !ok {
		return p.blobs.Blob(ctx, digest)
	}
	var batch []string
	var size int64
	for _, img := range p.order[i:] {
		if len(batch) > 0 && (len(batch) >= prefetchBatch.contents || size+img.Size > prefetchBatch.bytes) {
			break
		}
		batch, size = append(batch, img.Blob), size+img.Size
	}
	p.held = make(map[string][]byte, len(batch))
	err := p.many.Blobs(ctx, batch, func(d string, data []byte) error {
		p.held[d] = data
		return nil
	})
	if err != nil {
		// One content the store lacks must not hide the others: this one
		// is read alone, and says what is wrong with it.
		p.held = nil
		return p.blobs.Blob(ctx, digest)
	}
	return p.held[digest], nil
}
