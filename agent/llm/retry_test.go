package llm_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"retrace/agent/llm"
	"retrace/agent/llmserver"
)

// The wait a server asks for is honoured up to Config.MaxRetryWait (60 s
// by default) inclusive; past it the call fails at once, saying why.
func TestRetryAfterHonoured(t *testing.T) {
	for name, tc := range map[string]struct {
		resp llmserver.Response
		wait time.Duration
	}{
		"Retry-After in seconds":             {llmserver.RateLimit("2"), 2 * time.Second},
		"Retry-After with a fraction":        {llmserver.RateLimit("1.5"), 1500 * time.Millisecond},
		"Retry-After exactly the 60 s limit": {llmserver.RateLimit("60"), 60 * time.Second},
		"retry-after-ms first":               {llmserver.WithHeaders(llmserver.RateLimit("7"), "retry-after-ms", "250"), 250 * time.Millisecond},
		// retry-after-ms 0 asks for no wait: the Retry-After beside it is
		// what the server wants.
		"retry-after-ms 0 falls back": {llmserver.WithHeaders(llmserver.RateLimit("3"), "retry-after-ms", "0"), 3 * time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			h.srv.Enqueue(tc.resp, llmserver.TextReply("ok"))
			h.ok(t, false)
			if len(h.waits) != 1 || h.waits[0] != tc.wait {
				t.Fatalf("waits %v, want [%v]", h.waits, tc.wait)
			}
		})
	}
}

func TestRetryAfterTooLong(t *testing.T) {
	for name, tc := range map[string]struct {
		retryAfter, hint string
	}{
		"61 s": {"61", "the server asks to wait 1m1s, longer than retrace waits; try again later"},
		// An HTTP date an hour away: the wait is whatever is left of the
		// hour when the header is read, so only the sentence is pinned.
		"an HTTP date": {time.Now().Add(time.Hour).UTC().Format(http.TimeFormat), ""},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			h.srv.Enqueue(llmserver.RateLimit(tc.retryAfter))
			_, err := h.stream(t, false)
			e := wantKind(t, err, llm.KindRateLimit)
			if len(h.waits) != 0 || len(h.srv.Requests()) != 1 {
				t.Fatalf("waited %v over %d requests; a wait past the limit fails at once", h.waits, len(h.srv.Requests()))
			}
			if tc.hint != "" && e.Hint != tc.hint {
				t.Fatalf("hint %q, want %q", e.Hint, tc.hint)
			}
			if tc.hint == "" && !strings.Contains(e.Hint, "longer than retrace waits") {
				t.Fatalf("hint %q", e.Hint)
			}
		})
	}
	// Config.MaxRetryWait moves the limit.
	h := newHarness(t, func(c *llm.Config) { c.MaxRetryWait = 5 * time.Second })
	h.srv.Enqueue(llmserver.RateLimit("5"), llmserver.TextReply("ok"), llmserver.RateLimit("6"))
	h.ok(t, false)
	_, err := h.stream(t, false)
	wantKind(t, err, llm.KindRateLimit)
	if len(h.waits) != 1 || h.waits[0] != 5*time.Second {
		t.Fatalf("waits %v", h.waits)
	}
}

// Without a wait from the server the client backs off 0.5 s, doubling to
// at most 8 s, less up to a quarter of jitter (openai-python's schedule).
func TestBackoffSchedule(t *testing.T) {
	h := newHarness(t, func(c *llm.Config) { c.MaxTries = 9 })
	for range 8 {
		h.srv.Enqueue(llmserver.ServerError())
	}
	h.srv.Enqueue(llmserver.TextReply("ok"))
	h.ok(t, false)
	full := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second,
		8 * time.Second, 8 * time.Second, 8 * time.Second, 8 * time.Second}
	if len(h.waits) != len(full) {
		t.Fatalf("waits %v, want %d", h.waits, len(full))
	}
	for i, d := range full {
		if w := h.waits[i]; w < d*3/4 || w > d {
			t.Errorf("wait %d is %v, want within [%v, %v]", i+1, w, d*3/4, d)
		}
		if r := h.retry[i]; r.Attempt != i+2 || r.Of != 9 || r.Wait != h.waits[i] || r.Restart {
			t.Errorf("retry %d: %+v", i+1, r)
		}
	}
	// Retry-After 0 asks for no particular wait: the backoff applies.
	h = newHarness(t)
	h.srv.Enqueue(llmserver.RateLimit("0"), llmserver.TextReply("ok"))
	h.ok(t, false)
	if len(h.waits) != 1 || h.waits[0] < 375*time.Millisecond || h.waits[0] > 500*time.Millisecond {
		t.Fatalf("waits %v", h.waits)
	}
}

