package storage

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// exportJSON is a small export whose one content is given as base64.
func exportJSON(digest, content string) string {
	return `{"format":"retrace-export/1","session":{"id":"s1","title":"t","model":"m","workspace":"/w","created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T03:04:05Z","head":0,"versions":0,"phase":"idle"},` +
		`"checkpoints":[],"blobs":{"` + digest + `":"` + content + `"}}`
}

// ReadExport keeps the contents in its spool, not in memory, each read
// back checked against its digest.
func TestReadExportSpoolsContents(t *testing.T) {
	data := bytes.Repeat([]byte("a line of a file\n"), 5000)
	d := Digest(data)
	ex, err := ReadExport(strings.NewReader(exportJSON(d, base64.StdEncoding.EncodeToString(data))), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Spool.Close()
	if len(ex.Blobs) != 0 {
		t.Errorf("ReadExport holds %d contents in memory", len(ex.Blobs))
	}
	got, err := ex.Content(d)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("content read back: %d bytes, %v", len(got), err)
	}
	if err := ex.checkContent(d); err != nil {
		t.Errorf("checkContent: %v", err)
	}
}

// OpenContent reads a content back in pieces, as its spool holds it, and
// a content that changed in the spool since it was read in fails at its
// end, as invalid input naming the digest, never as a quiet io.EOF.
func TestOpenContentChecksWhatItReads(t *testing.T) {
	data := bytes.Repeat([]byte("a line of a file\n"), 5000)
	d := Digest(data)
	ex, err := ReadExport(strings.NewReader(exportJSON(d, base64.StdEncoding.EncodeToString(data))), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Spool.Close()
	r, err := ex.OpenContent(d)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(iotest.OneByteReader(r)); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back: %d bytes, %v", len(got), err)
	}
	if _, err := ex.Spool.f.WriteAt([]byte("A"), ex.Spool.where[d].off+100); err != nil {
		t.Fatal(err)
	}
	if r, err = ex.OpenContent(d); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(r); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), d) {
		t.Fatalf("a content changed in the spool: %v", err)
	}
	if _, err := (Export{Blobs: map[string][]byte{d: data[1:]}}).OpenContent(d); err != nil {
		t.Fatal(err)
	}
	r, _ = (Export{Blobs: map[string][]byte{d: data[1:]}}).OpenContent(d)
	if _, err := io.ReadAll(r); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a content in memory that does not match: %v", err)
	}
}

// What DecodeExport refuses, ReadExport refuses, as invalid input that
// says where.
func TestReadExportRefusesBadInput(t *testing.T) {
	d := Digest([]byte("x"))
	good := exportJSON(d, base64.StdEncoding.EncodeToString([]byte("x")))
	for name, c := range map[string]struct{ in, want string }{
		"not base64":       {exportJSON(d, "!!!!"), "not base64"},
		"an escape":        {exportJSON(d, `\u0041`), "escape"},
		"trailing data":    {good + "{}", "more data follows"},
		"unknown field":    {strings.Replace(good, `"format"`, `"extra":1,"format"`, 1), `unknown field "extra"`},
		"twice":            {strings.Replace(good, `"checkpoints":[]`, `"checkpoints":[],"checkpoints":[]`, 1), "appears twice"},
		"truncated":        {good[:len(good)-10], "ends early"},
		"a trailing comma": {good[:len(good)-1] + ",}", "after a ','"},
		"no format":        {strings.Replace(good, `"format":"retrace-export/1",`, "", 1), `no "format"`},
	} {
		t.Run(name, func(t *testing.T) {
			ex, err := ReadExport(strings.NewReader(c.in), t.TempDir())
			if err == nil {
				ex.Spool.Close()
				t.Fatal("accepted")
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want ErrInvalid saying %q", err, c.want)
			}
		})
	}
	// A content that is not what its digest says is CheckImport's to
	// refuse, naming the digest.
	ex, err := ReadExport(strings.NewReader(exportJSON(d, base64.StdEncoding.EncodeToString([]byte("y")))), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Spool.Close()
	if err := ex.checkContent(d); err == nil || !strings.Contains(err.Error(), "hash to") {
		t.Errorf("checkContent of the wrong bytes: %v", err)
	}
}
