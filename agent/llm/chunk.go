package llm

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"

	"retrace/state"
)

// chunk is one streamed chat.completion.chunk, decoded leniently: fields
// go-openai lacks (delta.reasoning, a top-level error) and values of the
// wrong type (arguments as an object, a numeric id) are read here.
type chunk struct {
	Error   json.RawMessage `json:"error"`
	Choices []struct {
		Index        int     `json:"index"`
		Delta        *delta  `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

type delta struct {
	Content          *string         `json:"content"`
	ReasoningContent *string         `json:"reasoning_content"`
	Reasoning        *string         `json:"reasoning"`
	ToolCalls        []toolDelta     `json:"tool_calls"`
	FunctionCall     *functionDelta  `json:"function_call"`
	Raw              json.RawMessage `json:"-"`
}

type toolDelta struct {
	Index    *int            `json:"index"`
	ID       json.RawMessage `json:"id"`
	Type     string          `json:"type"`
	Function functionDelta   `json:"function"`
}

type functionDelta struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Call is a complete tool call of a finished turn. ArgsError is set when
// the arguments are not valid JSON: the call must not run, and the model is
// told why.
type Call struct {
	state.ToolRequest
	ArgsError string
}

// assembler accumulates tool-call fragments by the rules that survive every
// shape in openai-wire.md §4.8: keyed by index but never trusting it alone,
// a new id at an old index starts a new call (Ollama sends every call at
// index 0), names set once rather than appended blindly (some servers
// repeat them in every fragment), arguments appended as pieces.
type assembler struct {
	calls   []*partialCall
	byIndex map[int]*partialCall
	byID    map[string]*partialCall
	notes   []string
}

type partialCall struct {
	id    string
	name  string
	args  [][]byte
	whole []byte // arguments that came as a JSON object; replace the pieces
}

// add folds tool call fragments into the calls, taking their bytes from
// r's bound of the reply; it fails with r's error for a reply past its
// bounds.
func (a *assembler) add(tds []toolDelta, r *reader) error {
	if a.byIndex == nil {
		a.byIndex, a.byID = map[int]*partialCall{}, map[string]*partialCall{}
	}
	for _, td := range tds {
		id := rawID(td.ID)
		cur := a.find(td, id)
		if cur == nil {
			if len(a.calls) >= r.bound.calls {
				return r.tooManyCalls()
			}
			cur = &partialCall{}
			a.calls = append(a.calls, cur)
		}
		if td.Index != nil {
			a.byIndex[*td.Index] = cur
		}
		if cur.id == "" && id != "" {
			if err := r.take(len(id), "the id of a tool call"); err != nil {
				return err
			}
			cur.id = id
		}
		if cur.id != "" {
			a.byID[cur.id] = cur
		}
		if n := td.Function.Name; n != "" && n != cur.name {
			if err := r.take(len(n), "the name of a tool call"); err != nil {
				return err
			}
			if cur.name == "" {
				cur.name = n
			} else {
				cur.name += n // a name sent in fragments
			}
		}
		if err := a.addArgs(cur, td.Function.Arguments, r); err != nil {
			return err
		}
	}
	return nil
}

// find returns the call a fragment continues, or nil if it starts one.
func (a *assembler) find(td toolDelta, id string) *partialCall {
	if c := a.byID[id]; id != "" && c != nil {
		return c // the id repeated in every fragment
	}
	if td.Index != nil {
		c := a.byIndex[*td.Index]
		if c != nil && id != "" && c.id != "" {
			return nil // a new id at a used index: Ollama's parallel calls
		}
		return c
	}
	if id == "" && td.Function.Name == "" && len(a.calls) > 0 {
		return a.calls[len(a.calls)-1] // an index-less fragment continues the open call
	}
	return nil
}

func (a *assembler) addArgs(c *partialCall, raw json.RawMessage, r *reader) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	where := "the arguments of " + clip(c.name, 64)
	if c.name == "" {
		where = "the arguments of a tool call"
	}
	if raw[0] == '"' {
		var piece string
		if json.Unmarshal(raw, &piece) == nil && piece != "" {
			if err := r.take(len(piece), where); err != nil {
				return err
			}
			c.args = append(c.args, []byte(piece))
		}
		return nil
	}
	// Arguments sent as a JSON object (some gateways): keep it as the
	// string the API says it is.
	if err := r.take(len(raw), where); err != nil {
		return err
	}
	c.whole = append([]byte(nil), raw...)
	a.notes = append(a.notes, "the server sent tool arguments as a JSON object; converted to a string")
	return nil
}

// finish returns the complete calls: an id made up where the server sent
// none, "{}" for no arguments, and invalid JSON flagged, never run.
func (a *assembler) finish() []Call {
	out := make([]Call, 0, len(a.calls))
	for _, c := range a.calls {
		if c.name == "" && c.id == "" && len(c.args) == 0 && c.whole == nil {
			continue // a phantom entry, nothing in it
		}
		args := string(bytes.Join(c.args, nil))
		if c.whole != nil {
			args = string(c.whole)
		}
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		call := Call{ToolRequest: state.ToolRequest{ID: c.id, Name: c.name, Arguments: args}}
		if call.ID == "" {
			call.ID = newCallID()
		}
		if !json.Valid([]byte(args)) {
			call.ArgsError = fmt.Sprintf("the arguments are not valid JSON: %s", clip(args, 200))
		} else if !isObject(args) {
			call.ArgsError = fmt.Sprintf("the arguments must be a JSON object, got %s", clip(args, 200))
		}
		out = append(out, call)
	}
	return out
}

func isObject(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "{")
}

// rawID reads a tool call id that may be a string or a number.
func rawID(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// newCallID makes an id for a call the server sent without one: nine
// alphanumerics, the one format every server accepts back (Mistral
// requires it).
func newCallID() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var b [9]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:])
}
