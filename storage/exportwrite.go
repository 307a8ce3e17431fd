package storage

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"slices"
)

// Exporter is what an export reads from a store: a session's records,
// then each file content a piece at a time. Every Store is one.
type Exporter interface {
	// ExportRecords is Export without the file contents: the session and
	// every checkpoint, Blobs nil. It checks, as Export does, that the
	// store holds every content the events refer to (a *CorruptError
	// naming the first version that refers to one it lacks), so that an
	// export fails before it writes anything, not halfway through.
	ExportRecords(ctx context.Context, id string) (Export, error)
	// CopyBlob writes the file content with the given digest to w, a
	// piece at a time: never the whole content in memory, which may be up
	// to a GiB. The content is checked against the digest as it goes, as
	// Blob checks it; where it does not match, the pieces are written and
	// the error is a *CorruptError naming the digest. ErrBlobNotFound and
	// ErrInvalid as for Blob.
	CopyBlob(ctx context.Context, digest string, w io.Writer) error
}

// WriteExport writes session id of st to w as `retrace export --format
// json` does: the bytes encoding/json's Encoder, indenting by two spaces,
// makes of Exported{ExportFormat, st.Export(id)}. It writes as it reads:
// the records first, then each file content the events refer to, in the
// order of their digests (a JSON map's), read a piece at a time through
// CopyBlob and base64-encoded straight into w. What it holds at once is
// the records and a piece of one content.
//
// An error after the first write leaves w with part of an export: a
// content that went missing or reads damaged meanwhile. Nothing is
// written when the records cannot be read.
func WriteExport(ctx context.Context, w io.Writer, st Exporter, id string) error {
	ex, err := st.ExportRecords(ctx, id)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	ew := &exportWriter{w: bw}
	ew.head(ex)
	digests := exportDigests(ex.Checkpoints)
	for i, d := range digests {
		if i == 0 {
			ew.raw(",\n  \"blobs\": {\n    ")
		} else {
			ew.raw(",\n    ")
		}
		ew.value(d, "")
		ew.raw(": \"")
		ew.content(ctx, st, d)
		ew.raw("\"")
	}
	if len(digests) > 0 {
		ew.raw("\n  }")
	}
	ew.raw("\n}\n")
	if ew.err != nil {
		return ew.err
	}
	return bw.Flush()
}

// exportDigests is every content the checkpoints' events refer to, each
// once, sorted: the keys of Export.Blobs as JSON writes them.
func exportDigests(records []Record) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range records {
		for _, d := range r.Data.BlobDigests() {
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	slices.Sort(out)
	return out
}

// exportWriter writes an export's JSON a value at a time, keeping the
// first error.
type exportWriter struct {
	w   *bufio.Writer
	err error
}

func (e *exportWriter) raw(s string) {
	if e.err == nil {
		_, e.err = e.w.WriteString(s)
	}
}

// value writes v as encoding/json indents it at the depth prefix is.
func (e *exportWriter) value(v any, prefix string) {
	if e.err != nil {
		return
	}
	b, err := json.MarshalIndent(v, prefix, "  ")
	if err != nil {
		e.err = err
		return
	}
	_, e.err = e.w.Write(b)
}

// head writes everything before the contents: the format, the session
// and the checkpoints, one record at a time.
func (e *exportWriter) head(ex Export) {
	e.raw("{\n  \"format\": ")
	e.value(ExportFormat, "  ")
	e.raw(",\n  \"session\": ")
	e.value(ex.Session, "  ")
	e.raw(",\n  \"checkpoints\": [")
	for i, r := range ex.Checkpoints {
		if i > 0 {
			e.raw(",")
		}
		e.raw("\n    ")
		e.value(r, "    ")
	}
	if len(ex.Checkpoints) > 0 {
		e.raw("\n  ")
	}
	e.raw("]")
}

// content writes one content's base64 as the store gives it, a piece at
// a time, as encoding/json writes a []byte.
func (e *exportWriter) content(ctx context.Context, st Exporter, digest string) {
	if e.err != nil {
		return
	}
	enc := base64.NewEncoder(base64.StdEncoding, e.w)
	if e.err = st.CopyBlob(ctx, digest, enc); e.err == nil {
		e.err = enc.Close()
	}
}
