package llmserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
)

// Response is how the server answers one request. Build one with
// Status, JSON, Stream, Reset or the scripts (TextReply, ToolCallReply, …).
type Response interface {
	serve(w http.ResponseWriter, r *http.Request)
}

// Status answers with code and body. headers are "Key", "Value" pairs, for
// instance Status(429, body, "Retry-After", "2"). Content-Type defaults to
// application/json when the body looks like JSON and is sniffed otherwise
// (a proxy's HTML 502).
func Status(code int, body string, headers ...string) Response {
	return status{code: code, body: body, headers: pairs(headers)}
}

// JSON answers 200 with a JSON body: a non-stream completion, or a
// server that ignored "stream":true.
func JSON(body string) Response {
	return status{code: http.StatusOK, body: body, headers: [][2]string{{"Content-Type", "application/json"}}}
}

type status struct {
	code    int
	body    string
	headers [][2]string
}

func (st status) serve(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	for _, kv := range st.headers {
		h.Add(kv[0], kv[1])
	}
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", sniff(st.body))
	}
	h.Set("Content-Length", strconv.Itoa(len(st.body)))
	w.WriteHeader(st.code)
	_, _ = w.Write([]byte(st.body))
}

func sniff(body string) string {
	b := bytes.TrimSpace([]byte(body))
	if len(b) > 0 && (b[0] == '{' || b[0] == '[') {
		return "application/json"
	}
	return http.DetectContentType(b)
}

// Stream answers 200 with Content-Type text/event-stream and writes the
// events in order, flushing after each. It writes exactly what the events
// say: a stream that should end with [DONE] must include Done().
func Stream(events ...Event) Response { return stream(events) }

type stream []Event

func (st stream) serve(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	h := w.Header()
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "text/event-stream; charset=utf-8")
	}
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	s := &sink{
		ctx:   r.Context(),
		w:     w,
		flush: rc.Flush,
		hijack: func() (net.Conn, error) {
			conn, _, err := rc.Hijack()
			return conn, err
		},
	}
	if err := rc.Flush(); err != nil {
		return
	}
	for _, e := range st {
		if e.emit(s) != nil {
			return // the client left, or the script reset the connection
		}
	}
}

// Reset closes the TCP connection with RST before any response byte: the
// crash of a server or proxy. The client sees a connection error.
func Reset() Response { return reset{} }

type reset struct{}

func (reset) serve(w http.ResponseWriter, _ *http.Request) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, "llmserver: cannot hijack to reset: "+err.Error(), http.StatusInternalServerError)
		return
	}
	resetConn(conn)
}

// WithHeaders adds response headers to r, for instance the x-ratelimit-*
// headers of a successful stream. headers are "Key", "Value" pairs.
func WithHeaders(r Response, headers ...string) Response {
	return withHeaders{r, pairs(headers)}
}

type withHeaders struct {
	r       Response
	headers [][2]string
}

func (wh withHeaders) serve(w http.ResponseWriter, r *http.Request) {
	for _, kv := range wh.headers {
		w.Header().Add(kv[0], kv[1])
	}
	wh.r.serve(w, r)
}

func pairs(kv []string) [][2]string {
	if len(kv)%2 != 0 {
		panic(fmt.Sprintf("llmserver: headers must be key/value pairs, got %d strings", len(kv)))
	}
	var out [][2]string
	for i := 0; i < len(kv); i += 2 {
		out = append(out, [2]string{kv[i], kv[i+1]})
	}
	return out
}

// RateLimit is OpenAI's 429 with a rate_limit_exceeded body. retryAfter
// becomes the Retry-After header unless it is "".
func RateLimit(retryAfter string) Response {
	body := ErrorBody("Rate limit reached for gpt-x in organization org-llmserver on tokens per min (TPM): "+
		"Limit 30000, Used 29000, Requested 2000. Please try again in 2s.", "tokens", "", "rate_limit_exceeded")
	headers := []string{"x-ratelimit-remaining-requests", "0"}
	if retryAfter != "" {
		headers = append(headers, "Retry-After", retryAfter)
	}
	return Status(http.StatusTooManyRequests, body, headers...)
}

// ServerError is OpenAI's 500 server_error.
func ServerError() Response {
	return Status(http.StatusInternalServerError, ErrorBody("The server had an error processing your request. "+
		"Sorry about that! You can retry your request.", "server_error", "", nil))
}

// ErrorBody builds the standard error envelope
// {"error":{"message":…,"type":…,"param":…,"code":…}}. An empty typ or
// param is sent as null; code may be nil, a string or an int, since real
// servers send all three.
func ErrorBody(message, typ, param string, code any) string {
	body := struct {
		Error struct {
			Message string  `json:"message"`
			Type    *string `json:"type"`
			Param   *string `json:"param"`
			Code    any     `json:"code"`
		} `json:"error"`
	}{}
	body.Error.Message = message
	body.Error.Type = nullable(typ)
	body.Error.Param = nullable(param)
	body.Error.Code = code
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// Real servers do not escape <, > and & as \u003c…; neither do we.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		panic("llmserver: cannot encode an error body: " + err.Error())
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
