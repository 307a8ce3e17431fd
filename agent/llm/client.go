package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"retrace/state"
)

// Config says where the model is and how patient to be with it.
type Config struct {
	BaseURL string // e.g. https://api.openai.com/v1 or http://localhost:11434/v1
	APIKey  string // may be empty for local servers
	Model   string
	// HTTPClient sends the requests; default an http.Client without a
	// timeout (a timeout would also cut long streams; IdleTimeout guards
	// against a silent connection instead).
	HTTPClient openai.HTTPDoer
	// MaxTries bounds attempts at one model call, retries included. Default 4.
	MaxTries int
	// MaxRetryWait is the longest Retry-After honoured; a server asking for
	// more fails the call at once. Default 60 s.
	MaxRetryWait time.Duration
	// IdleTimeout aborts a response that sends nothing at all (not even a
	// keep-alive comment) for this long. Default 5 min: long silent tool
	// call generation is normal.
	IdleTimeout time.Duration
	// Sleep waits between retries; tests replace it. Default: a timer that
	// stops early when ctx ends.
	Sleep func(ctx context.Context, d time.Duration) error
	// MaxReply is the most one reply may carry, in bytes: its text, its
	// thinking and its tool calls together. The client stops reading a
	// reply past it, and the call fails. Default DefaultMaxReply.
	MaxReply int
	// MaxCalls is the most tool calls one reply may make; a reply of more
	// fails the call, read no further. Default DefaultMaxCalls.
	MaxCalls int
}

// Client calls one model at one endpoint.
type Client struct {
	oa  *openai.Client
	cfg Config
}

