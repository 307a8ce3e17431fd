package llmtest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Server serves POST {URL}/chat/completions (URL ends in /v1). Every request
// is decoded, recorded, and checked against the rules strict servers
// enforce; a request that breaks one is answered with the 400 a real server
// sends, and recorded as a violation. A valid request is answered by the
// next scripted Response or, when none is queued, by the handler.
type Server struct {
	// Rules selects provider-specific checks. Set its fields before the
	// first request.
	Rules

	url   string
	ctx   context.Context // ends at Close, so waiting streams let go
	stop  context.CancelFunc
	close func()
	once  sync.Once

	mu         sync.Mutex
	queue      []Response
	handler    func(Request) Response
	requests   []Request
	violations []Violation
}

func newServer() *Server {
	s := &Server{}
	s.ctx, s.stop = context.WithCancel(context.Background())
	return s
}

// NewServer starts a server on 127.0.0.1 for one test and closes it when
// the test ends.
func NewServer(t testing.TB) *Server {
	t.Helper()
	s := newServer()
	hs := httptest.NewUnstartedServer(s)
	hs.Config.BaseContext = func(net.Listener) context.Context { return s.ctx }
	hs.Start()
	s.url = hs.URL + "/v1"
	s.close = func() {
		s.stop()
		hs.CloseClientConnections()
		hs.Close()
	}
	t.Cleanup(s.Close)
	return s
}

// Start serves on addr ("127.0.0.1:0" picks a free port) outside of tests,
// for a demo or development command. The caller must Close it.
func Start(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := newServer()
	hs := &http.Server{
		Handler:           s,
		BaseContext:       func(net.Listener) context.Context { return s.ctx },
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { _ = hs.Serve(ln) }()
	s.url = "http://" + ln.Addr().String() + "/v1"
	s.close = func() {
		s.stop()
		_ = hs.Close()
	}
	return s, nil
}

// URL is the base URL to give a client, including /v1.
func (s *Server) URL() string { return s.url }

// Close stops the server and ends every stream still waiting. It is safe
// to call more than once.
func (s *Server) Close() { s.once.Do(s.close) }

// Enqueue appends scripted responses; valid requests take them in order.
// A rejected request does not consume one: the script describes the
// conversation the test expects, not the mistakes on the way.
func (s *Server) Enqueue(rs ...Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, rs...)
}

// SetHandler answers valid requests once the queue is empty: a scripted
// "demo model" that reacts to what it is sent. Queued responses still go
// first, so a test can inject a 429 into a handler-driven conversation.
func (s *Server) SetHandler(h func(Request) Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = h
}

// Requests returns every request received, in order of arrival.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Violations returns every rule broken so far, in order. Tests of a
// well-behaved client assert that it is empty.
func (s *Server) Violations() []Violation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Violation(nil), s.violations...)
}

// ServeHTTP records and checks the request, then answers it.
// Every server in the process counts what it checked, for a test binary to
// report: how many requests the strict checker saw, and how many it refused.
var checked, rejected atomic.Int64

// Stats reports the requests checked by every server of this process so
// far, and the rule violations found in them.
func Stats() (requests, violations int64) { return checked.Load(), rejected.Load() }

// Summary is Stats as the line a test binary prints at its end.
func Summary() string {
	requests, violations := Stats()
	return fmt.Sprintf("llmtest: %d requests checked against strict servers' rules, %d rejected", requests, violations)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req, bad := Check(body, s.Rules)
	req.Method, req.Path, req.Header = r.Method, r.URL.Path, r.Header.Clone()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		bad = []Violation{{
			Rule:    RuleEndpoint,
			Status:  http.StatusNotFound,
			Message: "Invalid URL (" + r.Method + " " + r.URL.Path + ")",
		}}
	}

	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, req)
	var resp Response
	if len(bad) == 0 {
		resp = s.nextLocked()
		if resp == nil && s.handler == nil {
			bad = []Violation{{
				Rule:    RuleNoScript,
				Status:  http.StatusInternalServerError,
				Message: "llmtest: no scripted response left",
			}}
		}
	}
	for i := range bad {
		bad[i].Request = n
	}
	s.violations = append(s.violations, bad...)
	checked.Add(1)
	rejected.Add(int64(len(bad)))
	h := s.handler
	s.mu.Unlock()

	switch {
	case len(bad) > 0:
		Status(bad[0].status(), bad[0].Body()).serve(w, r)
	case resp != nil:
		resp.serve(w, r)
	default:
		s.serveHandler(h, req, n, w, r)
	}
}

// serveHandler asks the handler outside the lock: a demo model may take
// its time, and may itself look at Requests.
func (s *Server) serveHandler(h func(Request) Response, req Request, n int, w http.ResponseWriter, r *http.Request) {
	if resp := h(req); resp != nil {
		resp.serve(w, r)
		return
	}
	v := Violation{
		Request: n,
		Rule:    RuleNoScript,
		Status:  http.StatusInternalServerError,
		Message: "llmtest: no scripted response left (the handler returned nil)",
	}
	s.mu.Lock()
	s.violations = append(s.violations, v)
	s.mu.Unlock()
	Status(v.Status, v.Body()).serve(w, r)
}

func (s *Server) nextLocked() Response {
	if len(s.queue) == 0 {
		return nil
	}
	r := s.queue[0]
	s.queue = s.queue[1:]
	return r
}