// MaxTries counts every attempt, the first included.
func TestAttemptLimit(t *testing.T) {
	for _, tc := range []struct{ tries, failures, requests int }{
		{1, 1, 1}, {3, 2, 3}, {3, 3, 3}, {0, 4, 4}, // 0: the default, 4
	} {
		h := newHarness(t, func(c *llm.Config) { c.MaxTries = tc.tries })
		for range tc.failures {
			h.srv.Enqueue(llmserver.ServerError())
		}
		h.srv.Enqueue(llmserver.TextReply("ok"))
		_, err := h.stream(t, false)
		if n := len(h.srv.Requests()); n != tc.requests {
			t.Errorf("MaxTries %d, %d failures: %d requests, want %d", tc.tries, tc.failures, n, tc.requests)
		}
		if succeeded := tc.failures < tc.requests; succeeded != (err == nil) {
			t.Errorf("MaxTries %d, %d failures: err %v", tc.tries, tc.failures, err)
		}
	}
}

// The person watching is told why a retry happens, with what the server said.
func TestRetryReason(t *testing.T) {
	h := newHarness(t)
	h.srv.Enqueue(llmserver.Status(503, llmserver.ErrorBody("busy", "server_error", "", nil)),
		llmserver.Status(502, ""), llmserver.TextReply("ok"))
	h.ok(t, false)
	if len(h.retry) != 2 {
		t.Fatalf("retries %+v", h.retry)
	}
	for i, want := range []string{"the model server failed (HTTP 503): busy", "the model server failed (HTTP 502)"} {
		if got := h.retry[i]; got.Reason != want || got.Attempt != i+2 || got.Of != 4 {
			t.Errorf("retry %d: %+v, want reason %q", i+1, got, want)
		}
	}
}

// Which failures are retried: transient ones, and whatever the server
// marks with x-should-retry; never what a retry cannot fix.
func TestTransientAndPermanent(t *testing.T) {
	errBody := llmserver.ErrorBody("no", "invalid_request_error", "", nil)
	for name, tc := range map[string]struct {
		resp  llmserver.Response
		kind  llm.Kind
		retry bool
	}{
		"403":                      {llmserver.Status(403, errBody), llm.KindAuth, false},
		"402":                      {llmserver.Status(402, errBody), llm.KindQuota, false},
		"404 naming the model":     {llmserver.Status(404, llmserver.ErrorBody("model 'x' not found", "", "", nil)), llm.KindModel, false},
		"405":                      {llmserver.Status(405, errBody), llm.KindEndpoint, false},
		"408":                      {llmserver.Status(408, errBody), llm.KindServer, true},
		"409":                      {llmserver.Status(409, errBody), llm.KindServer, true},
		"422":                      {llmserver.Status(422, errBody), llm.KindBadRequest, false},
		"499":                      {llmserver.Status(499, errBody), llm.KindBadRequest, false},
		"500":                      {llmserver.Status(500, errBody), llm.KindServer, true},
		"529":                      {llmserver.Status(529, errBody), llm.KindServer, true},
		"429":                      {llmserver.Status(429, errBody), llm.KindRateLimit, true},
		"400 x-should-retry true":  {llmserver.Status(400, errBody, "x-should-retry", "true"), llm.KindBadRequest, true},
		"500 x-should-retry false": {llmserver.Status(500, errBody, "x-should-retry", "FALSE"), llm.KindServer, false},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, func(c *llm.Config) { c.MaxTries = 2 })
			h.srv.Enqueue(tc.resp, tc.resp)
			_, err := h.stream(t, false)
			wantKind(t, err, tc.kind)
			if want := map[bool]int{false: 1, true: 2}[tc.retry]; len(h.srv.Requests()) != want {
				t.Fatalf("%d requests, want %d", len(h.srv.Requests()), want)
			}
		})
	}
}