// New returns a client. It does not contact the server.
func New(cfg Config) *Client {
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.MaxTries <= 0 {
		cfg.MaxTries = 4
	}
	if cfg.MaxRetryWait <= 0 {
		cfg.MaxRetryWait = 60 * time.Second
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 5 * time.Minute
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	if cfg.MaxReply <= 0 {
		cfg.MaxReply = DefaultMaxReply
	}
	if cfg.MaxCalls <= 0 {
		cfg.MaxCalls = DefaultMaxCalls
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = cfg.BaseURL
	oc.HTTPClient = doer{base: cfg.HTTPClient}
	// Keep-alive comments (": OPENROUTER PROCESSING", ": keep-alive") come
	// by the hundred while a provider queues; go-openai's default limit of
	// 300 non-data lines would abort such a stream. What they may take
	// in all is bounded by the body's watcher (bounds.maxLine).
	oc.EmptyMessagesLimit = 1 << 30
	return &Client{oa: openai.NewClientWithConfig(oc), cfg: cfg}
}

// Model is the model the client calls.
func (c *Client) Model() string { return c.cfg.Model }

// Tool describes a tool the model may call.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// Request is one model call.
type Request struct {
	Messages []openai.ChatCompletionMessage
	Tools    []Tool
	// RestartOK says the caller can take back text it already showed: a
	// call that fails after output began is then retried from the start.
	// (A TUI can; text printed to stdout cannot be taken back.)
	RestartOK bool
}

// Turn is a finished reply.
type Turn struct {
	Content   string
	Reasoning string
	Calls     []Call
	Finish    string      // finish_reason as the server sent it
	Usage     state.Usage // zero if the server sent none
	Notes     []string    // oddities worth telling a person, none fatal
}

// DeltaKind says what a piece of streamed text is.
type DeltaKind int

// The kinds of streamed text.
const (
	Content DeltaKind = iota
	Reasoning
)

// Retry describes a retry about to happen, for the person watching.
type Retry struct {
	Attempt, Of int
	Wait        time.Duration
	Reason      string
	Restart     bool // output already shown is void: the reply starts over
}

// Observer is told about a call as it happens. Either function may be nil.
type Observer struct {
	Delta func(kind DeltaKind, text string)
	Retry func(Retry)
}

// Stream makes one model call, streaming, with retries.
func (c *Client) Stream(ctx context.Context, req Request, obs Observer) (Turn, error) {
	sc := NewScrub(c.cfg.APIKey)
	for attempt := 1; ; attempt++ {
		scrubbed, flush := sc.observer(obs)
		turn, shown, err := c.once(ctx, req, scrubbed)
		flush()
		if err == nil {
			return sc.turn(turn), nil
		}
		var e *Error
		if errors.As(err, &e) {
			sc.error(e)
		}
		if e == nil || !e.retryable || attempt >= c.cfg.MaxTries || (shown && !req.RestartOK) {
			return Turn{}, err
		}
		wait := e.RetryAfter
		if wait > c.cfg.MaxRetryWait {
			e.Hint = fmt.Sprintf("the server asks to wait %s, longer than retrace waits; try again later", wait.Round(time.Second))
			return Turn{}, e
		}
		if wait == 0 {
			wait = backoff(attempt)
		}
		if obs.Retry != nil {
			obs.Retry(Retry{Attempt: attempt + 1, Of: c.cfg.MaxTries, Wait: wait, Reason: e.summary() + messageSuffix(e), Restart: shown})
		}
		if err := c.cfg.Sleep(ctx, wait); err != nil {
			return Turn{}, &Error{Kind: KindCanceled, err: err}
		}
	}
}

func messageSuffix(e *Error) string {
	if e.Message == "" {
		return ""
	}
	return ": " + clip(e.Message, 120)
}

// backoff is 0.5 s doubling to at most 8 s, with up to 25 % jitter, as
// openai-python does.
func backoff(attempt int) time.Duration {
	d := min(500*time.Millisecond<<(attempt-1), 8*time.Second)
	return d - time.Duration(rand.Int64N(int64(d)/4+1))
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

var errIdle = errors.New("no data from the server")

// once makes one attempt. shown reports whether any text reached the
// observer.
func (c *Client) once(ctx context.Context, req Request, obs Observer) (Turn, bool, error) {
	bound := c.bounds()
	cap := &capture{maxLine: bound.maxLine()}
	cap.touch()
	ctx, cancel := context.WithCancelCause(withCapture(ctx, cap))
	defer cancel(nil)
	go c.watchIdle(ctx, cap, cancel)

	stream, err := c.oa.CreateChatCompletionStream(ctx, c.request(req))
	r := reader{obs: obs, bound: bound}
	if err != nil {
		var big *bodyTooLarge
		if errors.As(err, &big) {
			return Turn{}, false, r.oversizedBody(big) // an error's body, past any reply's
		}
		return Turn{}, false, c.failure(ctx, err, cap)
	}
	defer stream.Close()
	for {
		raw, err := stream.RecvRaw()
		if err != nil {
			return r.end(ctx, err, cap, c)
		}
		if len(raw) == 0 {
			// go-openai read an error frame it could not decode.
			return Turn{}, r.shown, r.streamError(cap.streamError())
		}
		if err := r.consume(raw); err != nil {
			return Turn{}, r.shown, err
		}
	}
}

func (c *Client) bounds() bounds {
	return bounds{reply: c.cfg.MaxReply, calls: c.cfg.MaxCalls, server: c.cfg.BaseURL}
}

func (c *Client) request(req Request) openai.ChatCompletionRequest {
	r := openai.ChatCompletionRequest{
		Model:         c.cfg.Model,
		Messages:      req.Messages,
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	}
	for _, t := range req.Tools {
		r.Tools = append(r.Tools, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: t.Parameters,
		}})
	}
	return r
}

// failure classifies an error, telling a cancel and a silent server apart.
func (c *Client) failure(ctx context.Context, err error, cap *capture) *Error {
	if errors.Is(context.Cause(ctx), errIdle) {
		return &Error{Kind: KindNetwork, retryable: true, err: errIdle,
			Message: fmt.Sprintf("no data for %s", c.cfg.IdleTimeout), Hint: "the server went silent; it may be overloaded"}
	}
	return classify(err, cap, c.cfg)
}

func (c *Client) watchIdle(ctx context.Context, cap *capture, cancel context.CancelCauseFunc) {
	tick := time.NewTicker(min(c.cfg.IdleTimeout/10, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if cap.idleFor() > c.cfg.IdleTimeout {
				cancel(errIdle)
				return
			}
		}
	}
}
