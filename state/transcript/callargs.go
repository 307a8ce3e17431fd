package transcript

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"strings"
)

// A tool call's arguments as the model wrote them: a JSON object read
// leniently, member by member, so that one member of the wrong type
// spoils only what is said of it.

// args are a JSON object's members in the order the model wrote them.
type args []struct {
	key string
	raw json.RawMessage
}

// parseObject reads text that must be one JSON object and nothing more.
func parseObject(text string) (args, bool) {
	dec := json.NewDecoder(strings.NewReader(text))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var out args
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false
		}
		out = append(out, struct {
			key string
			raw json.RawMessage
		}{key, raw})
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false // something after the object
	}
	return out, true
}

// get is the member named key; the last of several, as encoding/json
// (and so the tools) reads them.
func (a args) get(key string) (json.RawMessage, bool) {
	for i := len(a) - 1; i >= 0; i-- {
		if a[i].key == key {
			return a[i].raw, true
		}
	}
	return nil, false
}

func (a args) str(key string) (string, bool) {
	raw, ok := a.get(key)
	if !ok || !bytes.HasPrefix(raw, []byte(`"`)) {
		return "", false
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

// num is a number member as a person writes it: whole numbers without
// an exponent, others as %g does.
func (a args) num(key string) (string, bool) {
	raw, ok := a.get(key)
	if !ok || string(raw) == "null" {
		return "", false
	}
	var f float64
	if json.Unmarshal(raw, &f) != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return "", false
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10), true
	}
	return strconv.FormatFloat(f, 'g', 6, 64), true
}

func (a args) firstString() (string, bool) {
	for _, m := range a {
		var s string
		if bytes.HasPrefix(m.raw, []byte(`"`)) && json.Unmarshal(m.raw, &s) == nil {
			return s, true
		}
	}
	return "", false
}
