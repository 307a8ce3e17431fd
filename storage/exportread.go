package storage

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ReadExport reads an export as `retrace export --format json` writes it,
// from r, without holding it whole: the checkpoints are decoded one at a
// time, and the file contents, which make most of a large export, go
// through a small buffer into a Spool in dir (the system's temporary
// directory when empty). What it holds in memory at once is the
// checkpoints, and no file content at all. The caller closes ex.Spool.
//
// What it accepts and refuses is what DecodeExport does: one such
// document, every field known, nothing after it, at most MaxImportSize
// bytes; a file content's digest is checked by CheckImport.
func ReadExport(r io.Reader, dir string) (ex Export, err error) {
	j := &jsonStream{r: bufio.NewReaderSize(io.LimitReader(r, MaxImportSize+1), 64<<10)}
	var x Exported
	x.Spool, err = newSpool(dir)
	if err != nil {
		return Export{}, err
	}
	defer func() {
		if err != nil {
			_ = x.Spool.Close()
		}
	}()
	if err := j.readExport(&x); err != nil {
		if j.off > MaxImportSize {
			return Export{}, fmt.Errorf("the file is more than %d bytes, the most an export may be: %w", MaxImportSize, ErrInvalid)
		}
		return Export{}, fmt.Errorf("not a retrace export: %v: %w", err, ErrInvalid)
	}
	if err := checkForm(x); err != nil {
		return Export{}, err
	}
	return x.Export, nil
}

// checkForm checks what DecodeExport checks once the JSON is read.
func checkForm(x Exported) error {
	switch {
	case x.Format == "":
		return fmt.Errorf("not a retrace export: it has no \"format\" (want %q): %w", ExportFormat, ErrInvalid)
	case x.Format != ExportFormat:
		return fmt.Errorf("export format %q is not one this retrace reads (%q): %w", x.Format, ExportFormat, ErrInvalid)
	case x.Session.ID == "":
		return fmt.Errorf("the export names no session id: %w", ErrInvalid)
	}
	return nil
}

// jsonStream reads one JSON document a value at a time, counting the
// bytes it has read so that a problem says where it is.
type jsonStream struct {
	r   *bufio.Reader
	off int64
}

func (j *jsonStream) errorf(format string, args ...any) error {
	return fmt.Errorf("at byte %d: %s", j.off, fmt.Sprintf(format, args...))
}

// byte reads the next byte; the end of the input is an error.
func (j *jsonStream) byte() (byte, error) {
	c, err := j.r.ReadByte()
	if errors.Is(err, io.EOF) {
		return 0, errors.New("the JSON ends early (a truncated file?)")
	} else if err != nil {
		return 0, err
	}
	j.off++
	return c, nil
}

