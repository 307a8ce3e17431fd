package llmserver_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/sashabaranov/go-openai"

	"retrace/agent/llmserver"
)

// newPlain starts a server with no gate, as the demo model runs.
func newPlain(t *testing.T) *llmserver.Server {
	t.Helper()
	srv, err := llmserver.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// TestWithoutGate shows the server's own answers when nothing is scripted
// and when the path is wrong: what the demo model sends, with no checker.
func TestWithoutGate(t *testing.T) {
	srv := newPlain(t)
	tr := stream(t, newClient(srv), ask("hi"))
	var apiErr *openai.APIError
	if !errors.As(tr.err, &apiErr) || apiErr.HTTPStatusCode != http.StatusInternalServerError ||
		apiErr.Message != "llmserver: no scripted response left" {
		t.Fatalf("empty script: %v", tr.err)
	}

	resp, err := http.Post(srv.URL()+"/completions", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "Invalid URL (POST /v1/completions)") {
		t.Errorf("unknown endpoint: %d %s", resp.StatusCode, body)
	}

	// A body no strict server would take is still answered from the script.
	srv.Enqueue(llmserver.TextReply("taken"))
	req := ask("hi")
	req.Model = ""
	if tr := stream(t, newClient(srv), req); tr.err != nil || tr.text != "taken" {
		t.Errorf("no model, no gate: %q, %v", tr.text, tr.err)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests recorded, want 3", n)
	}
}

// TestGateRefusesWithoutTakingTheScript drives the hook the way a checker
// does: refuse the first request, pass the second on to the script.
func TestGateRefusesWithoutTakingTheScript(t *testing.T) {
	srv := newPlain(t)
	srv.Enqueue(llmserver.TextReply("scripted"))
	var (
		mu   sync.Mutex
		seen []int
	)
	srv.SetGate(func(n int, req llmserver.Request, answer func() llmserver.Response) llmserver.Response {
		mu.Lock()
		seen = append(seen, n)
		mu.Unlock()
		if req.Messages[0].Content == "refuse me" {
			return llmserver.Status(http.StatusBadRequest, llmserver.ErrorBody("refused", "invalid_request_error", "", nil))
		}
		return answer()
	})
	client := newClient(srv)

	tr := stream(t, client, ask("refuse me"))
	var apiErr *openai.APIError
	if !errors.As(tr.err, &apiErr) || apiErr.HTTPStatusCode != http.StatusBadRequest || apiErr.Message != "refused" {
		t.Fatalf("refused request: %v", tr.err)
	}
	if tr := stream(t, client, ask("go on")); tr.err != nil || tr.text != "scripted" {
		t.Fatalf("after a refusal: %q, %v", tr.text, tr.err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0] != 0 || seen[1] != 1 {
		t.Errorf("the gate saw requests %v, want [0 1]", seen)
	}
}

func TestGateReturningNilGetsTheServerFallback(t *testing.T) {
	srv := newPlain(t)
	srv.SetGate(func(int, llmserver.Request, func() llmserver.Response) llmserver.Response { return nil })
	srv.Enqueue(llmserver.TextReply("never taken"))
	tr := stream(t, newClient(srv), ask("hi"))
	var apiErr *openai.APIError
	if !errors.As(tr.err, &apiErr) || apiErr.HTTPStatusCode != http.StatusInternalServerError {
		t.Fatalf("error %v, want the server's 500", tr.err)
	}
	srv.SetGate(nil)
	if tr := stream(t, newClient(srv), ask("hi")); tr.text != "never taken" {
		t.Errorf("the queue lost its response: %q, %v", tr.text, tr.err)
	}
}

func TestDecodeReportsTypeErrors(t *testing.T) {
	tests := []struct {
		name, body string
		want       []llmserver.TypeError
	}{
		{"not JSON", `{"model":`, []llmserver.TypeError{{Path: "", Want: "an object"}}},
		{"null body", `null`, []llmserver.TypeError{{Path: "", Want: "an object"}}},
		{"messages an object", `{"messages":{}}`, []llmserver.TypeError{{Path: "messages", Want: "an array"}}},
		{"message a string", `{"messages":["hi"]}`, []llmserver.TypeError{{Path: "messages[0]", Want: "an object"}}},
		{"role a number", `{"messages":[{"role":1,"content":"x"}]}`, []llmserver.TypeError{{Path: "messages[0].role", Want: "a string"}}},
		{"content a number", `{"messages":[{"role":"user","content":5}]}`, []llmserver.TypeError{{Path: "messages[0].content", Want: "a string or an array"}}},
		{"tool call a string", `{"messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":["c"]}]}`,
			[]llmserver.TypeError{{Path: "messages[1].tool_calls[0]", Want: "an object"}}},
		{"messages missing", `{"model":"gpt-x"}`, nil},
		{"valid", `{"model":"gpt-x","messages":[{"role":"user","content":"x"}]}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, errs := llmserver.Decode([]byte(tt.body))
			if string(req.Raw) != tt.body {
				t.Errorf("Raw %q", req.Raw)
			}
			if len(errs) != len(tt.want) {
				t.Fatalf("got %+v, want %+v", errs, tt.want)
			}
			for i, e := range errs {
				if e.Path != tt.want[i].Path || e.Want != tt.want[i].Want || len(e.Got) == 0 {
					t.Errorf("error %d = %+v, want %+v", i, e, tt.want[i])
				}
			}
		})
	}
}

// WithText puts the model's words before its calls, in the same reply.
func TestToolCallReplyWithText(t *testing.T) {
	srv, err := llmserver.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.Enqueue(llmserver.ToolCallReply([]llmserver.Call{{ID: "c1", Name: "read_file", Args: `{}`}}, llmserver.WithText("Let me look."), llmserver.WithPieceSize(100)))
	resp, err := http.Post(srv.URL()+"/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	got := string(b)
	text, call := strings.Index(got, `"content":"Let me look."`), strings.Index(got, `"id":"c1"`)
	if text < 0 || call < 0 || text > call {
		t.Fatalf("the text must come first, then the call:\n%s", got)
	}
}
