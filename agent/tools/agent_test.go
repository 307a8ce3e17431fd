package tools

import (
	"errors"
	"slices"
	"testing"
)

func TestParseNote(t *testing.T) {
	for _, tc := range []struct {
		args, key, value, err string
	}{
		{`{"key":"test cmd","value":"go test ./..."}`, "test cmd", "go test ./...", ""},
		{`{"key":"  k ","value":"  v  "}`, "k", "v", ""},
		{`{"key":"k","value":""}`, "k", "", ""},
		{`{"key":"k"}`, "", "", `invalid arguments for note: missing required field "value"`},
		{`{"key":" ","value":"v"}`, "", "", "key must not be empty"},
		{`{"key":1,"value":"v"}`, "", "", `"key" must be a string`},
		{`{"key":"k","value":"v","x":1}`, "", "", `unknown field "x"`},
		{`nope`, "", "", "invalid arguments for note"},
	} {
		key, value, err := ParseNote(tc.args)
		if tc.err != "" && !errors.Is(err, ErrInvalidArguments) {
			t.Errorf("ParseNote(%s): %v is not ErrInvalidArguments", tc.args, err)
		}
		t.Run(tc.args, func(t *testing.T) { checkErr(t, err, tc.err) })
		if key != tc.key || value != tc.value {
			t.Errorf("ParseNote(%s) = %q, %q; want %q, %q", tc.args, key, value, tc.key, tc.value)
		}
	}
}

func TestParsePlan(t *testing.T) {
	for _, tc := range []struct {
		args, goal string
		steps      []string
		done       int
		err        string
	}{
		{`{"goal":"ship","steps":["read","change","test"]}`, "ship", []string{"read", "change", "test"}, 0, ""},
		{`{"steps":[" a ","","  ","b"]}`, "", []string{"a", "b"}, 0, ""},
		{`{"steps":["a","b","c"],"done":2}`, "", []string{"a", "b", "c"}, 2, ""},
		{`{"steps":["a","b"],"done":2}`, "", []string{"a", "b"}, 2, ""},
		{`{"steps":["a","b"],"done":3}`, "", nil, 0, "done must be between 0 and the number of steps (2), not 3"},
		{`{"steps":["a","b"],"done":-1}`, "", nil, 0, "done must be between 0 and the number of steps (2), not -1"},
		{`{"steps":["a"],"done":"all"}`, "", nil, 0, `"done" must be an integer`},
		{`{"steps":[]}`, "", nil, 0, "steps must hold at least one non-empty step"},
		{`{"steps":["", " "]}`, "", nil, 0, "at least one non-empty step"},
		{`{"goal":"x"}`, "", nil, 0, `missing required field "steps"`},
		{`{"steps":"do it"}`, "", nil, 0, `"steps" must be an array of strings`},
		{`{"steps":[1,2]}`, "", nil, 0, `"steps" must be an array of strings`},
	} {
		p, err := ParsePlan(tc.args)
		t.Run(tc.args, func(t *testing.T) { checkErr(t, err, tc.err) })
		if p.Goal != tc.goal || !slices.Equal(p.Steps, tc.steps) || p.Done != tc.done {
			t.Errorf("ParsePlan(%s) = %+v; want %q, %q, done %d", tc.args, p, tc.goal, tc.steps, tc.done)
		}
	}
}
