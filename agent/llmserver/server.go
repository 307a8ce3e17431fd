package llmserver

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Completions is the one path the server answers; anything else gets the
// 404 a real server sends.
const Completions = "/v1/chat/completions"

// Server serves POST {URL}/chat/completions (URL ends in /v1). Every request
// is decoded and recorded, then answered by the next scripted Response or,
// when none is queued, by the handler. A Gate, when set, stands in between
// and may answer instead.
type Server struct {
	url  string
	ctx  context.Context // ends at Close, so waiting streams let go
	stop context.CancelFunc
	hs   *http.Server
	once sync.Once
	live sync.WaitGroup // answers in flight, which Close waits for

	mu       sync.Mutex
	closed   bool
	queue    []Response
	handler  func(Request) Response
	gate     Gate
	requests []Request
}

// Gate stands between a request and its answer, for a caller that refuses
// some requests by rules the server does not know (llmtest checks what
// strict servers reject). n is the request's index in Requests. answer
// returns what the server would send without a gate: a 404 for an unknown
// endpoint, else the next scripted Response, else the handler's; nil when
// nothing is left. Calling answer takes a scripted response from the
// queue, so a gate that refuses a request should not call it: the script
// describes the conversation a test expects, not the mistakes on the way.
// The gate returns the Response to send; nil sends the server's own 500.
type Gate func(n int, req Request, answer func() Response) Response

// Start serves on addr ("127.0.0.1:0" picks a free port), for a test, the
// demo model or a development command. The caller must Close it.
func Start(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{url: "http://" + ln.Addr().String() + "/v1"}
	s.ctx, s.stop = context.WithCancel(context.Background())
	s.hs = &http.Server{
		Handler:           http.HandlerFunc(s.serve),
		BaseContext:       func(net.Listener) context.Context { return s.ctx },
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { _ = s.hs.Serve(ln) }()
	return s, nil
}

// URL is the base URL to give a client, including /v1.
func (s *Server) URL() string { return s.url }

// Close stops the server, ends every stream still waiting (Pause, Block),
// and returns once every answer in flight has ended, so that no handler
// outlives the test that set it. It is safe to call more than once.
func (s *Server) Close() {
	s.once.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.stop()
		_ = s.hs.Close()
		s.live.Wait()
	})
}

// Enqueue appends scripted responses; requests take them in order.
func (s *Server) Enqueue(rs ...Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, rs...)
}

// SetHandler answers requests once the queue is empty: a scripted "demo
// model" that reacts to what it is sent. Queued responses still go first,
// so a test can inject a 429 into a handler-driven conversation.
func (s *Server) SetHandler(h func(Request) Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = h
}

// SetGate puts g between every later request and its answer; nil removes
// it. A server has one gate: setting another replaces it.
func (s *Server) SetGate(g Gate) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gate = g
}

// Requests returns every request received, in order of arrival.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// noScript is the answer when the queue is empty and there is no handler,
// or the handler (or the gate) returned nil.
var noScript = Status(http.StatusInternalServerError,
	ErrorBody("llmserver: no scripted response left", "server_error", "", nil))

// serve records the request, then answers it through the gate, if any.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req, _ := Decode(body)
	req.Method, req.Path, req.Header = r.Method, r.URL.Path, r.Header.Clone()

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "llmserver: closed", http.StatusServiceUnavailable)
		return
	}
	s.live.Add(1)
	defer s.live.Done()
	n := len(s.requests)
	s.requests = append(s.requests, req)
	gate := s.gate
	s.mu.Unlock()

	answer := func() Response { return s.answer(req) }
	var resp Response
	if gate != nil {
		resp = gate(n, req, answer)
	} else {
		resp = answer()
	}
	if resp == nil {
		resp = noScript
	}
	resp.serve(w, r)
}

// answer is what the server sends by itself. The handler is asked outside
// the lock: a demo model may take its time, and may itself look at
// Requests.
func (s *Server) answer(req Request) Response {
	if req.Method != http.MethodPost || req.Path != Completions {
		return Status(http.StatusNotFound,
			ErrorBody("Invalid URL ("+req.Method+" "+req.Path+")", "invalid_request_error", "", nil))
	}
	s.mu.Lock()
	if len(s.queue) > 0 {
		resp := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		return resp
	}
	h := s.handler
	s.mu.Unlock()
	if h == nil {
		return nil
	}
	return h(req)
}