// token reads the next byte that is not white space.
func (j *jsonStream) token() (byte, error) {
	for {
		c, err := j.byte()
		if err != nil || !isSpace(c) {
			return c, err
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// expect reads the next token and fails unless it is want.
func (j *jsonStream) expect(want byte) error {
	c, err := j.token()
	if err == nil && c != want {
		err = j.errorf("want %q, found %q", want, c)
	}
	return err
}

// readExport reads the top-level object into x, each field once.
func (j *jsonStream) readExport(x *Exported) error {
	seen := map[string]bool{}
	return j.object(func(key string) error {
		if seen[key] {
			return j.errorf("field %q appears twice", key)
		}
		seen[key] = true
		switch key {
		case "format":
			return j.decode(&x.Format)
		case "session":
			return j.decode(&x.Session)
		case "checkpoints":
			return j.checkpoints(&x.Checkpoints)
		case "blobs":
			return j.object(func(digest string) error {
				return x.Spool.add(digest, &base64Value{j: j})
			}, false)
		}
		return j.errorf("unknown field %q", key)
	}, true)
}

// object reads a JSON object, calling field for each key with the stream
// at its value; field reads the value. The top-level object must end the
// input; any other may be null.
func (j *jsonStream) object(field func(key string) error, top bool) error {
	c, err := j.token()
	if err != nil {
		return err
	}
	if c == 'n' && !top {
		return j.literal("ull")
	}
	if c != '{' {
		return j.errorf("want an object, found %q", c)
	}
	if c, err = j.token(); err != nil {
		return err
	}
	for c != '}' {
		key, err := j.key(c)
		if err != nil {
			return err
		}
		if err := j.expect(':'); err != nil {
			return err
		}
		if err := field(key); err != nil {
			return err
		}
		if c, err = j.token(); err != nil {
			return err
		}
		switch c {
		case '}':
		case ',':
			if c, err = j.token(); err != nil {
				return err
			}
			if c == '}' {
				return j.errorf("a '}' after a ','")
			}
		default:
			return j.errorf("want ',' or '}', found %q", c)
		}
	}
	if top {
		if c, err := j.token(); err == nil {
			return j.errorf("more data follows the export (%q)", c)
		}
	}
	return nil
}

// literal reads the rest of a literal (null's "ull").
func (j *jsonStream) literal(rest string) error {
	for i := range len(rest) {
		c, err := j.byte()
		if err != nil {
			return err
		}
		if c != rest[i] {
			return j.errorf("bad literal")
		}
	}
	return nil
}

// key reads an object's key, whose opening byte c was read.
func (j *jsonStream) key(c byte) (string, error) {
	if c != '"' {
		return "", j.errorf("want a key, found %q", c)
	}
	raw, err := j.rest(c, 1<<10)
	if err != nil {
		return "", err
	}
	var key string
	if err := json.Unmarshal(raw, &key); err != nil {
		return "", j.errorf("bad key: %v", err)
	}
	return key, nil
}

// checkpoints reads the array of checkpoints, one record at a time.
func (j *jsonStream) checkpoints(out *[]Record) error {
	c, err := j.token()
	if err != nil {
		return err
	}
	if c == 'n' {
		return j.literal("ull")
	}
	if c != '[' {
		return j.errorf("\"checkpoints\" holds a JSON %q, not an array", c)
	}
	if c, err = j.token(); err != nil {
		return err
	}
	for i := 1; c != ']'; i++ {
		raw, err := j.rest(c, MaxImportSize)
		if err != nil {
			return err
		}
		var r Record
		if err := strict(raw, &r); err != nil {
			return j.errorf("checkpoint %d: %v", i, err)
		}
		*out = append(*out, r)
		if c, err = j.token(); err != nil {
			return err
		}
		switch c {
		case ']':
		case ',':
			if c, err = j.token(); err != nil {
				return err
			}
			if c == ']' {
				return j.errorf("a ']' after a ','")
			}
		default:
			return j.errorf("want ',' or ']', found %q", c)
		}
	}
	return nil
}

// decode reads one value into v, refusing fields v does not know.
func (j *jsonStream) decode(v any) error {
	c, err := j.token()
	if err != nil {
		return err
	}
	raw, err := j.rest(c, 16<<20)
	if err != nil {
		return err
	}
	if err := strict(raw, v); err != nil {
		return j.errorf("%v", err)
	}
	return nil
}

// strict decodes raw into v, refusing fields v does not know: a field
// this build does not know is something it would drop.
func strict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// rest reads the rest of a value whose first byte c was read, and returns
// it whole, at most limit bytes.
func (j *jsonStream) rest(c byte, limit int) ([]byte, error) {
	buf := []byte{c}
	depth, inString := 0, c == '"'
	switch c {
	case '{', '[':
		depth = 1
	case '"':
	default:
		// A number or a literal ends at the first byte that cannot be
		// part of it; that byte stays for the next read.
		for {
			next, err := j.r.Peek(1)
			if err != nil || bytes.IndexByte([]byte(",]}: \t\r\n"), next[0]) >= 0 {
				return buf, nil
			}
			b, _ := j.byte()
			buf = append(buf, b)
		}
	}
	for depth > 0 || inString {
		if len(buf) > limit {
			return nil, j.errorf("a value of more than %d bytes", limit)
		}
		b, err := j.byte()
		if err != nil {
			return nil, err
		}
		buf = append(buf, b)
		switch {
		case inString && b == '\\':
			e, err := j.byte()
			if err != nil {
				return nil, err
			}
			buf = append(buf, e)
		case b == '"':
			inString = !inString
		case inString:
		case b == '{' || b == '[':
			depth++
		case b == '}' || b == ']':
			depth--
		}
	}
	return buf, nil
}

// base64Value reads a JSON string of base64, as encoding/json writes a
// []byte, and gives the bytes it stands for: a content goes from the
// export to the spool through a buffer of a few KiB.
type base64Value struct {
	j       *jsonStream
	started bool
	done    bool
	quad    []byte // base64 characters not decoded yet
}

func (v *base64Value) Read(p []byte) (int, error) {
	if !v.started {
		v.started = true
		if err := v.j.expect('"'); err != nil {
			return 0, err
		}
	}
	if v.done {
		return 0, io.EOF
	}
	// Read base64 characters until a multiple of four fills what p holds
	// decoded, or the string ends.
	want := max(4, len(p)/3*4)
	for len(v.quad) < want {
		c, err := v.j.byte()
		if err != nil {
			return 0, err
		}
		if c == '"' {
			v.done = true
			break
		}
		if c == '\\' {
			// encoding/json never escapes base64; a writer may escape '/'.
			if e, err := v.j.byte(); err != nil || e != '/' {
				return 0, v.j.errorf("an escape in a file content's base64")
			}
			c = '/'
		}
		v.quad = append(v.quad, c)
	}
	n := len(v.quad)
	if !v.done {
		n -= n % 4
	}
	out, err := base64.StdEncoding.DecodeString(string(v.quad[:n]))
	if err != nil {
		return 0, v.j.errorf("a file content is not base64: %v", err)
	}
	v.quad = append(v.quad[:0], v.quad[n:]...)
	if len(out) > len(p) {
		return 0, v.j.errorf("base64 longer than it decodes to")
	}
	return copy(p, out), nil
}
