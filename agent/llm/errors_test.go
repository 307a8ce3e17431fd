package llm_test

import (
	"strings"
	"testing"

	"retrace/agent/llm"
	"retrace/agent/llmserver"
)

// What a person reads when a call fails: the summary, the HTTP status,
// what the server said and what to do, word for word.
func TestErrorText(t *testing.T) {
	for name, tc := range map[string]struct {
		resp llmserver.Response
		kind llm.Kind
		want string
	}{
		"401": {llmserver.Status(401, llmserver.ErrorBody("Incorrect API key provided: "+testKey+".", "invalid_request_error", "", "invalid_api_key")),
			llm.KindAuth, "the endpoint rejected the API key (HTTP 401): Incorrect API key provided: [the API key]. " +
				"(check the API key: OPENAI_API_KEY, --api-key, or api_key_env in the config file)"},
		"quota": {llmserver.Status(429, llmserver.ErrorBody("You exceeded your current quota.", "insufficient_quota", "", "insufficient_quota")),
			llm.KindQuota, "out of quota (HTTP 429): You exceeded your current quota. (add credits or raise the quota with your provider; retrying will not help)"},
		"overflow": {llmserver.Status(400, llmserver.ErrorBody("This model's maximum context length is 8192 tokens.", "invalid_request_error", "messages", "context_length_exceeded")),
			llm.KindContextOverflow, "the conversation is longer than the model's context window (HTTP 400): This model's maximum context length is 8192 tokens."},
		"model": {llmserver.Status(404, llmserver.ErrorBody("The model `gpt-test` does not exist.", "invalid_request_error", "", "model_not_found")),
			llm.KindModel, "the model is not available (HTTP 404): The model `gpt-test` does not exist. (model \"gpt-test\" is not served at {url}; check --model or RETRACE_MODEL)"},
		"404 with a bare error string": {llmserver.Status(404, `{"error":"Unexpected endpoint"}`),
			llm.KindEndpoint, "this does not look like an OpenAI-compatible API (HTTP 404): Unexpected endpoint (check --base-url (now {url}); OpenAI-compatible URLs usually end in /v1)"},
		"404 with no body": {llmserver.Status(404, ""),
			llm.KindEndpoint, "this does not look like an OpenAI-compatible API (HTTP 404): no OpenAI-style error in the response (check --base-url (now {url}); OpenAI-compatible URLs usually end in /v1)"},
		"500 with no body": {llmserver.Status(500, ""),
			llm.KindServer, "the model server failed (HTTP 500) (the server had a problem; try again, or check its logs)"},
		"vLLM's message list": {llmserver.Status(400, `{"object":"error","message":["messages: field required","tools: bad type"],"type":"BadRequestError","code":400}`),
			llm.KindBadRequest, "the endpoint refused the request (HTTP 400): messages: field required; tools: bad type (the server explained why above)"},
		"error_message": {llmserver.Status(400, `{"error_message":"Invalid model parameter"}`),
			llm.KindBadRequest, "the endpoint refused the request (HTTP 400): Invalid model parameter (the server explained why above)"},
		"an HTML page": {llmserver.Status(403, "<html><head><title>403 Forbidden</title></head>\n<body><h1>Forbidden</h1></body></html>"),
			llm.KindAuth, "the endpoint rejected the API key (HTTP 403): an HTML page (403 Forbidden Forbidden) " +
				"(check the API key: OPENAI_API_KEY, --api-key, or api_key_env in the config file)"},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, func(c *llm.Config) { c.MaxTries = 1 })
			h.srv.Enqueue(tc.resp)
			_, err := h.stream(t, false)
			wantKind(t, err, tc.kind)
			if want := strings.ReplaceAll(tc.want, "{url}", h.srv.URL()); err.Error() != want {
				t.Fatalf("got  %q\nwant %q", err, want)
			}
		})
	}
}

// An error in the middle of a reply says so, and that what came is kept.
func TestMidStreamErrorText(t *testing.T) {
	h := newHarness(t)
	h.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("so far"), llmserver.ErrorData("overloaded", "server_error")))
	_, err := h.stream(t, false)
	e := wantKind(t, err, llm.KindStream)
	if want := "the model server reported an error mid-reply: overloaded (the reply so far is kept; try again)"; err.Error() != want || e.Status != 0 {
		t.Fatalf("got %q, status %d\nwant %q", err, e.Status, want)
	}
}

// The exported Error spells out a status only when there was one.
func TestErrorWithoutStatus(t *testing.T) {
	for _, tc := range []struct {
		e    llm.Error
		want string
	}{
		{llm.Error{}, "the model call failed"},
		{llm.Error{Status: 418}, "the model call failed (HTTP 418)"},
		{llm.Error{Kind: llm.KindServer}, "the model server failed"},
		{llm.Error{Kind: llm.KindServer, Status: 1, Message: "m", Hint: "h"}, "the model server failed (HTTP 1): m (h)"},
		{llm.Error{Kind: llm.KindBadRequest, Message: "m"}, "the endpoint refused the request: m"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.e, got, tc.want)
		}
	}
}

// A body that is not an error object is shown as text, up to 200 bytes.
func TestPlainTextBodyClipped(t *testing.T) {
	for _, tc := range []struct {
		body, message string
	}{
		{strings.Repeat("x", 199), strings.Repeat("x", 199)},
		{strings.Repeat("x", 200), strings.Repeat("x", 200)},
		{strings.Repeat("x", 201), strings.Repeat("x", 200) + "…"},
	} {
		h := newHarness(t)
		h.srv.Enqueue(llmserver.Status(400, tc.body))
		_, err := h.stream(t, false)
		if e := wantKind(t, err, llm.KindBadRequest); e.Message != tc.message {
			t.Errorf("a body of %d bytes: message %q (%d bytes)", len(tc.body), e.Message, len(e.Message))
		}
	}
}

// The key is taken out of everything a failure carries that reaches a
// screen: the message, and text the model streamed before it failed.
func TestKeyRedactedEverywhere(t *testing.T) {
	h := newHarness(t, func(c *llm.Config) { c.APIKey = "sk-live-0123456789abcdef" })
	h.srv.Enqueue(llmserver.Stream(c.Role(), c.Text("your key is sk-live-0123456789abcdef, "), c.Text("right?"),
		llmserver.ErrorData("bad key sk-live-0123456789abcdef echoed twice: sk-live-0123456789abcdef", "server_error")))
	_, err := h.stream(t, false)
	e := wantKind(t, err, llm.KindStream)
	if e.Message != "bad key [the API key] echoed twice: [the API key]" || e.Partial.Content != "your key is [the API key], right?" {
		t.Fatalf("message %q, partial %q", e.Message, e.Partial.Content)
	}

	// Without a key there is nothing to take out, and the text is intact.
	h = newHarness(t, func(c *llm.Config) { c.APIKey = "" })
	h.srv.Enqueue(llmserver.Status(400, llmserver.ErrorBody("Unsupported parameter", "invalid_request_error", "", nil)))
	_, err = h.stream(t, false)
	if e := wantKind(t, err, llm.KindBadRequest); e.Message != "Unsupported parameter" {
		t.Fatalf("message %q", e.Message)
	}
}
