package tools

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// param describes one argument of a tool. The JSON Schema the model sees
// and the checks decodeArgs makes are both built from it, so they cannot
// drift apart.
type param struct {
	name     string
	typ      string // JSON Schema type: string, integer, number, boolean or array (of strings)
	desc     string
	required bool
}

// schema is a tool's argument list as a JSON Schema object.
func schema(params []param) json.RawMessage {
	type property struct {
		Type        string            `json:"type"`
		Description string            `json:"description"`
		Items       map[string]string `json:"items,omitempty"`
	}
	props := make(map[string]property, len(params))
	required := []string{}
	for _, p := range params {
		prop := property{Type: p.typ, Description: p.desc}
		if p.typ == "array" {
			prop.Items = map[string]string{"type": "string"}
		}
		props[p.name] = prop
		if p.required {
			required = append(required, p.name)
		}
	}
	b, err := json.Marshal(struct {
		Type       string              `json:"type"`
		Properties map[string]property `json:"properties"`
		Required   []string            `json:"required"`
		Additional bool                `json:"additionalProperties"`
	}{"object", props, required, false})
	if err != nil {
		// Only maps of strings are marshalled; this cannot fail.
		panic(fmt.Sprintf("tools: marshal schema: %v", err))
	}
	return b
}

// decodeArgs checks args (the JSON the model sent for tool) against params
// and decodes it into dst, a pointer to a struct whose json tags are the
// param names. Its errors wrap ErrInvalidArguments and say which field is
// wrong and why, since the model reads them to retry. Empty args and a
// JSON null mean no arguments; a null field means the field was left out.
func decodeArgs(tool string, params []param, args string, dst any) error {
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &fields); err != nil {
		return invalidArgs(tool, err)
	}
	if fields == nil {
		// null: some models send it for "no arguments".
		fields, args = map[string]json.RawMessage{}, "{}"
	}
	if err := checkFields(params, fields); err != nil {
		return invalidArgs(tool, err)
	}
	if err := json.Unmarshal([]byte(args), dst); err != nil {
		return invalidArgs(tool, err)
	}
	return nil
}

// invalidArgs wraps why the arguments of tool were refused.
func invalidArgs(tool string, err error) error {
	return fmt.Errorf("%w for %s: %w", ErrInvalidArguments, tool, err)
}

// checkFields refuses unknown fields (a misspelt start_line would otherwise
// be silently ignored), missing required ones and values of the wrong type.
func checkFields(params []param, fields map[string]json.RawMessage) error {
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = p.name
	}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if !slices.Contains(names, k) {
			if len(names) == 0 {
				return fmt.Errorf("unknown field %q; this tool takes no arguments", shorten(k, 64))
			}
			return fmt.Errorf("unknown field %q; expected: %s", shorten(k, 64), strings.Join(names, ", "))
		}
	}
	for _, p := range params {
		raw, ok := fields[p.name]
		if !ok || string(raw) == "null" {
			if p.required {
				return fmt.Errorf("missing required field %q", p.name)
			}
			continue
		}
		if err := checkType(p, raw); err != nil {
			return err
		}
	}
	return nil
}

// checkType reports whether raw is a value of p's type.
func checkType(p param, raw json.RawMessage) error {
	var err error
	want := "a " + p.typ
	switch p.typ {
	case "string":
		var s string
		err = json.Unmarshal(raw, &s)
	case "number":
		var f float64
		err = json.Unmarshal(raw, &f)
	case "integer":
		// Into an int, so 1.5, 1e3 and numbers past the int range are
		// refused here with a clear message rather than later.
		want = "an integer"
		var n int
		err = json.Unmarshal(raw, &n)
	case "boolean":
		want = "true or false"
		var b bool
		err = json.Unmarshal(raw, &b)
	case "array":
		want = "an array of strings"
		var s []string
		err = json.Unmarshal(raw, &s)
	}
	if err != nil {
		return fmt.Errorf("%q must be %s, got %s", p.name, want, shorten(string(raw), 64))
	}
	return nil
}
