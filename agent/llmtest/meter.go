package llmtest

import (
	"io"
	"net/http"
	"sync/atomic"
)

// Meter is an HTTP client that counts the response bytes its caller
// read: what a test of a bound on replies checks, that the client
// stopped reading, not only that it refused.
type Meter struct{ n atomic.Int64 }

// Do sends req with the default client and counts what is read of the
// response's body.
func (m *Meter) Do(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body = &meteredBody{ReadCloser: resp.Body, n: &m.n}
	}
	return resp, err
}

// Read is how many response bytes were read so far.
func (m *Meter) Read() int64 { return m.n.Load() }

type meteredBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *meteredBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}
