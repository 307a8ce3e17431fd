package llmtest

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"retrace/agent/llmserver"
)

// Server is an llmserver.Server with the strict checker as its gate: every
// request is checked against the rules strict servers enforce; a request
// that breaks one is answered with the error a real server sends, and
// recorded as a violation. A valid request is answered as the bare server
// would answer it.
type Server struct {
	*llmserver.Server
	// Rules selects provider-specific checks. Set its fields before the
	// first request.
	Rules

	mu         sync.Mutex
	violations []Violation
}

// NewServer starts a strict server on 127.0.0.1 for one test and closes
// it when the test ends.
func NewServer(t testing.TB) *Server {
	t.Helper()
	srv, err := llmserver.Start("127.0.0.1:0")
	if err != nil {
		t.Fatalf("llmtest: %v", err)
	}
	t.Cleanup(srv.Close)
	return Strict(srv)
}

// Strict installs the checker as srv's gate, replacing any other, and
// returns the Server that reports what it found. srv may already be
// serving: an end-to-end test checks what retrace sends to the demo
// model, which ships without the checker.
func Strict(srv *llmserver.Server) *Server {
	s := &Server{Server: srv}
	srv.SetGate(s.gate)
	return s
}

// Violations returns every rule broken so far, in order. Tests of a
// well-behaved client assert that it is empty.
func (s *Server) Violations() []Violation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Violation(nil), s.violations...)
}

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

// gate answers a request that breaks a rule with its first violation, and
// passes a valid one on to the script. A valid request the script has no
// answer for is a violation too: the test did not expect it.
func (s *Server) gate(n int, req llmserver.Request, answer func() llmserver.Response) llmserver.Response {
	bad := s.check(req)
	if len(bad) == 0 {
		if resp := answer(); resp != nil {
			s.record(n, nil)
			return resp
		}
		bad = []Violation{{
			Rule:    RuleNoScript,
			Status:  http.StatusInternalServerError,
			Message: "llmtest: no scripted response left",
		}}
	}
	s.record(n, bad)
	return llmserver.Status(bad[0].status(), bad[0].Body())
}

// check applies the endpoint rule, then the rules of Check.
func (s *Server) check(req llmserver.Request) []Violation {
	if req.Method != http.MethodPost || req.Path != llmserver.Completions {
		return []Violation{{
			Rule:    RuleEndpoint,
			Status:  http.StatusNotFound,
			Message: "Invalid URL (" + req.Method + " " + req.Path + ")",
		}}
	}
	_, bad := Check(req.Raw, s.Rules)
	return bad
}

func (s *Server) record(n int, bad []Violation) {
	for i := range bad {
		bad[i].Request = n
	}
	s.mu.Lock()
	s.violations = append(s.violations, bad...)
	s.mu.Unlock()
	checked.Add(1)
	rejected.Add(int64(len(bad)))
}
